"""Stream assembly: layout kept, the target's joiner between sentences, partial text shown only when final."""

from __future__ import annotations

from engine.pipeline.assembly import Assembler
from engine.pipeline.planning import Sentence
from engine.text import punctuation
from engine.text.segment import Segment
from tests.engine.pipeline_fakes import CharTokenizer


def ids(text: str) -> list[int]:
    return [ord(ch) for ch in text]


SEGMENTS = [
    Segment("A.", True),
    Segment("", False, inline_gap=True),  # no gap in the source (Chinese): the joiner still goes there
    Segment("B.", True),
    Segment("\n  ", False),  # layout: verbatim
    Segment("C.", True),
]
SENTENCES = [Sentence(0, [1]), Sentence(2, [2]), Sentence(4, [3]), Sentence(4, [4])]  # C was split in two


def test_layout_and_joiner():
    out = Assembler(CharTokenizer(), SEGMENTS, SENTENCES, " ")
    for i, text in enumerate(["a", "b", "c1", "c2"]):
        out.finish(i, text)
    assert out.drain() == "a b\n  c1 c2" and out.sentences_done == 4
    tight = Assembler(CharTokenizer(), SEGMENTS, SENTENCES, "")
    for i, text in enumerate(["甲", "乙", "丙", "丁"]):
        tight.finish(i, text)
    assert tight.drain() == "甲乙\n  丙丁"


def test_text_appears_in_reading_order_only():
    out = Assembler(CharTokenizer(), SEGMENTS, SENTENCES, " ")
    out.finish(1, "b")
    out.progress(0, ids("Hel"))
    assert out.drain() == "Hel"  # sentence 0 in progress; the finished sentence 1 waits for it
    out.finish(0, "Hello")
    assert out.drain() == "lo b\n  "


def test_a_partial_english_sentence_holds_back_what_normalisation_may_change():
    rules = punctuation.rules_for("latin")
    out = Assembler(CharTokenizer(), SEGMENTS[:1], SENTENCES[:1], " ", rules)
    out.progress(0, ids("Hi，"))
    first = out.drain()
    assert first == "Hi"  # the comma's spacing depends on what follows
    out.progress(0, ids("Hi，you"))
    second = out.drain()
    out.finish(0, "Hi，you。")
    assert first + second + out.drain() == "Hi, you."


class _CountingTokenizer(CharTokenizer):
    def __init__(self) -> None:
        super().__init__()
        self.decoded = 0

    def pieces_text(self, ids):
        self.decoded += 1
        return super().pieces_text(ids)


def test_the_chunk_in_progress_is_decoded_again_only_when_its_tokens_change():
    """Other sentences' steps drain too: the chunk in progress, unchanged, is not decoded again; a changed token
    (even at the same length) is."""
    tok = _CountingTokenizer()
    out = Assembler(tok, SEGMENTS, SENTENCES, " ")
    out.progress(0, ids("Hel"))
    assert out.drain() == "Hel"
    for _ in range(5):
        out.progress(1, ids("b"))  # a later sentence advances: nothing new to show
        assert out.drain() == ""
    assert tok.decoded == 1
    out.progress(0, ids("Hell"))
    assert out.drain() == "l" and tok.decoded == 2
    out.progress(0, ids("Hell")[:3] + ids("o"))  # same length, other token: recomputed (nothing final to add)
    assert out.drain() == "" and tok.decoded == 3


def test_only_the_sentence_in_progress_shows_its_progress():
    """The stream drains after a sentence's step only when that sentence can add text: the chunk in progress, with
    partial text shown at all; any other sentence's progress drains to nothing."""
    out = Assembler(CharTokenizer(), SEGMENTS, SENTENCES, " ")
    assert out.shows(0) and not out.shows(1) and not out.shows(3)
    out.progress(1, ids("b"))
    assert out.drain() == ""  # sentence 1 waits for sentence 0
    out.finish(0, "a")
    assert out.drain() == "a b" and out.shows(1) and not out.shows(0)
    out.progress(1, ids("bc"))
    assert out.drain() == "c"
    wrapped = _CleaningTokenizer()
    whole = Assembler(wrapped, SEGMENTS, SENTENCES, " ")
    assert not whole.shows(0)  # text that is cleaned up once whole: nothing before it is final


class _CleaningTokenizer(CharTokenizer):
    @property
    def cleans_up(self) -> bool:
        return True
