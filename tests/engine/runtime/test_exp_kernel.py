"""engine.runtime.exp_kernel's hand-written ONNX graph is a valid model, and its exp is numpy's (to float32 rounding) in
place, through a kept binding and after the bound array changes; engine.search.scores.ChosenLogprobs gives the
chosen tokens' log-probabilities within 1e-6 of a float64 log-softmax on both of its paths, with and without the
kernel, for peaked, flat, banned and out-of-range rows."""

from __future__ import annotations

import numpy as np
import pytest

from engine.runtime.exp_kernel import ExpKernel, exp_model, shared_kernel
from engine.search.scores import DIRECT_RANGE, KERNEL_MIN_SCORES, ChosenLogprobs

V = 65001


def _reference(scores: np.ndarray, tokens: np.ndarray) -> np.ndarray:
    x = scores.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(x - m).sum(axis=-1))
    return x[np.arange(len(tokens)), tokens] - lse


def _rows(rng, n: int, scale: float, shift: float) -> np.ndarray:
    x = (rng.standard_normal((n, V)) * scale + shift).astype(np.float32)
    x[:, V - 1] = -np.inf  # a banned token, as the logits processors leave it
    return x


def test_the_graph_is_a_valid_onnx_model():
    onnx = pytest.importorskip("onnx")
    model = onnx.load_from_string(exp_model())
    onnx.checker.check_model(model, full_check=True)
    (node,) = model.graph.node
    assert node.op_type == "Exp" and list(node.input) == ["x"] and list(node.output) == ["y"]
    assert [i.name for i in model.graph.input] == ["x"] and [o.name for o in model.graph.output] == ["y"]
    dims = model.graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_param for d in dims] == ["rows", "vocab"]


def test_exp_matches_numpy_in_place_and_through_a_kept_binding():
    kernel = ExpKernel()
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 1000)) * 12).astype(np.float32)
    x[0, :3] = [-np.inf, 0.0, -200.0]  # -200 underflows to 0 in float32
    want = np.exp(x.astype(np.float64)).astype(np.float32)
    out = np.empty_like(x)
    kernel.exp(x, out)
    assert np.allclose(out, want, rtol=3e-7, atol=1e-38) and out[0, 0] == 0.0 and out[0, 1] == 1.0
    y = x.copy()
    binding = kernel.bind(y, y)  # in place
    binding.run()
    assert np.allclose(y, want, rtol=3e-7, atol=1e-38)
    y[...] = 1.0  # the bound memory is read afresh on every run
    binding.run()
    assert np.allclose(y, np.e, rtol=3e-7) and binding.matches(y, y) and not binding.matches(x, y)


def test_exp_refuses_what_it_cannot_bind():
    kernel = ExpKernel()
    x = np.zeros((2, 8), dtype=np.float32)
    with pytest.raises(ValueError):
        kernel.exp(x.astype(np.float64), np.empty((2, 8)))
    with pytest.raises(ValueError):
        kernel.exp(x[:, ::2], np.empty((2, 4), dtype=np.float32))
    with pytest.raises(ValueError):
        kernel.exp(x, np.empty((2, 7), dtype=np.float32))
    with pytest.raises(ValueError):
        kernel.exp(x[0], np.empty(8, dtype=np.float32))


def test_the_shared_kernel_is_made_once():
    assert shared_kernel() is shared_kernel() is not None


@pytest.mark.parametrize("kernel", [True, None], ids=["ort", "numpy"])
@pytest.mark.parametrize(
    "scale, shift",
    [(3.0, 0.0), (8.0, 5.0), (0.05, 0.0), (1.0, -30.0), (4.0, 25.0), (1.0, 80.0), (1.0, -60.0), (30.0, 0.0)],
)
def test_chosen_logprobs_match_a_float64_log_softmax(kernel, scale, shift):
    """(1, 80) and (1, -60) put the max outside DIRECT_RANGE (the shifted path); (0.05, 0) is a flat row (the sum
    of 65,001 near-equal terms); (30, 0) has terms underflowing float32."""
    rng = np.random.default_rng(int(scale * 100 + shift))
    lp_of = ChosenLogprobs(kernel)
    for n in (1, 8):
        scores = _rows(rng, n, scale, shift)
        tokens = np.argmax(scores, axis=-1)
        want = _reference(scores, tokens)
        got = lp_of(scores.copy(), tokens)
        assert got.dtype == np.float64 and got.shape == (n,)
        assert np.abs(got - want).max() <= 1e-6


def test_chosen_logprobs_paths_and_buffers():
    rng = np.random.default_rng(5)
    lp_of = ChosenLogprobs()
    scores = _rows(rng, 4, 3.0, 0.0)
    tokens = np.argmax(scores, axis=-1)
    want = _reference(scores, tokens)
    work = scores.copy()
    assert np.abs(lp_of(work, tokens) - want).max() <= 1e-6
    assert not np.array_equal(work[:, :-1], scores[:, :-1])  # in place: the processed scores are scratch
    binding = lp_of._binding
    assert np.abs(lp_of(scores.copy()[:2], tokens[:2]) - want[:2]).max() <= 1e-6  # a new array: rebound
    assert lp_of._binding is not binding
    frozen = scores.copy()
    frozen.flags.writeable = False  # read-only (a replayed step): exp into the search's buffer instead
    assert np.abs(lp_of(frozen, tokens) - want).max() <= 1e-6
    assert np.array_equal(frozen, scores) and lp_of._buf is not None
    forced = np.full((1, V), -np.inf, dtype=np.float32)  # forced eos: one allowed token at 0
    forced[0, 0] = 0.0
    assert lp_of(forced, np.array([0]))[0] == 0.0
    outside = scores + np.float32(DIRECT_RANGE[1] + 10)
    assert np.abs(lp_of(outside.copy(), tokens) - _reference(outside, tokens)).max() <= 1e-6


def test_small_vocabularies_skip_the_kernel():
    class Counting:
        calls = 0

        def bind(self, x, out):
            Counting.calls += 1
            return shared_kernel().bind(x, out)

    lp_of = ChosenLogprobs(Counting())
    rng = np.random.default_rng(9)
    small = (rng.standard_normal((2, 1882)) * 3).astype(np.float32)
    tokens = np.argmax(small, axis=-1)
    assert np.abs(lp_of(small.copy(), tokens) - _reference(small, tokens)).max() <= 1e-6
    assert Counting.calls == 0 and small.size < KERNEL_MIN_SCORES
    big = _rows(rng, 1, 3.0, 0.0)
    tokens = np.argmax(big, axis=-1)
    assert np.abs(lp_of(big.copy(), tokens) - _reference(big, tokens)).max() <= 1e-6
    assert Counting.calls == 1


def test_renormalised_scores_are_read_as_they_are():
    scores = np.log(np.full((2, 4), 0.25, dtype=np.float32))
    got = ChosenLogprobs()(scores, np.array([1, 3]), normalized=True)
    assert got.dtype == np.float64 and np.allclose(got, np.log(0.25))


def test_the_shared_kernel_is_asked_for_only_when_scores_reach_its_size(monkeypatch):
    """A shortlisted Bergamot search never reaches KERNEL_MIN_SCORES: making the kernel's session (1-3 ms) would
    fall in a user's first translation for nothing."""
    from engine.search import scores as scores_module

    made = []

    def counting():
        made.append(1)
        return shared_kernel()

    monkeypatch.setattr(scores_module, "shared_kernel", counting)
    rng = np.random.default_rng(3)
    lp_of = ChosenLogprobs()
    small = (rng.standard_normal((2, 1882)) * 3).astype(np.float32)
    tokens = np.argmax(small, axis=-1)
    assert np.abs(lp_of(small.copy(), tokens) - _reference(small, tokens)).max() <= 1e-6
    assert not made
    big = _rows(rng, 1, 3.0, 0.0)
    tokens = np.argmax(big, axis=-1)
    assert np.abs(lp_of(big.copy(), tokens) - _reference(big, tokens)).max() <= 1e-6
    assert np.abs(lp_of(big.copy(), tokens) - _reference(big, tokens)).max() <= 1e-6
    assert len(made) == 1 and lp_of.kernel is shared_kernel() and lp_of._binding is not None
