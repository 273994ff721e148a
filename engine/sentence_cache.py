"""Finished sentence results kept between requests, so translate-as-you-type re-decodes only what changed.

An LRU bounded by entry count and by bytes. The key is what decides a sentence's output: the model (its bundle and
language pair: a zh→en and an en→zh translator could meet the same ids), its source ids (the target language token
included, so the variant is part of it), the beam count and the precision. Each Translator owns its cache (nothing
is global) and clears it when its model changes. Only finished sentences go in: a cancelled or partial one never does.

With INT8 the model quantises activations per batch, so a sentence decoded beside different neighbours can come out
slightly differently; a reused sentence is the one the user already saw, which is what typing needs (FP32 results do
not depend on the batch at all).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

MAX_ENTRIES = 20_000
MAX_BYTES = 16 * 2**20
_ENTRY_OVERHEAD = 240  # the OrderedDict node, the key and value tuples, the bytes objects' headers


class SentenceCache:
    """Least recently used sentence results: key → (generated ids, decoded text)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple, tuple[bytes, str, int]] = OrderedDict()
        self.nbytes = 0

    @staticmethod
    def key(ids: Sequence[int], beams: int, precision: str, model: str = "") -> tuple:
        """Compact key (int32 bytes, not a tuple of Python ints) for a sentence's source ids and settings."""
        return (model, precision, beams, np.asarray(ids, dtype=np.int32).tobytes())

    def get(self, key: tuple) -> tuple[list[int], str] | None:
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        tokens, text, _ = item
        return np.frombuffer(tokens, dtype=np.int32).tolist(), text

    def put(self, key: tuple, tokens: Sequence[int], text: str) -> None:
        packed = np.asarray(tokens, dtype=np.int32).tobytes()
        size = len(key[-1]) + len(packed) + sys.getsizeof(text) + _ENTRY_OVERHEAD
        if size > self.max_bytes:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self.nbytes -= old[2]
        self._items[key] = (packed, text, size)
        self.nbytes += size
        while len(self._items) > self.max_entries or self.nbytes > self.max_bytes:
            _, (_, _, dropped) = self._items.popitem(last=False)
            self.nbytes -= dropped

    def clear(self) -> None:
        self._items.clear()
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._items)
