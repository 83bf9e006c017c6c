"""bench/fusion_fit.py --sentence-max: what the measurement reads of a section (its sentences, in Chinese and English),
the three features it adds, and that it never writes the served model (search computes no sentence cosines)."""

from __future__ import annotations

import numpy as np
import pytest

from agentos_mem.bench import fusion_fit as F
from agentos_mem.query import fusion


def test_a_section_is_read_as_its_sentences_in_either_language():
    zh = "今年的年会定在三亚举行。预计有三百人参加！报名截止到周五；逾期不再受理报名"
    assert F.sentences_of(zh) == ["今年的年会定在三亚举行。", "预计有三百人参加！", "报名截止到周五；", "逾期不再受理报名"]
    en = "Props are passed down. Events go up.\nUse v-model for two-way binding (see Forms)."
    assert F.sentences_of(en) == ["Props are passed down.", "Events go up.", "Use v-model for two-way binding (see Forms)."]
    assert F.sentences_of("v2.1.0 is out") == ["v2.1.0 is out"]  # a full stop inside a version ends nothing
    assert F.sentences_of("ok") == ["ok"]  # nothing of six characters: the whole text
    assert len(F.sentences_of("这是一句很长的话。" * 40)) == F.SENTENCE_MAX


def test_the_sentence_features_scale_over_the_candidates_and_rank_the_best_first():
    x = F.sentence_features(np.array([0.80, 0.86, 0.83]))
    assert x.shape == (3, len(F.SENTENCE_FEATURES))
    assert np.allclose(x[:, 0], [0.0, 1.0, 0.5])  # min-max over the candidates
    assert np.allclose(x[:, 1], [-0.6, 0.0, -0.3])  # raw distance to the best, x10
    assert np.allclose(x[:, 2], [1 / 3, 1.0, 1 / 2])  # 1 / (1 + rank)


def test_a_model_fitted_with_the_sentence_features_scores_them():
    base = np.zeros(len(fusion.FEATURES))
    model = F.model_dict(np.concatenate([base, [5.0, 0.0, 0.0]]), {"tau": 0.0, "side": "none"})
    assert list(model["weights"])[-3:] == list(F.SENTENCE_FEATURES)
    x = np.hstack([np.zeros((2, len(fusion.FEATURES))), F.sentence_features(np.array([0.7, 0.9]))])
    assert np.argmax(F._model_scores(x, model)) == 1  # only the sentence feature tells them apart, and it decides


def test_the_measurement_never_writes_the_served_model(tmp_path):
    with pytest.raises(SystemExit):
        F.main(["--eval", str(tmp_path), "--work", str(tmp_path), "--sentence-max", "--write-model"])
