"""The INT8 output layer's shortlisted columns [E,K] gathered and transposed by ONNX Runtime, once per batch.

The decoder step's output product (MatMulIntegerToFloat) reads its int8 weights as [E,K]; the table is stored as
rows [V,E], so a batch's shortlist is gathered (rows) and transposed. numpy's int8 transpose is slow (even blocked):
at the full-shape model's paragraph shortlist (3,456 ids × 384) the gather and transpose took 1.7 ms a batch in
numpy against 0.2 ms as ORT's Gather and Transpose (same process, 1 thread, AMD EPYC Zen 4).

The two-node graph is written as protobuf bytes (engine.runtime.onnx_protobuf: the `onnx` package is not shipped):
inputs `table` [V,E] int8 (the memory-mapped table, fed without a copy) and `ids` [K] int64; output `columns` [E,K]
int8.

The output is written into a kept buffer when nothing holds the last one any more: a fresh one is a new mapping
above glibc's mmap threshold (engine.runtime.native_memory) whose pages fault in as ORT writes them, ~0.15 ms of a
sentence's 1,040 columns at the full-shape model (AMD EPYC Zen 4). Up to SPARE_LIMIT bytes stay resident between
batches; a larger batch's columns are allocated for it alone (a five-sentence paragraph's 3,456 columns gained
nothing kept: the faults saved, ~0.35 ms, came back as slower decoder steps reading them, unexplained).
"""

from __future__ import annotations

import sys

import numpy as np
import onnxruntime as ort

from engine.runtime.onnx_protobuf import INT8, INT64, field, int_field, model, node, value_info
from engine.runtime.sessions import inference_session, session_options

SPARE_LIMIT = 1 << 20  # bytes of columns kept for the next batch: a sentence's or two (2,730 ids × 384)
_OPSET = 17
_IR_VERSION = 8


def graph_bytes() -> bytes:
    """ModelProto: columns = Transpose(Gather(table, ids, axis=0), perm=[1, 0])."""
    axis = field(1, "axis") + int_field(3, 0) + int_field(20, 2)  # AttributeProto INT
    perm = field(1, "perm") + int_field(8, 1) + int_field(8, 0) + int_field(20, 7)  # INTS, unpacked
    graph = field(1, node("Gather", ["table", "ids"], ["rows"], attributes=(axis,)))
    graph += field(1, node("Transpose", ["rows"], ["columns"], attributes=(perm,)))
    graph += field(2, "output_columns")
    graph += field(11, value_info("table", INT8, ("vocab", "dim")))
    graph += field(11, value_info("ids", INT64, ("shortlist",)))
    graph += field(12, value_info("columns", INT8, ("dim", "shortlist")))
    return model(graph, _IR_VERSION, {"": _OPSET})


class ColumnGather:
    """`columns(ids)` → table[ids].T as a new contiguous int8 array [E,K] (one ORT run)."""

    def __init__(self, table: np.ndarray) -> None:
        """`table`: the int8 rows [V,E] (kept by reference: ORT reads it in place at every call)."""
        if table.dtype != np.int8 or table.ndim != 2 or not table.flags.c_contiguous:
            raise ValueError("the output table is not a contiguous int8 matrix")
        self.table = table
        self._session = inference_session(graph_bytes(), session_options(1))
        self._table_value = ort.OrtValue.ortvalue_from_numpy(table)
        self._spare = np.empty(0, np.int8)  # the buffer lent out last (see `_buffer`)

    def columns(self, ids: np.ndarray) -> np.ndarray:
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        dim = self.table.shape[1]
        out = self._buffer(dim * len(ids)).reshape(dim, len(ids))
        if not len(ids):
            return out
        binding = self._session.io_binding()
        binding.bind_ortvalue_input("table", self._table_value)
        binding.bind_cpu_input("ids", ids)
        binding.bind_ortvalue_output("columns", ort.OrtValue.ortvalue_from_numpy(out))
        self._session.run_with_iobinding(binding)
        return out

    def _buffer(self, size: int) -> np.ndarray:
        """`size` bytes to write columns into: the kept buffer when no view of it is alive (every view holds a
        reference to it, so only this object's and the call's remain) and it is large enough, else a new one,
        kept in its place when it is at most SPARE_LIMIT bytes."""
        if size <= self._spare.size and sys.getrefcount(self._spare) == 2:  # the attribute and the argument
            return self._spare[:size]
        fresh = np.empty(size, np.int8)
        if size <= SPARE_LIMIT:
            self._spare = fresh
        return fresh
