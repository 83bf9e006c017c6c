"""The optional chat model client, over any OpenAI-compatible ``/v1/chat/completions``.

The model's output is JSON, repaired where that is safe (code fences, prose around the JSON, trailing
commas). Any failure raises ``LLMError``: the caller (a Prefect task with retries) tries again, and every
model path has a deterministic fallback.

With a JSON schema the client asks for structured output the way the server understands it, trying the
forms from the strictest down and remembering the one that worked (per endpoint, for the process):
``{"type": "json_schema", ...}`` (OpenAI, vLLM, Ollama, llama.cpp's own ``llama-server``), then
``{"type": "json_object", "schema": ...}`` (llama-cpp-python's server: a grammar built from the schema), then
plain ``json_object`` (valid JSON, the schema only in the prompt). A server that refuses a form answers an error naming
``response_format``; that is not a failure of the request, the next form is tried at once. The form a server took is
kept in the workspace (``client_for``: ``agent-local/runtime/llm-forms.json``, by endpoint), so a nightly or a CLI
command in a new process asks in the accepted form at once instead of being refused first (llama-cpp-python's server,
what ``make llm`` starts, answers ``json_schema`` with an HTTP 500 and a traceback in its log); a remembered form the
server refuses later (another server on the same address) starts the list again from the strictest.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from agentos_mem.kernel.files import atomic_write

# Structured-output forms, strictest first (see the module's docstring).
FORMS = ("json_schema", "json_object_schema", "json_object")
# Which form each endpoint accepted: a batch of many requests finds it once.
_ACCEPTED: dict[str, str] = {}
FORMS_FILE = "llm-forms.json"


class LLMError(Exception):
    """The chat model could not be reached or its answer could not be used."""


def repair_json(text: str):
    """Parse the model's JSON, tolerating fences, prose around it and trailing commas."""
    s = text.strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", s, re.S)
    if fence:
        s = fence.group(1).strip()
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        pass
    start = min((i for i in (s.find("{"), s.find("[")) if i >= 0), default=-1)
    end = max(s.rfind("}"), s.rfind("]"))
    if start < 0 or end <= start:
        raise LLMError("model answer holds no JSON")
    s = re.sub(r",\s*([}\]])", r"\1", s[start : end + 1])
    try:
        return json.loads(s)
    except json.JSONDecodeError as e:
        raise LLMError(f"model answer is not valid JSON: {e.msg}") from e


@dataclass
class Usage:
    """What a client has asked so far: requests, tokens as the server counted them, seconds waited."""

    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    forms: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "seconds": round(self.seconds, 2), "forms": dict(self.forms)}


def response_format(form: str, schema: dict | None, name: str = "answer") -> dict:
    """The ``response_format`` body of one structured-output form."""
    if schema is None or form == "json_object":
        return {"type": "json_object"}
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
    return {"type": "json_object", "schema": schema}


def refuses_form(r: httpx.Response) -> bool:
    """The server refused the request's ``response_format``, not the request: an error whose body names the field
    (OpenAI and vLLM answer 400, FastAPI servers 422, llama-cpp-python's server a 500 with its validation error for
    ``json_schema``). Any other error (a prompt longer than the context, an overloaded server) is the request's own:
    it fails, and never drops the schema for the requests after it."""
    return r.status_code >= 400 and any(w in r.text for w in ("response_format", "json_schema"))


def _read_forms(path: Path | None) -> dict[str, str]:
    """The forms a workspace's servers took, {endpoint: form}; a missing or unreadable file is an empty memory (it is a
    cache: the next answer writes it again)."""
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and v in FORMS} if isinstance(data, dict) else {}


class ChatClient:
    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0, *,
                 forms_file: Path | None = None):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = timeout
        self.usage = Usage()
        self.forms_file = Path(forms_file) if forms_file else None
        remembered = _read_forms(self.forms_file).get(self.url)
        if remembered and self.url not in _ACCEPTED:
            _ACCEPTED[self.url] = remembered

    def _accepted(self, form: str) -> None:
        """Remember the schema form this endpoint answered, for this process and (with ``forms_file``) the next."""
        if _ACCEPTED.get(self.url) == form and self.forms_file is None:
            return
        _ACCEPTED[self.url] = form
        if self.forms_file is not None:
            forms = _read_forms(self.forms_file)
            if forms.get(self.url) != form:
                forms[self.url] = form
                try:
                    self.forms_file.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write(self.forms_file, json.dumps(forms, indent=1, sort_keys=True) + "\n")
                except OSError:  # a cache that cannot be written costs one refused request next time, never the answer
                    pass

    def complete_json(self, system: str, user: str, *, schema: dict | None = None, examples: list[tuple[str, str]] = (),
                      max_tokens: int | None = None):
        """The model's JSON answer to ``user`` after ``system`` and the worked ``examples`` (user, assistant pairs,
        sent as earlier turns: a fixed prefix a server with a prompt cache reads once)."""
        messages = [{"role": "system", "content": system}]
        for q, a in examples:
            messages += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
        messages.append({"role": "user", "content": user})
        body = {"model": self.model, "temperature": 0, "messages": messages}
        if max_tokens:
            body["max_tokens"] = max_tokens
        forms = FORMS if schema is not None else ("json_object",)
        known = _ACCEPTED.get(self.url)
        if schema is not None and known in forms:  # the accepted form first, then the list from the strictest again
            forms = (known,) + tuple(f for f in forms if f != known)
        for i, form in enumerate(forms):
            r = self._post({**body, "response_format": response_format(form, schema)})
            if i + 1 < len(forms) and refuses_form(r):
                continue  # this server does not take this form: the next one, at once
            try:
                r.raise_for_status()
                data = r.json()
                content = data["choices"][0]["message"]["content"]
            except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as e:
                raise LLMError(f"chat endpoint {self.url} failed: {e}") from e
            if schema is not None:  # only an answer to a schema tells which schema form the server takes: a plain
                self._accepted(form)  # json_object request (memory, classify) must not drop the grammar of the next
            self.usage.forms[form] = self.usage.forms.get(form, 0) + 1
            used = data.get("usage") if isinstance(data, dict) else None
            if isinstance(used, dict):
                self.usage.prompt_tokens += int(used.get("prompt_tokens") or 0)
                self.usage.completion_tokens += int(used.get("completion_tokens") or 0)
            return repair_json(content or "")
        raise LLMError(f"chat endpoint {self.url} refused every response format")  # pragma: no cover - the loop returns or raises

    @classmethod
    def for_settings(cls, settings) -> ChatClient:
        """The workspace's chat client (``settings.llm_*``), remembering the accepted form in its runtime folder."""
        from agentos_mem.kernel.workspace import Workspace  # the workspace's layout, only where a client is made for one

        return cls(settings.llm_base_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s,
                   forms_file=Workspace(settings.home).runtime / FORMS_FILE)

    def _post(self, body: dict) -> httpx.Response:
        t0 = time.perf_counter()
        try:
            return httpx.post(self.url, json=body, headers=self.headers, timeout=self.timeout)
        except httpx.HTTPError as e:
            raise LLMError(f"chat endpoint {self.url} failed: {e}") from e
        finally:
            self.usage.requests += 1
            self.usage.seconds += time.perf_counter() - t0
