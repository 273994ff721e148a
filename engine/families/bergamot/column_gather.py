"""The INT8 output layer's shortlisted columns [E,K] gathered and transposed by ONNX Runtime, once per batch.

The decoder step's output product (MatMulIntegerToFloat) reads its int8 weights as [E,K]; the table is stored as
rows [V,E], so a batch's shortlist is gathered (rows) and transposed. numpy's int8 transpose is slow (even blocked):
at the full-shape model's paragraph shortlist (3,456 ids × 384) the gather and transpose took 1.7 ms a batch in
numpy against 0.2 ms as ORT's Gather and Transpose (same process, 1 thread, AMD EPYC Zen 4).

The two-node graph is written here as protobuf bytes (the `onnx` package is not shipped in the app): inputs `table`
[V,E] int8 (the memory-mapped table, fed without a copy) and `ids` [K] int64; output `columns` [E,K] int8.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort

from engine.runtime.sessions import inference_session, session_options

_INT8, _INT64 = 3, 7  # ONNX TensorProto data types
_OPSET = 17
_IR_VERSION = 8


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field (wire type 2): a string, bytes or an embedded message."""
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _value_info(name: str, elem_type: int, dims: tuple[str, ...]) -> bytes:
    """ValueInfoProto: a tensor of `elem_type` whose dimensions are the symbolic names `dims`."""
    shape = b"".join(_field(1, _field(2, d)) for d in dims)  # TensorShapeProto.dim, Dimension.dim_param
    tensor = _int_field(1, elem_type) + _field(2, shape)  # TypeProto.Tensor
    return _field(1, name) + _field(2, _field(1, tensor))


def _node(op: str, inputs: list[str], output: str, attribute: bytes) -> bytes:
    body = b"".join(_field(1, i) for i in inputs) + _field(2, output) + _field(3, output) + _field(4, op)
    return body + _field(5, attribute)


def graph_bytes() -> bytes:
    """ModelProto: columns = Transpose(Gather(table, ids, axis=0), perm=[1, 0])."""
    axis = _field(1, "axis") + _int_field(3, 0) + _int_field(20, 2)  # AttributeProto INT
    perm = _field(1, "perm") + _int_field(8, 1) + _int_field(8, 0) + _int_field(20, 7)  # INTS, unpacked
    graph = _field(1, _node("Gather", ["table", "ids"], "rows", axis))
    graph += _field(1, _node("Transpose", ["rows"], "columns", perm))
    graph += _field(2, "output_columns")
    graph += _field(11, _value_info("table", _INT8, ("vocab", "dim")))
    graph += _field(11, _value_info("ids", _INT64, ("shortlist",)))
    graph += _field(12, _value_info("columns", _INT8, ("dim", "shortlist")))
    opset = _field(1, "") + _int_field(2, _OPSET)
    return _int_field(1, _IR_VERSION) + _field(8, opset) + _field(7, graph)


class ColumnGather:
    """`columns(ids)` → table[ids].T as a new contiguous int8 array [E,K] (one ORT run)."""

    def __init__(self, table: np.ndarray) -> None:
        """`table`: the int8 rows [V,E] (kept by reference: ORT reads it in place at every call)."""
        if table.dtype != np.int8 or table.ndim != 2 or not table.flags.c_contiguous:
            raise ValueError("the output table is not a contiguous int8 matrix")
        self.table = table
        self._session = inference_session(graph_bytes(), session_options(1))
        self._table_value = ort.OrtValue.ortvalue_from_numpy(table)

    def columns(self, ids: np.ndarray) -> np.ndarray:
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        out = np.empty((self.table.shape[1], len(ids)), np.int8)
        if not len(ids):
            return out
        binding = self._session.io_binding()
        binding.bind_ortvalue_input("table", self._table_value)
        binding.bind_cpu_input("ids", ids)
        binding.bind_ortvalue_output("columns", ort.OrtValue.ortvalue_from_numpy(out))
        self._session.run_with_iobinding(binding)
        return out
