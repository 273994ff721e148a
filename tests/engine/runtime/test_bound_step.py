"""engine.runtime.bound_step: a step bound once runs the graph over the caller's buffers, natively where it can."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from engine.runtime.bound_step import Binder


def _session() -> ort.InferenceSession:
    """y = x + bias, z = x * 2 over [rows, 4] float."""
    nodes = [
        helper.make_node("Add", ["x", "bias"], ["y"]),
        helper.make_node("Mul", ["x", "two"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", 4]),
            helper.make_tensor_value_info("bias", TensorProto.FLOAT, [4]),
        ],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", 4]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT, ["rows", 4]),
        ],
        [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_the_installed_onnxruntime_takes_the_native_path() -> None:
    # the pinned release must keep the fast path: a release that drops its attributes falls back silently,
    # and this is where that gets noticed
    assert Binder(_session()).fast


@pytest.mark.parametrize("fast", [True, False])
def test_a_bound_step_reads_the_inputs_written_in_place_and_writes_its_outputs(fast: bool) -> None:
    binder = Binder(_session())
    binder.fast = binder.fast and fast  # False: the public API path
    x = np.zeros((3, 4), np.float32)
    bias = np.arange(4, dtype=np.float32)
    y, z = np.empty((3, 4), np.float32), np.empty((3, 4), np.float32)
    shared = binder.value(bias)  # one wrap, two bindings
    steps = [binder.step([("x", x), ("bias", shared)], [("y", y), ("z", z)]) for _ in range(2)]
    for k, step in enumerate([*steps, *steps]):
        x[:] = np.float32(k) + np.arange(12, dtype=np.float32).reshape(3, 4)
        step.run()
        np.testing.assert_array_equal(y, x + bias)
        np.testing.assert_array_equal(z, x * 2)


def test_a_step_takes_run_options() -> None:
    binder = Binder(_session())
    x, bias = np.ones((1, 4), np.float32), np.ones(4, np.float32)
    y, z = np.empty((1, 4), np.float32), np.empty((1, 4), np.float32)
    options = ort.RunOptions()
    options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
    binder.step([("x", x), ("bias", bias)], [("y", y), ("z", z)]).run(options)
    np.testing.assert_array_equal(y, np.full((1, 4), 2, np.float32))
