"""Sentence planning without a model: token rows per sentence, and long sentences split without losing text."""

from __future__ import annotations

import pytest

from engine.pipeline.planning import plan_sentences, split_long, split_parts
from engine.text.segment import Segment


class CharTokenizer:
    """One token per character (spaces included): token counts are easy to reason about."""

    eos_id = 0

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        ids = [ord(ch) for ch in text]
        return [*ids, self.eos_id] if add_eos else ids

    def encode_batch(self, texts, add_eos: bool = True) -> list[list[int]]:
        return [self.encode(t, add_eos) for t in texts]


def within(budget: int):
    return lambda s: len(s) <= budget


def test_an_english_sentence_splits_at_clauses_then_spaces_and_rejoins_with_spaces():
    text = "one two three, four five six; seven eight nine ten eleven twelve"
    chunks = split_long(text, within(20), spaced=True)
    assert " ".join(chunks) == text
    assert all(len(c) <= 20 for c in chunks)
    assert chunks[0] == "one two three,"  # the clause break comes first


def test_a_chinese_sentence_splits_after_clause_marks_with_nothing_between_pieces():
    text = "我们今天去了公园，看到了很多花；然后去吃饭：吃了面条、饺子和包子" * 3
    chunks = split_long(text, within(16), spaced=False)
    assert "".join(chunks) == text  # not a character lost or added
    assert all(len(c) <= 16 for c in chunks)
    assert all(c.endswith(("，", "；", "：", "、")) for c in chunks[:3])  # cut after the marks, not inside words


def test_a_chinese_clause_without_marks_is_cut_anywhere_and_still_rebuilds():
    text = "我" * 100
    chunks = split_long(text, within(7), spaced=False)
    assert "".join(chunks) == text and all(len(c) <= 7 for c in chunks)


def test_text_without_any_gap_splits_in_halves_in_either_mode():
    text = "x" * 50
    for spaced in (True, False):
        chunks = split_long(text, within(8), spaced=spaced)
        assert "".join(chunks) == text and all(len(c) <= 8 for c in chunks)


def test_a_character_that_can_never_fit_is_kept_not_looped_over():
    assert split_long("ab", lambda s: False, spaced=False) == ["a", "b"]


@pytest.mark.parametrize(("spaced", "glue"), [(True, " "), (False, "")])
def test_plan_splits_only_sentences_over_the_budget(spaced, glue):
    tok = CharTokenizer()
    long = glue.join(["abcdefgh"] * 6) if spaced else "甲乙丙丁，" * 6
    segments = [Segment("short", True), Segment(" ", False), Segment(long, True), Segment("\n", False)]
    rows = plan_sentences(tok, segments, lang_id=7, spaced=spaced, chunk_tokens=20)
    assert rows[0].index == 0 and rows[0].ids == [7, *tok.encode("short", add_eos=False), 0]
    pieces = [r for r in rows if r.index == 2]
    assert len(pieces) > 1 and all(len(r.ids) <= 20 for r in rows)
    assert all(r.ids[0] == 7 and r.ids[-1] == 0 for r in rows)  # every piece has the language token and eos
    text = glue.join("".join(map(chr, r.ids[1:-1])) for r in pieces)
    assert text == long


def test_plan_skips_layout_and_needs_no_language_token():
    tok = CharTokenizer()
    rows = plan_sentences(tok, [Segment("\n\n", False), Segment("你好。", True)], lang_id=None, spaced=False)
    assert [(r.index, r.ids) for r in rows] == [(1, [*tok.encode("你好。", add_eos=False), 0])]


def _scan_split(text: str, fits, *, spaced: bool) -> list[str]:
    """The part-by-part scan split_long used before it searched: the reference for any `fits` that only grows."""
    parts, glue = split_parts(text, spaced=spaced)
    chunks, current = [], ""
    for part in parts:
        candidate = f"{current}{glue}{part}" if current else part
        if fits(candidate):
            current = candidate
            continue
        if current:
            chunks.append(current)
        if fits(part) or len(part) <= 1:
            current = part
        else:
            sub = _scan_split(part, fits, spaced=spaced)
            chunks.extend(sub[:-1])
            current = sub[-1]
    if current:
        chunks.append(current)
    return chunks


def test_the_search_finds_the_chunks_a_part_by_part_scan_finds():
    import random

    rng = random.Random(3)
    words = ["a", "bb", "ccc", "dddd", "eeeeeeeeeeee", "x" * 30, "yes,", "no;", "我们", "，", "花、"]
    for trial in range(300):
        spaced = trial % 2 == 0
        glue = " " if spaced else ""
        text = glue.join(rng.choice(words) for _ in range(rng.randint(1, 120)))
        budget = rng.randint(1, 60)
        fits = within(budget)
        assert split_long(text, fits, spaced=spaced) == _scan_split(text, fits, spaced=spaced), (text, budget)


def test_a_long_run_of_words_takes_a_few_fits_calls_per_chunk_not_one_per_word():
    text = " ".join(f"w{i % 97}" for i in range(20_000))
    calls = []

    def fits(s: str) -> bool:
        calls.append(len(s))
        return len(s) <= 600

    chunks = split_long(text, fits, spaced=True)
    assert " ".join(chunks) == text and all(len(c) <= 600 for c in chunks)
    assert len(calls) <= 12 * len(chunks), f"{len(calls)} calls for {len(chunks)} chunks"
    assert sum(calls) <= 12 * len(text)  # characters tokenised: a scan re-reads every prefix (≈ 100× the text)
