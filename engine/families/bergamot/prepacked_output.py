"""The INT8 output layer over one batch's shortlist as a session of its own, its matrix a constant packed once.

Why: the decoder step takes the shortlist's output columns as an input (`output_w`, engine.families.bergamot
.output_table), so ONNX Runtime's MatMulIntegerToFloat packs those int8 columns for its kernel at every step: at the
full-shape model's five-sentence paragraph (3,448 ids × 384) that was 127 µs of a 544 µs step (1 thread, AMD EPYC
Zen 4), most of it the packing. Marian packs its shortlisted matrix once per batch. A constant initializer is what
ORT prepacks, so a long batch over a wide shortlist builds this one-node session with the columns and bias as
constants (`add_external_initializers`: no copy into the model's bytes), and the step, fed a few dummy columns in
their place, hands over its quantised last state (`output_q`) and that quantisation's scale (`output_scale`): the
inputs the in-graph product reads. Same op, same inputs: the logits are the in-graph product's, bit for bit.

Building the session costs ~0.6-1 ms (more where its packed copy is mapped afresh: the model's HeapPolicy keeps
heap pages for it), and its run ~12 µs a step, so `worthwhile` keeps it to batches whose width times their expected
length pays for that; the rest keep the in-graph product. Graphs written before `output_q` existed keep it always.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

from engine.runtime.bound_step import Binder, BoundStep
from engine.runtime.onnx_protobuf import FLOAT, INT8, UINT8, external_tensor, field, model, node, tensor, value_info
from engine.runtime.sessions import inference_session, session_options

OUTPUTS = ("output_q", "output_scale")  # the step's outputs this product reads (converter/graphs.py writes them)
SHIFT = 127  # the activations' zero point (converter/graphs.py `integer_product`)
DUMMY_WIDTH = 8  # columns of the stand-in `output_w` the step multiplies instead (so few that packing them is free)
MIN_WORK = 50_000  # shortlisted ids × the batch's longest source (a stand-in for its steps): see `worthwhile`
_OPSET, _MS_OPSET, _IR_VERSION = 17, 1, 8


def worthwhile(columns: int, source_length: int) -> bool:
    """Whether a batch of `columns` shortlisted ids, decoding about `source_length` steps, gains from packing once.
    Measured with the packed product forced on and off (full-shape model, INT8, 1 thread, AMD EPYC Zen 4, 30
    alternating rounds): the five-sentence paragraph (3,448 ids × 37 tokens: 127,576) 0.92x, three sentences
    (78,336) 0.98x, two (49,440) 0.99x, single sentences (18,816-35,000) 1.03x."""
    return columns * source_length >= MIN_WORK


def graph_bytes(dim: int, columns: int, scale: np.ndarray) -> bytes:
    """ModelProto: logits = MatMulIntegerToFloat(q, w, a_scale, scale, 127, -, b), `w` [dim, columns] int8 and `b`
    [columns] float external initializers, `scale` (the product's one rescale) inline, `a_scale` an input."""
    raw = np.asarray(scale, dtype="<f4").reshape(())
    inputs = ["q", "w", "a_scale", "b_scale", "zero", "", "b"]
    graph = field(1, node("MatMulIntegerToFloat", inputs, ["logits"], "com.microsoft")) + field(2, "output_layer")
    graph += field(5, external_tensor("w", INT8, (dim, columns)))
    graph += field(5, external_tensor("b", FLOAT, (columns,)))
    graph += field(5, tensor("b_scale", FLOAT, (), raw.tobytes()))
    graph += field(5, tensor("zero", UINT8, (), bytes([SHIFT])))
    graph += field(11, value_info("q", UINT8, ("rows", "dim")))
    graph += field(11, value_info("a_scale", FLOAT, ()))
    graph += field(12, value_info("logits", FLOAT, ("rows", "columns")))
    return model(graph, _IR_VERSION, {"": _OPSET, "com.microsoft": _MS_OPSET})


class PrepackedOutput:
    """One batch's output product: `bind(q, a_scale, logits)` → a run over those buffers."""

    def __init__(self, columns: np.ndarray, bias: np.ndarray, scale: np.ndarray) -> None:
        """`columns` [E,K] int8 and `bias` [K] float32 (held as long as the session, which reads them as its
        constants); `scale` the product's one rescale."""
        if columns.dtype != np.int8 or columns.ndim != 2 or bias.shape != (columns.shape[1],) or scale.size != 1:
            raise ValueError("the output columns are not an int8 [E,K] matrix with a bias per column and one scale")
        self._arrays = (np.ascontiguousarray(columns), np.ascontiguousarray(bias, dtype=np.float32))
        options = session_options(1)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # one node: nothing to fuse
        self._values = [ort.OrtValue.ortvalue_from_numpy(array) for array in self._arrays]
        options.add_external_initializers(["w", "b"], self._values)
        dim, width = columns.shape
        self.session = inference_session(graph_bytes(dim, width, scale), options)
        self._binder = Binder(self.session)

    def bind(self, q: np.ndarray, a_scale: np.ndarray, logits: np.ndarray) -> BoundStep:
        """A run reading `q` [rows,E] uint8 and `a_scale` (a float32 scalar) and writing `logits` [rows,K]."""
        return self._binder.step([("q", q), ("a_scale", a_scale)], [("logits", logits)])
