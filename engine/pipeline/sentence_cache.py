"""Finished sentence results kept between requests, so translate-as-you-type re-decodes only what changed.

An LRU bounded by entry count and by bytes. The key is what decides a sentence's output: the model (its bundle and
language pair: a zh→en and an en→zh translator could meet the same ids), its source ids (the target language token
included, so the variant is part of it), the beam count, the precision, and the request's `extra` settings that
change a sentence's search (n-best count, loop cutting, bad words, constraints:
engine.pipeline.sentence_results.cache_extra;
the direction's length rule: engine.pipeline.requests).
Each Translator owns its cache (nothing is global) and clears it when its model changes. Only finished sentences go
in: a cancelled or partial one never does. An entry keeps the search's whole `SentenceOutput` (token
log-probabilities, score, n-best, unmet constraints, a cut at the length limit), packed, so a reused sentence keeps
its scores and flags.

With INT8 the model quantises activations per batch, so a sentence decoded beside different neighbours can come out
slightly differently; a reused sentence is the one the user already saw, which is what typing needs (FP32 results do
not depend on the batch at all).
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np

from engine.search.types import Hypothesis, SentenceOutput

MAX_ENTRIES = 20_000
MAX_BYTES = 16 * 2**20
_ENTRY_OVERHEAD = 240  # the OrderedDict node, the key and value tuples, the bytes objects' headers
_HYPOTHESIS_OVERHEAD = 120  # one packed hypothesis' tuple and bytes headers


class CachedSentence(NamedTuple):
    """A cache hit: the generated ids, the decoded text and the search's output (None when none was kept)."""

    tokens: list[int]
    text: str
    output: SentenceOutput | None


# A hypothesis packed: (int32 token bytes, float64 log-probability bytes, eos log-probability, score)
_Packed = tuple[bytes, bytes, float | None, float]


def _pack(h: Hypothesis) -> _Packed:
    tokens = np.asarray(h.tokens, dtype=np.int32).tobytes()
    return tokens, np.asarray(h.logprobs, dtype=np.float64).tobytes(), h.eos_logprob, h.score


def _unpack(p: _Packed) -> Hypothesis:
    tokens, logprobs, eos, score = p
    return Hypothesis(
        tuple(np.frombuffer(tokens, dtype=np.int32).tolist()),
        tuple(np.frombuffer(logprobs, dtype=np.float64).tolist()),
        eos,
        score,
    )


class SentenceCache:
    """Least recently used sentence results: key → (generated ids, decoded text, the search's output)."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple, tuple] = OrderedDict()
        self.nbytes = 0

    @staticmethod
    def key(ids: Sequence[int], beams: int, precision: str, model: str = "", extra: Hashable = ()) -> tuple:
        """Compact key (int32 bytes, not a tuple of Python ints) for a sentence's source ids and settings.

        `extra`: whatever else changes this sentence's output (hashable; share one object between sentences
        where possible, the key only holds a reference). The ids' bytes stay the key's last item."""
        return (model, precision, beams, extra, np.asarray(ids, dtype=np.int32).tobytes())

    def lookup(self, key: tuple) -> CachedSentence | None:
        """The entry for `key` (now the most recently used), or None."""
        item = self._items.get(key)
        if item is None:
            return None
        self._items.move_to_end(key)
        tokens, text, packed, _ = item
        output = None
        if packed is not None:
            hyps, listed, unmet, repeated, cut = packed
            best = _unpack(hyps[0])
            nbest = (best, *(_unpack(h) for h in hyps[1:])) if listed else ()
            output = SentenceOutput(best, nbest, unmet, repeated, cut)
        return CachedSentence(np.frombuffer(tokens, dtype=np.int32).tolist(), text, output)

    def get(self, key: tuple) -> tuple[list[int], str] | None:
        """(generated ids, decoded text) for `key`, or None (see `lookup` for the scores)."""
        hit = self.lookup(key)
        return None if hit is None else (hit.tokens, hit.text)

    def put(self, key: tuple, tokens: Sequence[int], text: str, output: SentenceOutput | None = None) -> None:
        packed_tokens = np.asarray(tokens, dtype=np.int32).tobytes()
        size = len(key[-1]) + len(packed_tokens) + sys.getsizeof(text) + _ENTRY_OVERHEAD
        packed = None
        if output is not None:
            # the best first, then the rest of the n-best (the best is not stored twice)
            rest = [h for h in output.nbest if h != output.best]
            hyps = tuple(_pack(h) for h in (output.best, *rest))
            packed = (hyps, bool(output.nbest), tuple(output.unmet), output.repeated, output.cut)
            size += sum(len(t) + len(lp) + _HYPOTHESIS_OVERHEAD for t, lp, _, _ in hyps)
        if size > self.max_bytes:
            return
        old = self._items.pop(key, None)
        if old is not None:
            self.nbytes -= old[3]
        self._items[key] = (packed_tokens, text, packed, size)
        self.nbytes += size
        while len(self._items) > self.max_entries or self.nbytes > self.max_bytes:
            _, dropped = self._items.popitem(last=False)
            self.nbytes -= dropped[3]

    def clear(self) -> None:
        self._items.clear()
        self.nbytes = 0

    def __len__(self) -> int:
        return len(self._items)
