"""Token embedding lookups from the bundle's embedding.bin, by positioned reads.

The same bytes are the decoder's output projection, which ORT already holds in memory in its own packed form.
Reading the few rows a step needs (a few hundred bytes each) through the page cache, rather than memory-mapping
the file, keeps them from being counted a second time in the process's resident memory.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np


class EmbeddingTable:
    """Rows of a [vocab, d_model] matrix stored as float32, or as 8-bit blocks with per-block float32 scales."""

    def __init__(self, path: Path, spec: dict) -> None:
        self.vocab, self.dim = (int(x) for x in spec["shape"])
        self.dtype = np.dtype(spec["dtype"])
        self.offset = int(spec["offset"])
        self.block = spec.get("block_size")
        self.row_bytes = self.dim * self.dtype.itemsize
        if self.block:
            self.zero_point = np.float32(spec["zero_point"])
            self.blocks = self.dim // self.block
            self.scales_offset = int(spec["scales_offset"])
        self._fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        self._lock = threading.Lock()  # only for platforms without pread (seek + read share the file position)

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            os.close(fd)

    def _read(self, offset: int, size: int) -> bytes:
        if hasattr(os, "pread"):
            return os.pread(self._fd, size, offset)
        with self._lock:
            os.lseek(self._fd, offset, os.SEEK_SET)
            return os.read(self._fd, size)

    def rows(self, ids: np.ndarray) -> np.ndarray:
        """float32 [len(ids), dim] for a flat array of token ids."""
        unique, inverse = np.unique(ids, return_inverse=True)
        raw = b"".join(self._read(self.offset + int(i) * self.row_bytes, self.row_bytes) for i in unique)
        rows = np.frombuffer(raw, dtype=self.dtype).reshape(len(unique), self.dim).astype(np.float32)
        if self.block:
            size = self.blocks * 4
            scales = b"".join(self._read(self.scales_offset + int(i) * size, size) for i in unique)
            scale = np.frombuffer(scales, dtype=np.float32).reshape(len(unique), self.blocks, 1)
            blocks = (rows - self.zero_point).reshape(len(unique), self.blocks, self.block)
            rows = (blocks * scale).reshape(-1, self.dim)
        return rows[inverse.reshape(-1)]
