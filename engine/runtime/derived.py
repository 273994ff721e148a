"""Files a bundle does not ship but the engine computes from the ones it does: the INT8 output projection's 7-bit
per-token copy (`int8/head.bin`, 33 MB at opus-mt size) from the 8-bit block table in `int8/embedding.bin`.

The derivation is integer and IEEE float32 arithmetic (subtract, abs-max, multiply, divide, round half to even: no
sums, nothing whose result depends on the order or the SIMD width), so every machine computes the same bytes, and
the build records their sha256 in the manifest: the engine checks what it derives against that, like any shipped
file. The build writes the head with this same function, so the bundle it validated is the bundle users run. (So
this arithmetic is frozen: a change would make every published bundle's head fail its sha256.)
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np

COLUMN_LEVELS = 63  # 7-bit weights: no 16-bit saturation in the u8s8 kernels of CPUs without VNNI
PAGE = 4096
_CHUNK_ROWS = 4096  # rows rescaled at a time: 8 MB of float32 at d_model 512, not a whole 133 MB table


def aligned(size: int) -> int:
    """`size` rounded up to a page: where the head's scales start after its int8 part."""
    return (size + PAGE - 1) // PAGE * PAGE


def quantize_columns(weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric 7-bit integers with one scale per token for a float32 [V, D] matrix, laid out as the head's [D, V]
    int8 operand (an untied head, which has no table to be derived from). Returns (int8 [D, V], float32 scales [V])."""
    weight = np.asarray(weight, dtype=np.float32)
    amax = np.abs(weight).max(axis=1)
    scales = np.where(amax > 0, amax / np.float32(COLUMN_LEVELS), np.float32(1.0)).astype(np.float32)
    q = np.clip(np.rint(weight / scales[:, None]), -COLUMN_LEVELS, COLUMN_LEVELS).astype(np.int8)
    return np.ascontiguousarray(q.T), scales


def columns_from_blocks(
    blocks: np.ndarray, block_scales: np.ndarray, zero_point: float
) -> tuple[np.ndarray, np.ndarray]:
    """The 7-bit per-token head of an 8-bit block table: uint8 [V, D] rows and float32 [V, D / block] scales.

    A token's scale is its largest dequantized weight / 63 (the largest |level - zero point| of each block times
    that block's scale, which is exactly the largest |dequantized weight| there); each level then becomes
    rint((level - zero point) × (block scale / token scale)), one float32 multiply per weight. Returns
    (int8 [D, V], float32 scales [V]) as `quantize_columns` does."""
    vocab, dim = blocks.shape
    per_row = block_scales.shape[1]
    block = dim // per_row
    q = np.empty((dim, vocab), dtype=np.int8)
    scales = np.empty(vocab, dtype=np.float32)
    if zero_point != int(zero_point):
        raise ValueError(f"an 8-bit table with zero point {zero_point} (not a whole number) has no derived head")
    levels = np.int16(zero_point)
    for start in range(0, vocab, _CHUNK_ROWS):
        centred = (blocks[start : start + _CHUNK_ROWS].astype(np.int16) - levels).reshape(-1, per_row, block)
        n = len(centred)
        own = np.asarray(block_scales[start : start + n], dtype=np.float32)
        amax = (np.abs(centred).max(axis=2).astype(np.float32) * own).max(axis=1)
        scale = np.where(amax > 0, amax / np.float32(COLUMN_LEVELS), np.float32(1.0)).astype(np.float32)
        factor = (own / scale[:, None]).astype(np.float32)
        rounded = np.rint(centred * factor[..., None]).reshape(n, dim)
        np.clip(rounded, -COLUMN_LEVELS, COLUMN_LEVELS, out=rounded)
        q[:, start : start + n] = rounded.astype(np.int8).T
        scales[start : start + n] = scale
    return q, scales


def columns_file(q: np.ndarray, scales: np.ndarray) -> bytes:
    """head.bin's bytes: the int8 [D, V] operand, zeros to the next page, then the float32 scales."""
    data = q.tobytes()
    return data + b"\0" * (aligned(len(data)) - len(data)) + np.ascontiguousarray(scales, dtype=np.float32).tobytes()


def read_block_table(path: Path, spec: dict) -> tuple[np.ndarray, np.ndarray, float]:
    """The 8-bit rows, their block scales and the zero point of an embedding table (manifest `embedding` spec)."""
    vocab, dim = (int(x) for x in spec["shape"])
    block = int(spec["block_size"])
    raw = np.fromfile(path, dtype=np.uint8)
    offset, scales_offset = int(spec["offset"]), int(spec["scales_offset"])
    rows = raw[offset : offset + vocab * dim].reshape(vocab, dim)
    count = vocab * (dim // block)
    scales = raw[scales_offset : scales_offset + count * 4].view(np.float32).reshape(vocab, dim // block)
    return rows, scales, float(spec["zero_point"])


def columns_head_file(source: Path, spec: dict) -> bytes:
    """head.bin's bytes derived from the 8-bit block table `spec` (a manifest `embedding`) in `source`: the method
    the manifest calls "int8-columns-from-blocks"."""
    q, scales = columns_from_blocks(*read_block_table(source, spec))
    return columns_file(q, scales)


def write_file(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole or not at all: a temporary file of its own beside it (two loads deriving at once,
    in two processes or two threads, never share one), then rename."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    tmp = Path(name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
