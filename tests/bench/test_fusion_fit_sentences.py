"""bench/fusion_fit.py --sentence-max: a model fitted with the three sentence features names them after the others,
in the order search computes them, and scores them (the split and the features themselves: tests/query/test_kb_sentences.py)."""

from __future__ import annotations

import numpy as np

from agentos_mem.bench import fusion_fit as F
from agentos_mem.query import fusion


def test_a_model_fitted_with_the_sentence_features_scores_them():
    base = np.zeros(len(fusion.FEATURES))
    model = F.model_dict(np.concatenate([base, [5.0, 0.0, 0.0]]), {"tau": 0.0, "side": "none"})
    assert list(model["weights"])[-3:] == list(fusion.SENTENCE_FEATURES)
    assert fusion.uses_sentences(model)
    x = np.hstack([np.zeros((2, len(fusion.FEATURES))), fusion.sentence_features(np.array([0.7, 0.9]))])
    assert np.argmax(fusion.model_scores(x, model)[0]) == 1  # only the sentence feature tells them apart, and it decides
    plain = F.model_dict(base, {"tau": 0.0, "side": "none"})
    assert not fusion.uses_sentences(plain)  # fitted without them: search reads no sentence vectors
