"""Tiny ONNX graphs written as protobuf bytes, for the few small sessions the runtime builds itself.

The frozen app does not ship the `onnx` package (a build-time dependency), yet the runtime needs a handful of one- or
two-node graphs of its own (engine.runtime.exp_kernel's Exp, engine.families.bergamot.column_gather's Gather +
Transpose). These helpers write the few protobuf messages such graphs need: fields, tensor value infos with symbolic
dimensions, nodes and the model around a graph.
"""

from __future__ import annotations

# onnx.TensorProto data types
FLOAT, INT8, INT64 = 1, 3, 7


def varint(value: int) -> bytes:
    """A protobuf base-128 varint."""
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field (wire type 2): a string, bytes or an embedded message."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def int_field(number: int, value: int) -> bytes:
    """A varint field (wire type 0)."""
    return varint(number << 3) + varint(value)


def value_info(name: str, elem_type: int, dims: tuple[str, ...]) -> bytes:
    """ValueInfoProto: a tensor of `elem_type` whose dimensions are the symbolic names `dims`."""
    shape = b"".join(field(1, field(2, d)) for d in dims)  # TensorShapeProto.dim, Dimension.dim_param
    tensor = int_field(1, elem_type) + field(2, shape)  # TypeProto.Tensor: elem_type, shape
    return field(1, name) + field(2, field(1, tensor))  # ValueInfoProto: name, type.tensor_type
