"""The full-shape synthetic model's weights (tests/fixtures/bergamot/make.py FULL_SHAPE) stay clear of int16 pair
saturation, so its int8 figures hold on CPUs without VNNI too (tests/oracles/bergamot.py has them per kind).

Without VNNI, ONNX Runtime's and intgemm's u8·s8 kernels add each adjacent pair of products (dims 2i, 2i+1) into an
int16 that saturates (engine.families.bergamot.converter.int8_kernel). The output table's marker and code dims carry
±127 weights and the largest activations by design; side by side with one sign they overflowed, and the saturated
model stopped ending its sentences (162/200 identical to bergamot under emulated AVX2 CPUs)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from engine.families.bergamot.converter.int8_kernel import RiskyPairs
from tests.fixtures.bergamot import make


def _output_pairs(spec: make.Spec) -> RiskyPairs:
    """The output table's risky pairs (its product reads it [E, V]: pairs run along the model's dims)."""
    table = make.random_params(spec)["decoder_Wemb"]
    q = np.clip(np.rint(table * (np.float32(127.0) / np.abs(table).max())), -127, 127).astype(np.int8)
    return RiskyPairs.of(np.ascontiguousarray(q.T))


@pytest.mark.parametrize("pair_safe", [True, False])
def test_no_pair_of_the_output_tables_marker_and_code_dims_can_overflow_int16(pair_safe: bool) -> None:
    spec = dataclasses.replace(make.FULL_SHAPE, pair_safe=pair_safe)
    pairs = _output_pairs(spec)
    marker, code = make.marker_and_code(spec)
    planted = np.concatenate([code, marker])
    on_planted = np.isin(pairs.first, planted) | np.isin(pairs.first + 1, planted)
    if pair_safe:
        assert not on_planted.any()
        assert planted.min() % 2 == 0 and planted.size % 2 == 0  # whole pairs
        assert pairs.first.size < 1e-4 * (spec.dim_emb // 2) * spec.trg_vocab_size  # left: random dims' rare tails
    else:  # the old layout, which this guards against: same-signed ±127 neighbours in every column
        assert np.unique(pairs.column[on_planted]).size == spec.trg_vocab_size


def test_pair_safe_codes_are_balanced_per_pair() -> None:
    """Every target id's code is (+1, -1) or (-1, +1) on each pair: balanced (LayerNorm's mean adds nothing to a
    logit) and never two same-signed weights side by side."""
    _, codes = make.translations(make.FULL_SHAPE)
    pairs = codes.reshape(len(codes), -1, 2)
    assert np.all(pairs.sum(axis=-1) == 0)
    assert len(np.unique(codes[:2000], axis=0)) == 2000  # distinct codes
