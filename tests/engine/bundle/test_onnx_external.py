"""The protobuf walk finds exactly the external-data references the onnx package sees, and refuses garbage."""

from __future__ import annotations

import pytest

from engine.bundle.onnx_external import OnnxFormatError, external_data
from tests.conftest import BUNDLE


@pytest.mark.parametrize("rel", ["int8/encoder.onnx", "int8/decoder.onnx", "fp32/decoder.onnx", "scorer.onnx"])
def test_matches_the_onnx_package(rel):
    onnx = pytest.importorskip("onnx")
    model = onnx.load(str(BUNDLE / rel), load_external_data=False)
    expected = sorted(
        (d["location"], int(d.get("offset", 0)), int(d["length"]) if "length" in d else None)
        for t in model.graph.initializer
        if t.data_location == onnx.TensorProto.EXTERNAL
        for d in [{e.key: e.value for e in t.external_data}]
    )
    assert sorted((r.location, r.offset, r.length) for r in external_data(BUNDLE / rel)) == expected
    assert (len(expected) > 0) == (rel != "scorer.onnx")


def test_external_data_inside_a_subgraph_attribute_is_found(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    tensor = helper.make_tensor("w", TensorProto.FLOAT, [1], [0.0])
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "/etc/passwd"
    inner = helper.make_graph(
        [helper.make_node("Constant", [], ["c"], value=tensor)],
        "inner",
        [],
        [helper.make_tensor_value_info("c", TensorProto.FLOAT, [1])],
    )
    node = helper.make_node("If", ["cond"], ["y"], then_branch=inner, else_branch=inner)
    graph = helper.make_graph(
        [node],
        "outer",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    path = tmp_path / "m.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    assert [r.location for r in external_data(path)] == ["/etc/passwd", "/etc/passwd"]
    assert onnx  # the onnx package built the file; the engine read it without it


@pytest.mark.parametrize(
    "data",
    [b"\x3a\xff\xff\xff\xff\x0f", b"\x3a\x05ab", b"\x3b", b"\x08\xff"],
    ids=["length past the end", "garbage graph", "group wire type", "truncated varint"],
)
def test_malformed_protobuf_is_refused(tmp_path, data):
    path = tmp_path / "bad.onnx"
    path.write_bytes(data + b"location")
    with pytest.raises(OnnxFormatError):
        external_data(path)
