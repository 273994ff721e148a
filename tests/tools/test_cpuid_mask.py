"""The CPUID-masking shim (tests/tools/cpuid_mask.c) really changes the kernels a library picks: ONNX Runtime's u8·s8
product of 254s by 127s, whose adjacent pairs overflow int16, comes out saturated under both masked kinds, as on a
CPU without VNNI. And the shim stays out of the way of everything else: other SIGSEGVs still reach Python's
faulthandler (which the shim records instead of letting it replace the shim's handler), an unknown kind stops the
process at once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.oracles.bergamot import int8_kernels_saturate
from tests.tools import cpuid_mask

pytest.importorskip("onnx")  # the probe graph is written with it (the build extra)

reason = cpuid_mask.unavailable_reason()
pytestmark = pytest.mark.skipif(reason is not None, reason=str(reason))

DEPTH = 64
EXACT = 127 * 127 * DEPTH  # (254 − 127) · 127 summed over k
SATURATED = DEPTH // 2 * 32767 - 127 * 127 * DEPTH  # every pair 254·127 + 254·127 clamped to 32767, less 127·Σb

PROBE = f"""
import numpy as np, onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
inits = [numpy_helper.from_array(np.full(({DEPTH}, 8), 127, np.int8), "b"),
         numpy_helper.from_array(np.array(1.0, np.float32), "sa"),
         numpy_helper.from_array(np.array(1.0, np.float32), "sb"),
         numpy_helper.from_array(np.array(127, np.uint8), "za")]
node = helper.make_node("MatMulIntegerToFloat", ["a", "b", "sa", "sb", "za"], ["y"], domain="com.microsoft")
graph = helper.make_graph([node], "probe", [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, {DEPTH}])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)])
session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
print(int(session.run(None, {{"a": np.full((1, {DEPTH}), 254, np.uint8)}})[0][0, 0]))
"""


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return cpuid_mask.build(tmp_path_factory.mktemp("cpuid-mask"))


def run(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # -X faulthandler: Python installs its own SIGSEGV handler, as pytest does
    command = [sys.executable, "-X", "faulthandler", "-c", code]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)


def probe(env: dict[str, str] | None = None) -> int:
    done = run(PROBE, env)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


@pytest.mark.parametrize("kind", cpuid_mask.KINDS)
def test_a_masked_kind_takes_the_saturating_int8_kernel(library: Path, kind: str) -> None:
    assert probe(cpuid_mask.environment(kind, library)) == SATURATED


def test_unmasked_the_host_keeps_its_own_kernel(library: Path) -> None:
    """The shim preloaded with no kind changes nothing: the product is what this CPU gives without it (exact with
    VNNI, saturated without), so on a VNNI host the masked result above differs from the unmasked one."""
    unmasked = probe()
    assert unmasked == (SATURATED if int8_kernels_saturate() else EXACT)
    assert probe(cpuid_mask.environment("", library)) == unmasked


def test_other_segfaults_still_reach_pythons_handler(library: Path) -> None:
    done = run("import ctypes; ctypes.string_at(0)", cpuid_mask.environment("avx2", library))
    assert done.returncode == -11
    assert "Fatal Python error: Segmentation fault" in done.stderr


def test_an_unknown_kind_stops_the_process(library: Path) -> None:
    done = run("print('ran')", cpuid_mask.environment("avx10", library))
    assert done.returncode == cpuid_mask.BAD_KIND_EXIT and "ran" not in done.stdout
    assert "QIAO_CPUID_MASK must be avx2 or avx512bw" in done.stderr


def test_the_command_line_runs_a_command_under_a_kind(library: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tests.tools.cpuid_mask", "avx512bw", "--", sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cpuid_mask.ROOT,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) == SATURATED
