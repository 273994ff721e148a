"""Marian's binary lexical shortlist: the file format with its checksum, and the target ids a batch may emit
(marian-dev src/data/shortlist.cpp, BinaryShortlistGenerator::generate). bergamot accepting our files with checksum
verification on is checked in test_reference_oracle.py."""

from __future__ import annotations

import numpy as np
import pytest

from engine.families.bergamot import shortlist as sl

LISTS = [[5], [9, 3], [20, 21], [], [30], [4]]  # source ids 0..5


def test_round_trip_and_layout() -> None:
    blob = sl.build(LISTS, first_num=2, best_num=50)
    assert len(blob) == 48 + 8 * 7 + 4 * 7  # header, offsets[source + 1], 7 list entries
    parsed = sl.parse(blob, target_vocab_size=40)
    assert (parsed.first_num, parsed.best_num, parsed.source_vocab_size) == (2, 50, 6)
    assert parsed.targets_of(1).tolist() == [9, 3] and parsed.targets_of(3).tolist() == []


def test_checksum_is_marians_hash_combine() -> None:
    # seed ^= v + 0x9e3779b9 + (seed << 6) + (seed >> 2), worked by hand for [1, 2]
    first = (1 + 0x9E3779B9) & (2**64 - 1)
    second = first ^ ((2 + 0x9E3779B9 + (first << 6) + (first >> 2)) & (2**64 - 1))
    assert sl.checksum([1, 2]) == second
    blob = sl.build(LISTS, 2, 50)
    assert int(np.frombuffer(blob, "<u8", 1, 8)[0]) == sl.blob_checksum(blob)


def test_damage_is_refused() -> None:
    blob = bytearray(sl.build(LISTS, 2, 50))
    blob[-8] ^= 1
    with pytest.raises(sl.ShortlistError, match="checksum"):
        sl.parse(bytes(blob))
    sl.parse(bytes(blob), verify=False)  # Marian's `shortlist: [file, false]` skips the check
    odd = bytearray(sl.build(LISTS, 2, 50))  # 7 list entries: the last 4 bytes are no whole u64 word, and
    odd[-1] ^= 1  # Marian's checksum does not cover them
    sl.parse(bytes(odd))
    with pytest.raises(sl.ShortlistError, match="file size"):
        sl.parse(sl.build(LISTS, 2, 50)[:-4])
    with pytest.raises(sl.ShortlistError, match="magic"):
        sl.parse(b"\0" * 48)
    with pytest.raises(sl.ShortlistError, match="out of bounds"):
        sl.parse(sl.build(LISTS, 2, 50), target_vocab_size=25)  # id 30 is not a target word
    with pytest.raises(sl.ShortlistError, match="out of bounds"):
        sl.parse(sl.build([[1], []], 2, 50))  # Marian's content check: the last source word starts at the end


def test_allowed_ids_follow_marians_rules() -> None:
    short = sl.parse(sl.build(LISTS, 2, 50))
    # first ids {0, 1}; source ids 1 and 2 bring {9, 3} and {20, 21}: 6 ids, padded to 8 with 2 and 4
    assert short.allowed([[1, 2]], 40, shared=False).tolist() == [0, 1, 2, 3, 4, 9, 20, 21]
    # shared vocabulary: the source ids themselves too (1, 2 already in): same set here
    assert short.allowed([[1, 2]], 40, shared=True).tolist() == [0, 1, 2, 3, 4, 9, 20, 21]
    # a source id outside the lists adds itself only when shared: 5 -> {4}; shared adds 5 as well
    assert short.allowed([[5, 0]], 40, shared=False).tolist() == [0, 1, 2, 3, 4, 5, 6, 7]
    assert short.allowed([[4, 0]], 40, shared=True).tolist() == [0, 1, 2, 3, 4, 5, 6, 30]
    # the union is over the whole batch
    batch = short.allowed([[1], [2]], 40, shared=False)
    assert batch.tolist() == short.allowed([[1, 2]], 40, shared=False).tolist()
    assert len(short.allowed([[1]], 40, shared=False)) % 8 == 0


def test_padding_takes_the_lowest_unused_ids_above_first_num() -> None:
    short = sl.parse(sl.build([[10, 11, 12]], 4, 50))
    got = short.allowed([[0]], 64, shared=False)
    assert got.tolist() == [0, 1, 2, 3, 4, 10, 11, 12]  # 7 ids + the lowest free id >= first_num (4)


def test_a_padded_batch_gives_the_union_of_its_words_lists() -> None:
    """The engine's call: a padded [B,S] array (padding 0 = </s>, whose list counts too, as in Marian). Every
    listed word's targets are in, and nothing else but the first ids and the padding to a multiple of 8."""
    rng = np.random.default_rng(0)
    lists = [rng.choice(500, int(rng.integers(0, 6)), replace=False) for _ in range(299)] + [np.array([7])]
    short = sl.parse(sl.build(lists, first_num=3, best_num=50))
    batch = rng.integers(0, 300, (4, 9))
    batch[2, 5:] = 0
    got = short.allowed(batch, 500, shared=False)
    union = set(range(3)) | {int(t) for s in np.unique(batch) for t in short.targets_of(int(s))}
    assert union <= set(got.tolist()) and len(got) % 8 == 0 and len(got) - len(union) < 8
    assert got.tolist() == short.allowed(batch.tolist(), 500, shared=False).tolist()  # rows as lists: the same
    with pytest.raises(sl.ShortlistError, match="outside"):
        short.allowed(np.array([[3, 300]]), 500, shared=False)


def test_the_padding_looks_past_a_full_stretch_and_stops_at_the_vocabulary_end() -> None:
    """The free ids may lie far above first_num (a dense stretch first), or run out before the count is a
    multiple of 8: the lowest free ones are taken, as many as there are."""
    dense = sl.parse(sl.build([list(range(2, 1000)), [1500]], first_num=2, best_num=50))
    got = dense.allowed([[0]], 2000, shared=False)  # ids 0-999: 1000 ids, a multiple of 8 already
    assert got.tolist() == list(range(1000))
    got = dense.allowed([[0, 1]], 2000, shared=False)  # 1001 ids: 7 more from 1000 up
    assert got.tolist() == [*range(1007), 1500]
    full = sl.parse(sl.build([list(range(2, 10))], first_num=1, best_num=50))
    assert full.allowed([[0]], 10, shared=False).tolist() == list(range(10))  # 9 ids + the only free one, 1


def test_a_batchs_ids_are_found_without_np_unique(monkeypatch) -> None:
    """np.unique's first call imports numpy.ma (~6 ms), which would fall in a user's first translation."""
    short = sl.parse(sl.build(LISTS, 2, 50))

    def refused(*args, **kwargs):
        raise AssertionError("np.unique called")

    monkeypatch.setattr(np, "unique", refused)
    assert short.allowed(np.array([[2, 1, 2, 0], [5, 5, 0, 0]]), 40, shared=False).tolist() == [
        0,
        1,
        3,
        4,
        5,
        9,
        20,
        21,
    ]
    assert short.allowed([[2, 1, 2], [5]], 40, shared=False).tolist() == [0, 1, 2, 3, 4, 9, 20, 21]  # no </s>: 2 pads
    assert short.allowed(np.zeros((0, 3), np.int64), 40, shared=False).tolist() == list(range(8))
