"""Word alignment in the window (gui.review.word_alignment): the ranges a target word and a source word map to,
the model text mapped onto the shown sentence, what WordAligner asks the worker and keeps, and a Marian model (no
alignment) whose highlight stays the sentence's alone. The real window on a Bergamot model: tests/gui/
test_real_window_bergamot.py."""

from __future__ import annotations

import threading

from PySide6.QtCore import QObject, Signal

from engine.options import TranslationOptions
from engine.pipeline.translator import Translator
from gui.review.word_alignment import (
    WordAligner,
    char_map,
    mapped,
    merged,
    sources_of_target,
    targets_of_source,
    unmapped,
)
from gui.window.alignment import SOURCE, TARGET
from tests.gui.review.test_review_alignment import move_mouse, point_of

SOURCE_TEXT = "See you tomorrow."
TARGET_TEXT = "明天见。"
# Target tokens: 明天 | 见 | 。; what each was written from in the source: "tomor" (a piece of a word), "See", "."
TOKEN_SPANS = ((0, 2), (2, 3), (3, 4))
LINKS = ((8, 13), (0, 3), (16, 17))


def test_a_target_word_maps_to_the_whole_source_words_its_tokens_came_from():
    word, sources = sources_of_target(LINKS, TOKEN_SPANS, SOURCE_TEXT, TARGET_TEXT, 0)
    assert word == (0, 2) and sources == [(8, 16)], "the piece “tomor” is shown as the word “tomorrow”"
    assert sources_of_target(LINKS, TOKEN_SPANS, SOURCE_TEXT, TARGET_TEXT, 1) == ((2, 3), [(0, 3)])
    # A token that adds no character, or one outside the sentence: nothing
    assert sources_of_target(LINKS, ((0, 2), (2, 2)), SOURCE_TEXT, TARGET_TEXT, 1) == (None, [])
    assert sources_of_target(LINKS, TOKEN_SPANS, SOURCE_TEXT, TARGET_TEXT, 7) == (None, [])


def test_an_english_target_word_of_several_pieces_gathers_their_sources():
    # zh→en: "tomorrow" written as "▁tomor" + "row", from 明 and 天
    word, sources = sources_of_target(((0, 1), (1, 2)), ((0, 5), (5, 8)), "明天", "tomorrow", 1)
    assert word == (0, 8) and sources == [(0, 2)]


def test_a_source_word_maps_to_the_target_words_written_from_it():
    assert targets_of_source(LINKS, TOKEN_SPANS, SOURCE_TEXT, TARGET_TEXT, SOURCE_TEXT.index("morrow")) == (
        (8, 16),
        [(0, 2)],
    )
    assert targets_of_source(LINKS, TOKEN_SPANS, SOURCE_TEXT, TARGET_TEXT, 1) == ((0, 3), [(2, 3)])
    assert targets_of_source(LINKS, TOKEN_SPANS, SOURCE_TEXT, TARGET_TEXT, 3) == (None, []), "a space"
    assert targets_of_source(LINKS, TOKEN_SPANS, SOURCE_TEXT, TARGET_TEXT, 5)[1] == [], "“you”: nothing from it"


def test_spans_are_merged_and_the_empty_ones_dropped():
    assert merged([(5, 7), (0, 2), (2, 3), (4, 4), (6, 9)]) == [(0, 3), (5, 9)]


def test_the_model_text_is_found_in_the_shown_sentence():
    # wrapped lines joined with a space: the same length, one for one
    assert char_map("See you\ntomorrow.".replace("\n", " "), "See you\ntomorrow.")[8] == 8
    # a part of a split sentence: where it is in the whole
    assert char_map("tomorrow.", "See you tomorrow.") == list(range(8, 17))
    # a hyphen taken out where a word was wrapped: the characters after it move by two
    where = char_map("See tomorrow.", "See tomor-\nrow.")
    assert where[4:9] == [4, 5, 6, 7, 8] and where[9:13] == [11, 12, 13, 14]
    assert mapped([(4, 12)], where) == [(4, 14)]
    assert unmapped(12, where) == 10 and unmapped(9, where) is None


class FakeAligningWorker(QObject):
    alignment_ready = Signal(int, object)
    alignment_failed = Signal(int, str, bool)
    model_ready = Signal(object)

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[tuple[str, tuple[int, ...], TranslationOptions]] = []

    def align(self, source, tokens, options) -> int:
        self.asked.append((source, tuple(tokens), options))
        return len(self.asked)


def test_the_aligner_asks_once_per_sentence_and_keeps_the_answer(qtbot):
    worker = FakeAligningWorker()
    options = TranslationOptions(beams=2)
    words = WordAligner(worker, lambda: options)
    changed: list[bool] = []
    words.changed.connect(lambda: changed.append(True))
    assert words.links("a", (1, 2)) is None
    assert words.want("a", (1, 2)) and not words.want("a", [1, 2]), "asked already: not again"
    assert worker.asked == [("a", (1, 2), options)]
    worker.alignment_ready.emit(1, ((0, 1), (0, 1)))
    assert words.links("a", (1, 2)) == ((0, 1), (0, 1)) and changed == [True]
    assert not words.want("a", (1, 2)), "known: not asked"
    # Another sentence, then an answer that is no one's (an old id): dropped
    assert words.want("b", (3,))
    worker.alignment_ready.emit(99, ((0, 1),))
    assert words.links("b", (3,)) is None
    # A failure for one sentence: not asked again, no words; another model forgets every answer
    worker.alignment_failed.emit(2, "internal-error: boom", False)
    assert words.links("b", (3,)) == () and not words.want("b", (3,))
    worker.model_ready.emit(object())
    assert words.links("a", (1, 2)) is None and words.want("a", (1, 2))


def test_a_model_that_cannot_align_is_not_asked_again_until_another_loads(qtbot):
    worker = FakeAligningWorker()
    words = WordAligner(worker, TranslationOptions)
    assert words.want("a", (1,))
    worker.alignment_failed.emit(1, "this model gives no word alignment", True)
    assert not words.supported and words.reason == "this model gives no word alignment"
    assert not words.want("b", (2,)) and len(worker.asked) == 1
    worker.model_ready.emit(object())
    assert words.supported and words.want("b", (2,))


def test_a_worker_without_alignment_leaves_the_sentences_alone(qtbot):
    class Plain(QObject):
        model_ready = Signal(object)

    words = WordAligner(Plain(), TranslationOptions)
    assert not words.supported and not words.want("a", (1,))


def test_on_a_marian_model_the_highlight_stays_the_sentences(qtbot, make_window, monkeypatch):
    """The tiny Marian bundle gives no alignment: asked once (on the worker), then never again; the tint is the
    sentence's, as before word alignment existed, and no message appears."""
    calls: list[threading.Thread] = []
    real = Translator.alignment

    def spy(self, source, tokens, options=None):
        calls.append(threading.current_thread())
        return real(self, source, tokens, options)

    monkeypatch.setattr(Translator, "alignment", spy)
    window = make_window()
    window.source.setPlainText("Thank you very much. See you tomorrow.")
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and bool(window.target_pane.sentences()), timeout=10_000)
    align, pane = window.alignment, window.target_pane
    status = window.statusBar().currentMessage()
    move_mouse(window.target, point_of(window.target, pane.sentence_range(0)[0] + 1))
    qtbot.waitUntil(lambda: not align.words.supported, timeout=10_000)
    assert len(calls) == 1 and calls[0] is not threading.main_thread()
    assert align.highlighted(TARGET) == pane.sentence_range(0)
    assert align.highlighted(SOURCE) == window.source_pane.sentence_range(0)
    assert align.word_highlighted(SOURCE) == [] and align.word_highlighted(TARGET) == []
    assert [s.cursor.selectionStart() for s in window.source.extraSelections()] == [0], "one tint: the sentence"
    move_mouse(window.target, point_of(window.target, pane.sentence_range(1)[0] + 1))
    move_mouse(window.source, point_of(window.source, 2))
    assert align.current == 0 and len(calls) == 1, "not asked again"
    assert window.statusBar().currentMessage() == status
