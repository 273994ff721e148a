"""n-best: `params.num_return` = k ≤ beams gives k hypotheses, best first, token for token and score for score
what generate(num_return_sequences=k) returns (FP32 fixture, TOL absolute)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.pipeline.translator import Translator
from tests.engine.search.test_decoding import _sources, load_hf
from tests.engine.search_oracle import TOL, hf_scored, ours_steps, search_outputs

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def hf(checkpoint_dir):
    return load_hf(checkpoint_dir)


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


@pytest.mark.parametrize(("beams", "k"), [(4, 4), (4, 2), (5, 3)])
def test_nbest_matches_num_return_sequences(hf, fp32, beams, k):
    distinct = 0
    for text in _sources()[::4]:
        ids = hf[0](text).input_ids
        (out,) = search_outputs(fp32, [ids], beams, num_return=k)
        expected = hf_scored(hf, [text], beams, num_return_sequences=k)
        assert len(out.nbest) == k
        assert out.nbest[0] is out.best
        for hyp, (tokens, steps, _, score) in zip(out.nbest, expected):
            assert list(hyp.tokens) == tokens, text
            assert np.allclose(ours_steps(hyp), steps, atol=TOL, rtol=0)
            assert abs(hyp.score - score) <= TOL
        scores = [h.score for h in out.nbest]
        assert scores == sorted(scores, reverse=True)
        distinct += len({h.tokens for h in out.nbest}) == k
    assert distinct >= 5  # real alternatives, not copies of the best


def test_one_return_gives_only_the_best(fp32):
    rows = fp32.tokenizer.encode_batch(_sources()[:3])
    for out in search_outputs(fp32, rows, 4):
        assert out.nbest == (out.best,)
