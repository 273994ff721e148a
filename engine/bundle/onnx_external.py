"""The external-data files an .onnx graph makes ONNX Runtime open, read from the protobuf before ORT sees it.

A graph names its weight files itself (TensorProto.external_data "location"), so a bundle's manifest alone does not
say everything the engine will open: a crafted graph could point at `/etc/passwd` or `../../x`. The `onnx` package
is not shipped in the app, so this walks the protobuf wire format directly, descending only into the messages that
can hold tensors (graph initializers, node attributes, subgraphs, functions, training info).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

# field numbers from onnx.proto3: message → {field: child message}
_MODEL = {7: "graph", 20: "training", 25: "function"}
_CHILDREN = {
    "graph": {1: "node", 5: "tensor", 15: "sparse"},
    "training": {1: "graph", 2: "graph"},
    "function": {7: "node"},
    "node": {5: "attribute"},
    "attribute": {5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse", 23: "sparse"},
    "sparse": {1: "tensor", 2: "tensor"},
}
_TENSOR_EXTERNAL = 13  # repeated StringStringEntryProto (key = 1, value = 2)
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME, _TENSOR_RAW, _TENSOR_LOCATION = 1, 2, 8, 9, 14
_MAX_DEPTH = 64
_KEY = b"location"  # every external-data entry holds this key, so a message without these bytes has none


@dataclass(frozen=True)
class ExternalData:
    """One tensor's bytes in another file: `location` relative to the graph's folder, as written in the graph; the
    tensor's `name`, `dims` and ONNX `data_type` (what a caller needs to hand ORT those bytes itself)."""

    location: str
    offset: int
    length: int | None
    name: str = ""
    dims: tuple[int, ...] = ()
    data_type: int = 0


class OnnxFormatError(ValueError):
    """The file is not a well-formed ONNX protobuf."""


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise OnnxFormatError("truncated or overlong varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _fields(buf: memoryview):
    """(field number, wire type, value) for each field; length-delimited values are memoryviews."""
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: int | memoryview | None
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = None, pos + 8
        elif wire == 5:
            value, pos = None, pos + 4
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise OnnxFormatError("a field runs past the end of the file")
            value, pos = buf[pos : pos + length], pos + length
        else:
            raise OnnxFormatError(f"unsupported wire type {wire}")
        if pos > len(buf):
            raise OnnxFormatError("truncated field")
        yield number, wire, value


@dataclass
class _Tensor:
    """The TensorProto fields both readers use."""

    name: str = ""
    dims: list[int] = field(default_factory=list)
    data_type: int = 0
    raw: memoryview | None = None
    external: bool = False  # data_location EXTERNAL
    entries: dict[str, str] = field(default_factory=dict)  # external_data key → value


def _read_tensor(buf: memoryview) -> _Tensor:
    tensor = _Tensor()
    for number, wire, value in _fields(buf):
        if number == _TENSOR_DIMS and wire == 0:
            tensor.dims.append(value)
        elif number == _TENSOR_DIMS and wire == 2:  # packed
            pos = 0
            while pos < len(value):
                dim, pos = _varint(value, pos)
                tensor.dims.append(dim)
        elif number == _TENSOR_TYPE and wire == 0:
            tensor.data_type = value
        elif number == _TENSOR_NAME and wire == 2:
            tensor.name = bytes(value).decode("utf-8", "replace")
        elif number == _TENSOR_RAW and wire == 2:
            tensor.raw = value
        elif number == _TENSOR_LOCATION and wire == 0:
            tensor.external = value == 1
        elif number == _TENSOR_EXTERNAL and wire == 2:
            key = text = ""
            for n, w, v in _fields(value):
                if w == 2 and n in (1, 2):
                    try:
                        decoded = bytes(v).decode("utf-8")
                    except UnicodeDecodeError as exc:
                        raise OnnxFormatError("an external-data entry is not UTF-8") from exc
                    key, text = (decoded, text) if n == 1 else (key, decoded)
            tensor.entries[key] = text
    return tensor


def _tensor(buf: memoryview, out: list[ExternalData]) -> None:
    tensor = _read_tensor(buf)
    entries = tensor.entries
    if "location" in entries:
        try:
            offset = int(entries.get("offset") or 0)
            length = int(entries["length"]) if entries.get("length") else None
        except ValueError as exc:
            raise OnnxFormatError("an external-data offset or length is not a number") from exc
        out.append(ExternalData(entries["location"], offset, length, tensor.name, tuple(tensor.dims), tensor.data_type))


def _walk(buf: memoryview, children: dict[int, str], out: list[ExternalData], depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise OnnxFormatError("subgraphs nested too deeply")
    for number, wire, value in _fields(buf):
        kind = children.get(number)
        if kind is None or wire != 2 or _KEY not in value.tobytes():  # no external data in there: skip unparsed
            continue
        if kind == "tensor":
            _tensor(value, out)
        else:
            _walk(value, _CHILDREN[kind], out, depth + 1)


def external_data(path: Path) -> list[ExternalData]:
    """Every external-data reference in the .onnx file at `path`; raises OnnxFormatError if it is malformed."""
    buf = memoryview(Path(path).read_bytes())
    out: list[ExternalData] = []
    _walk(buf, _MODEL, out, 0)
    return out


_MODEL_GRAPH, _GRAPH_INITIALIZER = 7, 5


@dataclass(frozen=True)
class InlineTensor:
    """One initializer of a graph stored inline as `raw_data` (little-endian, C order): its ONNX `data_type`, its
    `dims` and its bytes (a view into the buffer that was read)."""

    name: str
    dims: tuple[int, ...]
    data_type: int
    raw: memoryview


def inline_initializers(buf: memoryview, names: set[str]) -> dict[str, InlineTensor]:
    """The main graph's initializers named in `names` whose values are inline `raw_data` (others are left out), read
    from an .onnx file's bytes without copying them: a family that needs a weight in numpy as well as in its graph
    (engine.families.bergamot.output_table) reads it from the graph file rather than shipping it twice."""
    found: dict[str, InlineTensor] = {}
    for number, wire, graph in _fields(buf):
        if number != _MODEL_GRAPH or wire != 2:
            continue
        assert isinstance(graph, memoryview)
        for number_in_graph, kind, tensor in _fields(graph):
            if number_in_graph != _GRAPH_INITIALIZER or kind != 2:
                continue
            assert isinstance(tensor, memoryview)
            t = _read_tensor(tensor)
            if t.name in names and t.raw is not None and not t.external:
                found[t.name] = InlineTensor(t.name, tuple(t.dims), t.data_type, t.raw)
    return found
