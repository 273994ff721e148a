"""int8_kernel: the saturating product is vpmaddubsw's arithmetic pair by pair (checked against a brute-force
computation of every pair), the probe tells ORT's kernel, and under an emulated CPU without VNNI (tests/tools/
cpuid_mask) ORT's INT8 graphs give the saturating imitation's tokens, which the exact imitation does not."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from engine.families.bergamot.converter.int8_kernel import RiskyPairs, product, saturates
from tests.oracles.bergamot import int8_kernels_saturate
from tests.tools import cpuid_mask

pytest.importorskip("onnx")  # the probe's graph is written with it


def pairwise(a_q: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Every adjacent pair's sum of (a + 127)·w clamped to int16, summed, less 127·Σw (K padded to even)."""
    a = np.concatenate([a_q, np.zeros((a_q.shape[0], a_q.shape[1] % 2))], axis=1).astype(np.int64) + 127
    w = np.concatenate([q, np.zeros((q.shape[0] % 2, q.shape[1]))]).astype(np.int64)
    total = np.zeros((a.shape[0], w.shape[1]), np.int64)
    for k in range(0, a.shape[1], 2):
        total += np.clip(a[:, k, None] * w[k] + a[:, k + 1, None] * w[k + 1], -32768, 32767)
    return total - 127 * w.sum(axis=0)


@pytest.mark.parametrize("depth", [64, 33])
def test_the_saturating_product_is_vpmaddubsws_arithmetic(depth: int) -> None:
    rng = np.random.default_rng(depth)
    a_q = rng.integers(-127, 128, (5, depth)).astype(np.float32)
    q = rng.integers(-127, 128, (depth, 40)).astype(np.int8)
    exact = a_q.astype(np.int64) @ q.astype(np.int64)
    saturated = pairwise(a_q, q)
    assert (saturated != exact).any()  # these weights overflow int16 pairs
    np.testing.assert_array_equal(product(a_q, q, saturate=True), saturated)
    np.testing.assert_array_equal(product(a_q, q, saturate=False), exact)


def test_small_weights_never_saturate_and_columns_keep_their_pairs() -> None:
    """Pairs whose positive (or negative) weights sum to at most 129 cannot pass int16 with uint8 activations; a
    column subset keeps exactly its columns' risky pairs, renumbered."""
    rng = np.random.default_rng(1)
    small = rng.integers(-64, 65, (32, 20)).astype(np.int8)
    assert RiskyPairs.of(small).first.size == 0
    q = rng.integers(-127, 128, (32, 20)).astype(np.int8)
    columns = np.array([2, 5, 11, 19])
    a_q = rng.integers(-127, 128, (3, 32)).astype(np.float32)
    risky = RiskyPairs.of(q).of_columns(columns, q.shape[1])
    np.testing.assert_array_equal(product(a_q, q[:, columns], saturate=True, risky=risky), pairwise(a_q, q[:, columns]))


def test_the_probe_tells_this_cpus_kernel() -> None:
    assert saturates() == int8_kernels_saturate()


shim = cpuid_mask.unavailable_reason()


@pytest.mark.skipif(shim is not None, reason=str(shim))
def test_under_an_emulated_avx2_cpu_ort_takes_the_saturating_kernel() -> None:
    code = "from engine.families.bergamot.converter.int8_kernel import saturates; print(saturates())"
    command = [sys.executable, "-m", "tests.tools.cpuid_mask", "avx2", "--", sys.executable, "-c", code]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=cpuid_mask.ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


@pytest.mark.skipif(shim is not None, reason=str(shim))
def test_under_an_emulated_avx2_cpu_ort_int8_is_the_saturating_imitation() -> None:
    """test_model_oracle's check of ORT's INT8 tokens against the reference's int8 imitation, run under the shim:
    it passes with the imitation of the kernel ORT takes there (the exact one gave 16 of 30)."""
    pytest.importorskip("sentencepiece")
    node = "tests/engine/families/bergamot/test_model_oracle.py::test_int8_is_the_references_int8_arithmetic"
    pytest_command = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", node]
    command = [sys.executable, "-m", "tests.tools.cpuid_mask", "avx2", "--", *pytest_command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cpuid_mask.ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 passed" in done.stdout
