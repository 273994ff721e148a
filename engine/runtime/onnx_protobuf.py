"""Tiny ONNX graphs written as protobuf bytes, for the few small sessions the runtime builds itself.

The frozen app does not ship the `onnx` package (a build-time dependency), yet the runtime needs a handful of one- or
two-node graphs of its own (engine.runtime.exp_kernel's Exp, engine.families.bergamot.column_gather's Gather +
Transpose). These helpers write the few protobuf messages such graphs need: fields, tensor value infos with symbolic
dimensions, nodes and the model around a graph.
"""

from __future__ import annotations

# onnx.TensorProto data types
FLOAT, UINT8, INT8, INT64 = 1, 2, 3, 7


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


def tensor(name: str, elem_type: int, dims: tuple[int, ...], raw: bytes) -> bytes:
    """TensorProto with its values as raw little-endian bytes (an initializer of a few values)."""
    return b"".join(int_field(1, d) for d in dims) + int_field(2, elem_type) + field(8, name) + field(9, raw)


def external_tensor(name: str, elem_type: int, dims: tuple[int, ...]) -> bytes:
    """TensorProto whose values live outside the model's bytes: SessionOptions.add_external_initializers supplies
    them from memory."""
    location = field(13, field(1, "location") + field(2, name))  # StringStringEntryProto
    head = b"".join(int_field(1, d) for d in dims) + int_field(2, elem_type) + field(8, name)
    return head + location + int_field(14, 1)  # data_location EXTERNAL


def node(op: str, inputs: list[str], outputs: list[str], domain: str = "", attributes: tuple[bytes, ...] = ()) -> bytes:
    """NodeProto named after its first output; an empty input name is an omitted optional input; `attributes`:
    AttributeProto messages."""
    body = b"".join(field(1, i) for i in inputs) + b"".join(field(2, o) for o in outputs)
    body += field(3, outputs[0]) + field(4, op) + b"".join(field(5, a) for a in attributes)
    return body + (field(7, domain) if domain else b"")


def model(graph: bytes, ir_version: int, opsets: dict[str, int]) -> bytes:
    """ModelProto around a GraphProto's bytes, importing each (domain, version) of `opsets` ("" the default)."""
    imports = b"".join(field(8, field(1, domain) + int_field(2, version)) for domain, version in opsets.items())
    return int_field(1, ir_version) + field(2, "qiao") + imports + field(7, graph)
