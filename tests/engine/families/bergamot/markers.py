"""Markers of the Bergamot tests (kept out of tests/oracles/bergamot.py, which the bench imports without pytest)."""

from __future__ import annotations

import pytest

from tests.oracles.bergamot import int8_kernels_differ

# The tests of int8 agreement with bergamot's own int8 output, the tiny models' and the full-shape one's: run wherever
# ORT and intgemm take alike kernels (measured with VNNI and on emulated CPUs without it: tests/oracles/bergamot.py).
int8_as_measured = pytest.mark.skipif(int8_kernels_differ() is not None, reason=str(int8_kernels_differ()))
