"""Token log-probabilities and hypothesis scores equal transformers' on the fixture in FP32 (tolerance TOL = 1e-4
absolute): greedy against compute_transition_scores(normalize_logits=True), beam search (the TopK scorer path and
the exact full-vocabulary path) against compute_transition_scores with beam_indices and sequences_scores."""

from __future__ import annotations

import numpy as np
import pytest

from engine.translator import Translator
from tests.engine.search_oracle import TOL, hf_scored, ours_steps, search_outputs
from tests.engine.test_decoding import _sources, load_hf

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def hf(checkpoint_dir):
    return load_hf(checkpoint_dir)


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


@pytest.fixture(scope="module")
def exact(bundle_dir):
    tr = Translator(bundle_dir, precision="fp32", threads=1)
    tr._model.scorer = lambda params: None  # the full-vocabulary path
    return tr


def _check(hf, tr, texts, beams, max_length):
    for text in texts:
        ids = hf[0](text).input_ids
        (out,) = search_outputs(tr, [ids], beams, max_length)
        ((tokens, steps, ended, score),) = hf_scored(hf, [text], beams, max_length)
        assert list(out.best.tokens) == tokens, text
        assert (out.best.eos_logprob is not None) == ended
        assert np.allclose(ours_steps(out.best), steps, atol=TOL, rtol=0), text
        if score is not None:
            assert abs(out.best.score - score) <= TOL, text
        else:  # greedy: the mean over the generated steps
            assert abs(out.best.score - float(np.mean(steps))) <= TOL


@pytest.mark.parametrize("max_length", [512, 12])
def test_greedy_scores_match_transition_scores(hf, fp32, max_length):
    _check(hf, fp32, _sources()[::3], 1, max_length)


@pytest.mark.parametrize("max_length", [512, 12])
def test_beam_scores_match_generate(hf, fp32, max_length):
    _check(hf, fp32, _sources()[::3], 4, max_length)


def test_beam_scores_on_the_exact_path_match_generate(hf, exact):
    _check(hf, exact, _sources()[::6], 4, 512)


def test_scores_are_real_log_probabilities(fp32):
    """Not zeros or copies: negative and varied (the fixture is confident on its corpus: most are near 0)."""
    rows = fp32.tokenizer.encode_batch(_sources()[:10])
    outs = search_outputs(fp32, rows, 4)
    lps = [x for o in outs for x in o.best.logprobs]
    assert all(x <= 1e-6 for x in lps)
    assert len({round(x, 7) for x in lps}) > len(lps) // 2
    assert min(lps) < -0.1


@pytest.mark.parametrize("beams", [1, 4])
def test_batched_scores_equal_each_row_alone(fp32, beams):
    texts = _sources()[:6]
    rows = fp32.tokenizer.encode_batch(texts)
    together = search_outputs(fp32, rows, beams)
    for row, out in zip(rows, together):
        (alone,) = search_outputs(fp32, [row], beams)
        assert alone.best.tokens == out.best.tokens
        assert np.allclose(alone.best.logprobs, out.best.logprobs, atol=TOL)
        assert abs(alone.best.score - out.best.score) <= TOL


def test_best_follows_the_running_hypothesis(fp32):
    """StepUpdate.best is the best running hypothesis each step: it grows, and ends as the result."""
    (row,) = fp32.tokenizer.encode_batch(_sources()[:1])
    params = fp32.params(4)
    updates = list(fp32._search([row], params, np.array([512])))
    lengths = [len(u.best[0]) for u in updates[:-1] if not u.done[0]]
    assert lengths == sorted(lengths) and lengths[-1] > 0
    assert updates[-1].best[0] == updates[-1].tokens[0]
