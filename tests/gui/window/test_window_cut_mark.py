"""A sentence cut by the engine's length limit has a margin mark in the real window (real worker, real engine on
the tiny fixture model), its reason as tooltip; the same sentences under the measured limit have none."""

from __future__ import annotations

import pytest

from engine.pipeline import length_limits
from engine.pipeline.length_limits import LengthRule
from engine.results import CUT_DETAIL, FLAG_CUT
from gui.review.review_editor import MARK_FLAG

TEXT = "Good morning, everyone! Thank you very much."


def _translate(qtbot, window, text: str) -> str:
    window.source.setPlainText(text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and bool(window.target.toPlainText()), timeout=10_000)
    return window.target.toPlainText()


def _cut_marks(window) -> list[tuple[int, int, str]]:
    pane = window.target_pane
    marks = [(m, top, bottom) for m, top, bottom in pane.editor.visible_marks() if m.kind == MARK_FLAG]
    return [(m.start, m.end, pane.editor.margin_tooltip((top + bottom) // 2)) for m, top, bottom in marks]


@pytest.fixture
def window(make_window):
    return make_window()  # the real engine on the committed tiny en→zh model


def test_a_cut_sentence_is_marked_in_the_margin_with_its_reason(qtbot, window, monkeypatch):
    full = _translate(qtbot, window, TEXT)
    assert full == "大家早上好！非常感谢。" and _cut_marks(window) == []
    # Room for 2 tokens in the en→zh rule (read when a run starts; part of the sentence cache's key, so the first
    # run's uncut sentences are not reused): the window's next run stops both sentences there.
    monkeypatch.setitem(length_limits.LENGTH_RULES, "en-zh", LengthRule(0.0, 2))
    cut = _translate(qtbot, window, TEXT + " ")
    assert len(cut) < len(full)
    pane = window.target_pane
    results = pane.ranges.results
    assert [[f.kind for f in r.flags if f.kind == FLAG_CUT] for r in results] == [[FLAG_CUT], [FLAG_CUT]]
    assert [len(r.tokens) for r in results] == [2, 2]
    marks = _cut_marks(window)
    assert [(a, b) for a, b, _ in marks] == [pane.sentence_range(0), pane.sentence_range(1)]
    assert all(CUT_DETAIL in tip for _, _, tip in marks), marks
    monkeypatch.undo()  # the measured rule again: the whole sentences, no marks
    assert _translate(qtbot, window, TEXT) == full and _cut_marks(window) == []


def test_a_cut_sentence_keeps_its_mark_and_reason_after_a_restart(qtbot, make_window, monkeypatch):
    """README: a sentence cut at the length limit is always marked, also when the translation comes back from the
    last session (it was shown "Restored" with no mark at all)."""
    first = make_window()
    monkeypatch.setitem(length_limits.LENGTH_RULES, "en-zh", LengthRule(0.0, 2))
    cut = _translate(qtbot, first, TEXT)
    before = _cut_marks(first)
    assert len(before) == 2 and all(CUT_DETAIL in tip for _, _, tip in before), before
    first.shutdown()  # quit: the translation is written at close
    again = make_window()
    assert again.target.toPlainText() == cut and "Restored" in again.target_pane.info.text()
    assert _cut_marks(again) == before, "the same marks on the same sentences, with the same reasons"
    assert [[f.kind for f in r.flags] for r in again.target_pane.ranges.results] == [[FLAG_CUT], [FLAG_CUT]]
