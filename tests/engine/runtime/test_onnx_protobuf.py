"""engine.runtime.onnx_protobuf: the protobuf pieces the runtime's own tiny graphs are written with."""

from __future__ import annotations

import pytest

from engine.runtime.onnx_protobuf import INT8, field, int_field, value_info, varint


@pytest.mark.parametrize(("value", "encoded"), [(0, b"\x00"), (1, b"\x01"), (127, b"\x7f"), (300, b"\xac\x02")])
def test_varint_is_protobufs_base_128(value: int, encoded: bytes) -> None:
    assert varint(value) == encoded


def test_fields_carry_their_wire_type_and_length() -> None:
    assert field(1, "ab") == b"\x0a\x02ab"  # field 1, wire type 2, length 2
    assert int_field(2, 150) == b"\x10\x96\x01"  # field 2, wire type 0


def test_a_value_info_reads_back_with_onnx() -> None:
    onnx = pytest.importorskip("onnx")
    info = onnx.ValueInfoProto.FromString(value_info("table", INT8, ("vocab", "dim")))
    assert info.name == "table" and info.type.tensor_type.elem_type == onnx.TensorProto.INT8
    assert [d.dim_param for d in info.type.tensor_type.shape.dim] == ["vocab", "dim"]
