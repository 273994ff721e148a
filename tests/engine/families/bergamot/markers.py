"""Markers of the Bergamot tests (kept out of tests/oracles/bergamot.py, which the bench imports without pytest)."""

from __future__ import annotations

import pytest

from tests.oracles.bergamot import int8_kernels_as_measured

# The tests of int8 agreement with bergamot's own int8 output: run where the figure was measured (VNNI CPUs).
int8_as_measured = pytest.mark.skipif(int8_kernels_as_measured() is not None, reason=str(int8_kernels_as_measured()))
