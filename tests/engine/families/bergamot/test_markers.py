"""Which CPUs the int8 agreement tests run on (tests/oracles/bergamot.py): wherever ORT and intgemm take alike
kernels, both exact (AVX-512 VNNI) or both saturating (no VNNI: measured on emulated AVX2 and AVX-512BW CPUs), and
not where only ORT has VNNI (AVX-VNNI without AVX-512 VNNI) or the flags cannot be read."""

from __future__ import annotations

import platform
from pathlib import Path

import pytest

from tests.oracles import bergamot

ZEN4 = {"avx2", "avx512f", "avx512bw", "avx512_vnni"}
ZEN3 = {"avx2", "fma"}
SKYLAKE_X = {"avx2", "avx512f", "avx512bw"}
ALDER_LAKE = {"avx2", "avx_vnni"}


CASES = [(ZEN4, False, False), (ZEN3, False, True), (SKYLAKE_X, False, True), (ALDER_LAKE, True, False)]


@pytest.mark.parametrize(
    ("flags", "differ", "saturate"),
    [*CASES, (None, True, False)],
    ids=["zen4", "zen3", "skylake-x", "alder-lake", "unknown"],
)
def test_the_agreement_runs_where_both_engines_take_alike_kernels(
    monkeypatch: pytest.MonkeyPatch, flags: set[str] | None, differ: bool, saturate: bool
) -> None:
    monkeypatch.setattr(bergamot, "cpu_flags", lambda: flags)
    assert (bergamot.int8_kernels_differ() is not None) == differ
    assert bergamot.int8_kernels_saturate() == saturate


def test_the_flags_are_read_from_this_machine() -> None:
    if not Path("/proc/cpuinfo").exists() or platform.machine() != "x86_64":
        pytest.skip("no /proc/cpuinfo of an x86-64 CPU here")
    flags = bergamot.cpu_flags()
    assert flags is not None and {"fpu", "sse2"} <= flags
