"""The optional chat model client, over any OpenAI-compatible ``/v1/chat/completions``.

The model's output is JSON, repaired where that is safe (code fences, prose around the JSON, trailing
commas). Any failure raises ``LLMError``: the caller (a Prefect task with retries) tries again, and every
model path has a deterministic fallback.
"""

from __future__ import annotations

import json
import re

import httpx


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


class ChatClient:
    def __init__(self, base_url: str, model: str, api_key: str | None = None, timeout: float = 60.0):
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = timeout

    def complete_json(self, system: str, user: str):
        body = {"model": self.model, "temperature": 0, "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
                "response_format": {"type": "json_object"}}
        try:
            r = httpx.post(self.url, json=body, headers=self.headers, timeout=self.timeout)
            r.raise_for_status()
            content = r.json()["choices"][0]["message"]["content"]
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as e:
            raise LLMError(f"chat endpoint {self.url} failed: {e}") from e
        return repair_json(content or "")
