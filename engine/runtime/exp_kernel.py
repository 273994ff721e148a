"""exp over whole logits rows on onnxruntime's Exp kernel, for greedy's token scores.

Greedy decoding needs each chosen token's log-probability, so every step takes a log-sum-exp over the 65,001-id
vocabulary per row. numpy's float32 exp costs ~1.5–2 ns an element on the 2-core AMD EPYC measured (0.25 ms a row
inside the decode loop, 1.6 ms at batch 8: 30–40 % of the search's own work); ORT's Exp (Eigen's vectorised exp,
accurate to ~1 ulp like numpy's) does the same in a quarter of the time. Only the exp runs here: the sum stays in
numpy, whose pairwise float32 summation keeps the log-sum-exp within ~1e-7 of float64, where ORT's ReduceSum and
its fused (Log)Softmax lose up to 5e-6 on flat distributions (measured).

The session runs on the calling thread (one intra-op thread, no spinning): a second thread pool beside the
decoder's would have to be woken every step, which is what made the bundle's TopK scorer slower than numpy here.
Its one-node graph is written as ONNX protobuf bytes (engine.runtime.onnx_protobuf): the runtime does not ship the
onnx package.
"""

from __future__ import annotations

import threading

import numpy as np

from engine.runtime.onnx_protobuf import FLOAT, field, model, node, value_info
from engine.runtime.sessions import inference_session, session_options

_OPSET = 13
_IR_VERSION = 7  # what onnxruntime ≥ 1.20 reads; Exp has not changed since opset 13


def exp_model() -> bytes:
    """A ModelProto whose graph is y = Exp(x) for float x [rows, vocab]."""
    dims = ("rows", "vocab")
    graph = field(1, node("Exp", ["x"], ["y"])) + field(2, "vocab_exp") + field(11, value_info("x", FLOAT, dims))
    graph += field(12, value_info("y", FLOAT, dims))
    return model(graph, _IR_VERSION, {"": _OPSET})


class ExpKernel:
    """exp of C-contiguous float32 [rows, vocab] arrays on ORT's CPU Exp kernel, through bindings kept by the caller.

    A call into ORT right after a decoder step (which streams the model's weights through the caches) costs ~0.1 ms
    before any work, twice that with a fresh IOBinding per call: `bind` once and `run` the binding every step while
    the arrays stay. The session may run concurrently; each caller keeps its own binding."""

    def __init__(self) -> None:
        options = session_options(threads=1, spinning=False)
        self._session = inference_session(exp_model(), options)

    def bind(self, x: np.ndarray, out: np.ndarray) -> ExpBinding:
        """A binding that writes exp(x) into `out` (may be `x` itself: Exp is element-wise) on every `run`."""
        return ExpBinding(self._session, x, out)

    def exp(self, x: np.ndarray, out: np.ndarray) -> np.ndarray:
        """out[...] = exp(x), once."""
        self.bind(x, out).run()
        return out


class ExpBinding:
    """x and out bound to the session (their memory is read and written in place; both are kept alive here)."""

    def __init__(self, session, x: np.ndarray, out: np.ndarray) -> None:
        for a in (x, out):
            if a.dtype != np.float32 or a.ndim != 2 or not a.flags.c_contiguous:
                raise ValueError(f"exp takes C-contiguous float32 [rows, vocab] arrays, not {a.dtype}{a.shape}")
        if x.shape != out.shape or not out.flags.writeable:
            raise ValueError(f"exp writes a writable {x.shape} array, not {out.shape}")
        self.key = (x.ctypes.data, out.ctypes.data, x.shape)
        self._arrays = (x, out)
        self._session = session
        io = session.io_binding()
        io.bind_cpu_input("x", x)
        io.bind_output("y", "cpu", 0, np.float32, list(out.shape), out.ctypes.data)
        self._io = io

    def matches(self, x: np.ndarray, out: np.ndarray) -> bool:
        return self.key == (x.ctypes.data, out.ctypes.data, x.shape)

    def run(self) -> None:
        self._session.run_with_iobinding(self._io)


_shared: ExpKernel | None = None
_failed = False
_lock = threading.Lock()


def shared_kernel() -> ExpKernel | None:
    """The process's ExpKernel, made on first use; None where onnxruntime cannot make it (numpy's exp then)."""
    global _shared, _failed
    if _shared is None and not _failed:
        with _lock:
            if _shared is None and not _failed:
                try:
                    _shared = ExpKernel()
                except Exception:  # an unusual onnxruntime build: the scores are still exact with numpy
                    _failed = True
    return _shared
