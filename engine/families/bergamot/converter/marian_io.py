"""Marian's model containers, both ways: the binary `.bin` (marian-dev src/common/binary.cpp) and `.npz`.

Reading is split so a caller can refuse a model by its names, shapes and embedded config before any weight bytes
are decoded: `bin_items` parses headers only and keeps each item's raw payload as a memoryview.

.bin layout: u64 version (1), u64 N, N headers {u64 nameLength incl. NUL, u64 type, u64 shapeLength, u64 dataLength},
N NUL-terminated names, N shapes (int32 each), u64 offset + offset zero bytes (data starts 256-aligned), then N
payloads of dataLength bytes (marian pads each to a multiple of 256 and counts the padding in dataLength)."""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BINARY_VERSION = 1
FLOAT32 = 0x404
FLOAT16 = 0x402
INT8 = 0x101
INTGEMM8 = 0x4101
INTGEMM16 = 0x4102
TYPE_NAMES = {FLOAT32: "float32", FLOAT16: "float16", INT8: "int8", INTGEMM8: "intgemm8", INTGEMM16: "intgemm16"}
META_NAME = "special:model.yml"


class ContainerError(ValueError):
    """The bytes are not a well-formed Marian .bin or .npz."""


@dataclass(frozen=True)
class Item:
    """One stored tensor: its name, Marian type code, recorded shape and raw payload (for .bin: dataLength bytes,
    padding included; for .npz: the array's bytes)."""

    name: str
    type: int
    shape: tuple[int, ...]
    payload: memoryview

    @property
    def elements(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1


MAX_FILE_BYTES = 1 << 30  # any one file of a model folder, unpacked: the published int8 models are ~17-40 MB
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 24


def bound_text(limit: int) -> str:
    return f"{limit / 2**30:.0f} GiB" if limit >= 2**30 else f"{limit / 2**20:.0f} MiB"


def gunzip(data: bytes, limit: int | None = None) -> bytes:
    """`data` gunzipped (every member, as `gzip.decompress`), unpacked in bounded steps: ContainerError for data
    that is not gzip, is damaged or cut short (zlib checks each member's CRC and length), or unpacks past `limit`
    (a gzip bomb; default MAX_FILE_BYTES), never zlib's own exception or the memory of a bomb."""
    limit = MAX_FILE_BYTES if limit is None else limit
    if data[:2] != GZIP_MAGIC:
        raise ContainerError(f"not gzip data (it starts with {bytes(data[:2])!r}, not 1f 8b)")
    chunks: list[bytes] = []
    total = 0
    rest = data
    try:
        while rest:
            inflate = zlib.decompressobj(wbits=31)  # one gzip member
            pending = rest
            while not inflate.eof:
                piece = inflate.decompress(pending, _CHUNK)
                total += len(piece)
                if total > limit:
                    raise ContainerError(f"unpacks to over {bound_text(limit)}, more than any model file")
                chunks.append(piece)
                pending = inflate.unconsumed_tail
                if not pending and not piece:
                    raise ContainerError("gzip data cut short (no end-of-stream marker): the file is truncated")
            rest = inflate.unused_data.lstrip(b"\0")  # another member, or the zero padding gzip tolerates
            if rest and rest[:2] != GZIP_MAGIC:
                raise ContainerError("trailing bytes after the gzip data")
    except zlib.error as exc:
        raise ContainerError(f"damaged gzip data ({exc})") from None
    return b"".join(chunks)


def read_bytes(path: Path) -> bytes:
    """A file's bytes, gunzipped when its name ends in .gz (the published models are gzipped); ContainerError, not
    naming the file (the caller does), for a damaged .gz or one that unpacks past MAX_FILE_BYTES."""
    path = Path(path)
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ContainerError(f"over {bound_text(MAX_FILE_BYTES)}, more than any model file")
    data = path.read_bytes()
    if path.suffix == ".gz":
        return gunzip(data)
    return data


def bin_items(blob: bytes) -> list[Item]:
    """The items of a .bin file, headers checked against the file size; payloads are not decoded."""
    view = memoryview(blob)
    if len(blob) < 16:
        raise ContainerError("file too short for a Marian binary model")
    version, count = (int(v) for v in np.frombuffer(blob, "<u8", 2))
    if version != BINARY_VERSION:
        raise ContainerError(f"binary model version {version}, expected {BINARY_VERSION} (is this a Marian .bin?)")
    pos = 16
    if count > (len(blob) - pos) // 32:
        raise ContainerError(f"binary model claims {count} items, more than the file can hold")
    raw_headers = np.frombuffer(blob, "<u8", count * 4, pos).reshape(count, 4)
    if (raw_headers[:, [0, 2, 3]] > len(blob)).any():  # name, shape and data lengths: as u64, before any sum
        raise ContainerError("malformed item header in binary model (a length past the end of the file)")
    headers = raw_headers.astype(np.int64)
    pos += 32 * count
    names = []
    for name_len in headers[:, 0].tolist():
        raw = bytes(view[pos : pos + name_len])
        if name_len < 1 or len(raw) != name_len or raw[-1:] != b"\0":
            raise ContainerError("malformed item name in binary model")
        try:
            names.append(raw[:-1].decode("utf-8"))
        except UnicodeDecodeError:
            raise ContainerError(f"malformed item name in binary model (not UTF-8: {raw[:40]!r})") from None
        pos += name_len
    shapes = []
    for shape_len in headers[:, 2].tolist():
        if pos + 4 * shape_len > len(blob):
            raise ContainerError("binary model truncated in its shapes")
        shape = tuple(int(d) for d in np.frombuffer(blob, "<i4", shape_len, pos))
        if any(d < 0 for d in shape):
            raise ContainerError(f"malformed shape {list(shape)} in binary model")
        shapes.append(shape)
        pos += 4 * shape_len
    if pos + 8 > len(blob):
        raise ContainerError("binary model truncated before its data")
    offset = int(np.frombuffer(blob, "<u8", 1, pos)[0])
    pos += 8 + offset
    items = []
    for (_, type_code, _, data_len), name, shape in zip(headers.tolist(), names, shapes):
        if pos + data_len > len(blob):
            raise ContainerError(f"binary model truncated in the data of {name!r}")
        items.append(Item(name, int(type_code), shape, view[pos : pos + data_len]))
        pos += data_len
    return items


_NPZ_DTYPES = {np.dtype("<f4"): FLOAT32, np.dtype("<i1"): INT8, np.dtype("|i1"): INT8}


def _npz_headers(archive: zipfile.ZipFile) -> None:
    """Refuse an .npz by its members' headers before any array is unpacked: a dtype Marian does not write, an array
    larger than its member declares, or arrays that unpack past MAX_FILE_BYTES (a zip bomb)."""
    if sum(info.file_size for info in archive.infolist()) > MAX_FILE_BYTES:
        raise ContainerError(f"its arrays unpack to over {bound_text(MAX_FILE_BYTES)}, more than any model file")
    for info in archive.infolist():
        name = info.filename.removesuffix(".npy")
        with archive.open(info) as stream:
            major, _ = np.lib.format.read_magic(stream)
            reader = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            shape, _, dtype = reader(stream)
        if dtype not in _NPZ_DTYPES:
            raise ContainerError(f"{name!r} has dtype {dtype}; Marian's .npz models hold float32 only")
        if int(np.prod(shape, dtype=np.int64)) * dtype.itemsize > info.file_size:
            raise ContainerError(f"{name!r}: shape {list(shape)} is larger than its {info.file_size} stored bytes")


def npz_items(blob: bytes) -> list[Item]:
    """The arrays of an .npz model as Items (float32 -> FLOAT32, int8 -> INT8; any other dtype is refused), its
    members' headers checked first; ContainerError for anything damaged (a bad CRC, deflate data or header)."""
    items = []
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            _npz_headers(archive)
        with np.load(io.BytesIO(blob), allow_pickle=False) as archive:
            for name in archive.files:
                array = archive[name]
                data = np.ascontiguousarray(array)  # little-endian: _npz_headers refused any other dtype
                code = _NPZ_DTYPES[array.dtype]
                items.append(Item(name, code, tuple(int(d) for d in array.shape), memoryview(data.tobytes())))
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        if isinstance(exc, ContainerError):
            raise
        raise ContainerError(f"not a valid .npz file ({exc})") from exc
    return items


def float32_array(item: Item) -> np.ndarray:
    """A float32 item's values in its recorded shape (the payload's padding ignored)."""
    if item.type != FLOAT32:
        raise ContainerError(f"{item.name!r} is {TYPE_NAMES.get(item.type, hex(item.type))}, not float32")
    if len(item.payload) < 4 * item.elements:
        raise ContainerError(f"{item.name!r}: payload of {len(item.payload)} bytes is short for shape {item.shape}")
    return np.frombuffer(item.payload, "<f4", item.elements).reshape(item.shape).astype(np.float32)


def intgemm8_payload(item: Item) -> tuple[np.ndarray, np.float32]:
    """An intgemm8 item's int8 values, flat in stored order, and its quantisation multiplier (the float32 trailer
    right after the elements)."""
    if item.type != INTGEMM8:
        raise ContainerError(f"{item.name!r} is {TYPE_NAMES.get(item.type, hex(item.type))}, not intgemm8")
    if len(item.payload) < item.elements + 4:
        raise ContainerError(f"{item.name!r}: intgemm8 payload of {len(item.payload)} bytes lacks its multiplier")
    q = np.frombuffer(item.payload, np.int8, item.elements).copy()
    qm = np.frombuffer(bytes(item.payload[item.elements : item.elements + 4]), "<f4")[0]
    return q, np.float32(qm)


def meta_text(item: Item) -> str:
    """The text of `special:model.yml` (an int8 item holding the YAML and a trailing NUL)."""
    if item.type != INT8:
        raise ContainerError(f"{META_NAME} is {TYPE_NAMES.get(item.type, hex(item.type))}, expected int8")
    raw = bytes(item.payload[: item.elements])
    return raw.split(b"\0", 1)[0].decode("utf-8")


# --- writing (tests, fixtures and tools that make models the way marian-conv does) ---


def _padded(data: bytes) -> bytes:
    return data + b"\0" * ((-len(data)) % 256)


def write_bin(items: Iterable[tuple[str, int, tuple[int, ...], bytes]]) -> bytes:
    """A .bin file holding `items` (name, type code, shape, payload), each payload padded to 256 bytes as
    marian-conv does (the padding counted in dataLength)."""
    items = [(name, code, tuple(shape), _padded(data)) for name, code, shape, data in items]
    out = io.BytesIO()
    out.write(np.array([BINARY_VERSION, len(items)], "<u8").tobytes())
    for name, code, shape, data in items:
        out.write(np.array([len(name.encode()) + 1, code, len(shape), len(data)], "<u8").tobytes())
    for name, *_ in items:
        out.write(name.encode() + b"\0")
    for _, _, shape, _ in items:
        out.write(np.array(shape, "<i4").tobytes())
    pos = out.tell()
    next_pos = ((pos + 8) // 256 + 1) * 256
    offset = next_pos - pos - 8
    out.write(np.array([offset], "<u8").tobytes() + b"\0" * offset)
    for *_, data in items:
        out.write(data)
    return out.getvalue()


def meta_array(yaml_text: str) -> np.ndarray:
    """`special:model.yml` as Marian stores it: the text's bytes plus a NUL, as int8."""
    return np.frombuffer(yaml_text.encode("utf-8") + b"\0", dtype=np.int8).copy()


def write_npz(params: dict[str, np.ndarray], yaml_text: str) -> bytes:
    """An .npz model: every parameter as float32 plus `special:model.yml`."""
    out = io.BytesIO()
    arrays = {name: np.asarray(value, dtype=np.float32) for name, value in params.items()}
    arrays[META_NAME] = meta_array(yaml_text)
    np.savez(out, **arrays)  # type: ignore[arg-type]
    return out.getvalue()
