"""Marian's binary lexical shortlist (`lex.50.50.<pair>.s2t.bin`): read, check, and pick the target ids a batch may
emit, with exactly the rules of marian-dev's BinaryShortlistGenerator (src/data/shortlist.cpp).

Used at build time (the import checks the file) and at run time (the ids per batch), so numpy only.

The file: six u64 {magic, checksum, firstNum, bestNum, wordToOffsetSize (= source vocabulary + 1), shortListsSize},
then u64 wordToOffset[wordToOffsetSize], then u32 shortLists[shortListsSize]; nothing else. The checksum is
boost-style hash_combine over the whole u64 words from firstNum to the end of the file.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

MAGIC = 0xF11A48D5013417F5
HEADER_WORDS = 6
_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B9


class ShortlistError(ValueError):
    """The file is not a valid binary shortlist (wrong magic, size, checksum, or ids out of range)."""


def checksum(words: Iterable[int]) -> int:
    """Marian's util::hashMem<uint64_t, uint64_t>: seed ^= v + 0x9e3779b9 + (seed << 6) + (seed >> 2), mod 2^64
    (std::hash of a u64 is the identity)."""
    seed = 0
    for v in words:
        seed ^= (v + _GOLDEN + ((seed << 6) & _MASK) + (seed >> 2)) & _MASK
    return seed


def blob_checksum(blob: bytes) -> int:
    """The checksum Marian stores for `blob` (a whole shortlist file): over the u64 words from firstNum on; a
    trailing 4 bytes (an odd number of u32 list entries) are not covered."""
    count = (len(blob) - 16) // 8
    return checksum(np.frombuffer(blob, dtype="<u8", count=count, offset=16).tolist())


@dataclass(frozen=True)
class Shortlist:
    """A loaded shortlist: `offsets[s]:offsets[s+1]` slices `lists` to the target ids aligned with source id `s`."""

    first_num: int
    best_num: int
    offsets: np.ndarray  # uint64 [source vocabulary + 1]
    lists: np.ndarray  # uint32

    @property
    def source_vocab_size(self) -> int:
        return len(self.offsets) - 1

    def targets_of(self, source_id: int) -> np.ndarray:
        """The target ids the lexicon aligns with one source id."""
        return self.lists[int(self.offsets[source_id]) : int(self.offsets[source_id + 1])]

    def allowed(
        self, source_ids: Iterable[Iterable[int]] | np.ndarray, target_vocab_size: int, shared: bool
    ) -> np.ndarray:
        """The sorted target ids a batch may emit (Marian's BinaryShortlistGenerator::generate): every id below
        firstNum; the union of the lists of every source id in the batch (padding included: Marian's padding is
        </s> = 0); the source ids themselves when source and target share one vocabulary object (the same file given
        twice); then the lowest unused ids from firstNum up until the count is a multiple of 8 (intgemm's column
        rule). The union is over the whole batch, so one sentence's list depends on its neighbours."""
        if isinstance(source_ids, np.ndarray):
            flat = _distinct(source_ids.astype(np.int64, copy=False))
        else:
            rows = [np.asarray(list(row), dtype=np.int64).ravel() for row in source_ids]
            flat = _distinct(np.concatenate(rows)) if rows else np.zeros(0, dtype=np.int64)
        if flat.size and (flat[0] < 0 or flat[-1] >= self.source_vocab_size):  # sorted
            raise ShortlistError(f"source id outside the shortlist's {self.source_vocab_size} source words")
        chosen = np.zeros(target_vocab_size, dtype=bool)
        chosen[: min(self.first_num, target_vocab_size)] = True
        if shared:
            chosen[flat[flat < target_vocab_size]] = True
        chosen[self.lists[_ranges(self.offsets[flat], self.offsets[flat + 1])]] = True
        count = int(np.count_nonzero(chosen))
        if count % 8:
            chosen[_lowest_free(chosen, self.first_num, (-count) % 8)] = True
        return np.flatnonzero(chosen).astype(np.int64)


def _distinct(ids: np.ndarray) -> np.ndarray:
    """The sorted distinct ids. Not np.unique: its first call imports numpy.ma (~6 ms, np.ma.is_masked), which
    would fall in a user's first translation."""
    ids = np.sort(ids, axis=None)
    return ids[np.diff(ids, prepend=ids[:1] - 1) != 0]


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The indices start..end-1 of every (start, end) pair, concatenated: every listed source word's slice of
    `lists` in one gather instead of one slice per word."""
    starts, ends = starts.astype(np.int64), ends.astype(np.int64)
    lengths = ends - starts
    total = int(lengths.sum())
    # each index is its range's start plus its position within the range
    return np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + np.arange(total, dtype=np.int64)


def _lowest_free(chosen: np.ndarray, start: int, need: int) -> np.ndarray:
    """The `need` lowest ids from `start` up that are not chosen (fewer where the vocabulary runs out), looking at a
    growing window rather than listing every free id of the vocabulary (~0.2 ms for the few a batch needs)."""
    found: list[np.ndarray] = []
    have, width = 0, 256
    while have < need and start < len(chosen):
        block = np.flatnonzero(~chosen[start : start + width])[: need - have] + start
        found.append(block)
        have += len(block)
        start, width = start + width, width * 4
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def parse(
    blob: bytes, *, verify: bool = True, target_vocab_size: int | None = None, trusted: bool = False
) -> Shortlist:
    """Read a shortlist file's bytes. `verify` checks the checksum and Marian's content rules (every offset but the
    last below the list count, the last equal to it, every target id below `target_vocab_size` when given); the
    size check always runs (Marian's own loader aborts on a size mismatch even unverified). `trusted`: the bytes
    are a verified bundle's (their sha256 checked), so the checksum, a slow word-by-word loop, is skipped; the
    content rules still run."""
    if len(blob) < HEADER_WORDS * 8:
        raise ShortlistError(f"shortlist of {len(blob)} bytes is too short to have a header")
    magic, stored, first_num, best_num, n_offsets, n_lists = (int(v) for v in np.frombuffer(blob, "<u8", HEADER_WORDS))
    if magic != MAGIC:
        raise ShortlistError("incorrect magic: not a Marian binary shortlist")
    expected = HEADER_WORDS * 8 + n_offsets * 8 + n_lists * 4
    if expected != len(blob):
        raise ShortlistError(f"shortlist header claims file size {expected} but the file has {len(blob)} bytes")
    if n_offsets < 1:
        raise ShortlistError("shortlist has no offset table")
    offsets = np.frombuffer(blob, "<u8", n_offsets, HEADER_WORDS * 8)
    lists = np.frombuffer(blob, "<u4", n_lists, HEADER_WORDS * 8 + n_offsets * 8)
    if verify and not trusted:
        actual = blob_checksum(blob)
        if actual != stored:
            raise ShortlistError(f"checksum {actual:#018x} != stored {stored:#018x}: the shortlist is corrupted")
    if verify:
        bad = bool((offsets[:-1] >= n_lists).any()) or int(offsets[-1]) != n_lists
        bad = bad or bool((np.diff(offsets.astype(np.int64)) < 0).any())
        if target_vocab_size is not None and n_lists:
            bad = bad or int(lists.max()) >= target_vocab_size
        if bad:
            raise ShortlistError("shortlist indices are out of bounds")
    return Shortlist(first_num, best_num, offsets, lists)


def build(lists: list[list[int]] | list[np.ndarray], first_num: int, best_num: int) -> bytes:
    """A shortlist file for `lists[s]` (the target ids of source id `s`), with its checksum: what marian-conv
    --shortlist ... --dump writes. Marian's content check wants every source word but the last to start before the
    end of the lists, so trailing source words with empty lists make a file it refuses when verifying."""
    offsets = np.zeros(len(lists) + 1, dtype="<u8")
    offsets[1:] = np.cumsum([len(x) for x in lists])
    flat = np.concatenate([np.asarray(x, dtype="<u4") for x in lists]) if lists else np.zeros(0, "<u4")
    body = np.array([first_num, best_num, len(offsets), len(flat)], dtype="<u8").tobytes()
    body += offsets.tobytes() + flat.astype("<u4").tobytes()
    head = np.array([MAGIC, 0], dtype="<u8").tobytes()
    blob = head + body
    return np.array([MAGIC, blob_checksum(blob)], dtype="<u8").tobytes() + body
