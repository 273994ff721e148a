"""Markers of the Bergamot tests (kept out of tests/oracles/bergamot.py, which the bench imports without pytest)."""

from __future__ import annotations

import pytest

from tests.oracles.bergamot import (
    INT8_FULL_SHAPE_BUILD_CHECK_SATURATED,
    INT8_FULL_SHAPE_SATURATED,
    int8_kernels_differ,
    int8_kernels_saturate,
)

# The tests of int8 agreement with bergamot's own int8 output on the tiny models: run wherever ORT and intgemm take
# alike kernels (measured with VNNI and on emulated CPUs without it: tests/oracles/bergamot.py).
int8_as_measured = pytest.mark.skipif(int8_kernels_differ() is not None, reason=str(int8_kernels_differ()))

# The full-shape model's INT8 figures: where the kernels do not saturate (saturated, that synthetic model stops
# ending its sentences, and its long tails are near-ties).
_SATURATED = "no VNNI: the int8 kernels saturate int16 pair sums, which breaks the synthetic full-shape model"
_EMULATED = "under emulated AVX2 and AVX-512BW CPUs"
_FULL_SHAPE = int8_kernels_differ() or (
    f"{_SATURATED}: {INT8_FULL_SHAPE_SATURATED} identical to bergamot {_EMULATED}" if int8_kernels_saturate() else None
)
int8_full_shape_as_measured = pytest.mark.skipif(_FULL_SHAPE is not None, reason=str(_FULL_SHAPE))
int8_full_shape_check_as_measured = pytest.mark.skipif(
    int8_kernels_saturate(),
    reason=f"{_SATURATED}: the build's INT8 check gave {INT8_FULL_SHAPE_BUILD_CHECK_SATURATED} {_EMULATED}",
)
