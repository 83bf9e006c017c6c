"""``bench perf --cached-vectors`` (the 100,000 row): the build's vectors composed from word vectors and put in the
workspace's vector cache, so the real rebuild and section embedding find every vector there and embed nothing. Small
sizes, a made-up embedder (no model), nothing timed."""

from __future__ import annotations

import hashlib

import numpy as np

from agentos_mem.bench import perf
from agentos_mem.index.stages import rebuild
from agentos_mem.index.vectors import embed_sections
from agentos_mem.kernel.settings import load_settings
from agentos_mem.storage.embed_cache import open_cache


class HashEmbedder:
    """A vector per text from its hash: the same text, the same vector; counts what it embeds."""

    identity = "hash-test:16"

    def __init__(self):
        self.texts = 0

    def _vec(self, text: str) -> list[float]:
        rng = np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little"))
        v = rng.normal(size=16)
        return (v / np.linalg.norm(v)).tolist()

    def embed_documents(self, texts):
        self.texts += len(texts)
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)


def test_fit_spread_gives_composed_vectors_the_real_ones_deviation_from_their_mean():
    rng = np.random.default_rng(1)
    real = rng.normal(size=(50, 8))
    raw = 0.1 * rng.normal(size=(50, 8)) + 3.0  # crowded round another centre, as plain means of word vectors are
    m_r, m_c, scale = perf.fit_spread(real, raw)
    moved = m_r + scale * (raw - m_c)
    assert np.allclose(moved.mean(0), real.mean(0))
    assert np.isclose(np.linalg.norm(moved - m_r), np.linalg.norm(real - m_r))


def test_word_vectors_are_embedded_once_and_read_back_from_the_pool(tmp_path):
    emb, pool = HashEmbedder(), tmp_path / "words.npz"
    first = perf.word_vectors(emb, ["服务器", "config", "端口"], pool, log=lambda m: None)
    again = perf.word_vectors(emb, ["服务器", "config", "端口", "新词"], pool, log=lambda m: None)
    assert first["embedded"] == 3 and again["embedded"] == 1 and emb.texts == 4
    assert np.allclose(again["vectors"]["config"], first["vectors"]["config"])


def test_a_filled_cache_leaves_the_real_rebuild_and_section_embedding_nothing_to_embed(tmp_path, monkeypatch):
    monkeypatch.setattr(perf, "SPREAD_SAMPLE", 4)  # most texts composed, four of each kind embedded
    home = tmp_path / "home"
    perf.generate(home, 12, 12)
    settings = load_settings(home=home, user="bench", hostname="bench")
    perf.publish_sections(settings, 20)
    texts = perf.texts_to_fill(settings)
    kinds = [k for k, _ in texts.values()]
    assert set(kinds) == {"card", "fact", "section", "sentence"}  # a section's sentences are embedded beside it
    assert kinds.count("card") + kinds.count("fact") == 24 and kinds.count("section") == 20 and kinds.count("sentence") > 20
    n = len(texts)
    emb = HashEmbedder()
    out = perf.fill_vector_cache(settings, emb, texts, pool=tmp_path / "words.npz", log=lambda m: None)
    assert out["filled"] == n and set(out["kinds"]) == {"card", "fact", "section", "sentence"}
    cache = open_cache(settings)
    try:
        vecs = cache.vectors(emb.identity, sorted(texts))
    finally:
        cache.close()
    assert len(vecs) == n and all(np.isclose(np.linalg.norm(v), 1.0, atol=1e-4) for v in vecs.values())
    real = sum(np.allclose(vecs[h], emb._vec(t), atol=1e-6) for h, (_, t) in texts.items())
    assert real == 16  # the sampled texts (four of each kind) keep their own vectors; the rest are composed
    emb.texts = 0
    assert rebuild(settings, embedder=emb)["embedded"] == 0
    done = embed_sections(settings, embedder=emb)
    assert done["embedded"] == done["sentences_embedded"] == 0 and emb.texts == 0
    assert perf.fill_vector_cache(settings, emb, texts, log=lambda m: None)["filled"] == 0
