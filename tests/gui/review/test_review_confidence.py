"""Confidence: unsure words get a quiet wavy underline (threshold and off switch from the settings) drawn as extra
selections that never enter the text; flagged sentences get a margin mark with the reasons as tooltip."""

from __future__ import annotations

import math

from PySide6.QtCore import QEvent, QPoint
from PySide6.QtGui import QHelpEvent, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QApplication, QToolTip

from engine.pipeline.guards import check_sentence
from engine.results import FLAG_LENGTH, Flag, SentenceResult, Translation
from gui.review.confidence import unsure_spans
from gui.review.review_colors import flag_mark, unsure_underline
from gui.review.review_editor import MARK_EDIT, MARK_FLAG
from gui.settings import Key
from gui.window.target_pane import TargetPane
from tests.gui.fakes import FakeFactory, FakeTranslator

P = math.log  # a probability as a log-probability


def sentence(text: str, pieces: list[tuple[int, int]], probs: list[float]) -> SentenceResult:
    return SentenceResult(
        0,
        "src",
        (0, 3),
        (0, len(text)),
        tokens=tuple(range(len(pieces))),
        logprobs=tuple(P(p) for p in probs),
        token_spans=tuple(pieces),
        text=text,
    )


def test_unsure_tokens_below_the_threshold_are_grouped_into_words():
    s = sentence("这模型很好。", [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 6)], [0.9, 0.2, 0.3, 0.9, 0.5, 0.1])
    assert unsure_spans(s, "这模型很好。", 35) == [(1, 3)], "模 and 型 touch: one underline; 。 alone: never"
    assert unsure_spans(s, "这模型很好。", 60) == [(1, 3), (4, 5)]
    assert unsure_spans(s, "这模型很好。", 10) == []
    # A piece of an English word marks the whole word; words apart stay apart
    e = sentence("hello world", [(0, 3), (3, 5), (6, 11)], [0.9, 0.1, 0.2])
    assert unsure_spans(e, "hello world", 35) == [(0, 5), (6, 11)]
    assert unsure_spans(SentenceResult(0, "x", (0, 1), (0, 2), text="你好"), "你好", 99) == [], "no scores"


def pane_with(qtbot, result: Translation) -> TargetPane:
    pane = TargetPane()
    qtbot.addWidget(pane)
    pane.resize(520, 320)
    pane.show()
    qtbot.waitExposed(pane)
    pane.editor.setPlainText(result.text)
    pane.set_result(result, "")
    return pane


def fake_result(text: str) -> Translation:
    return FakeTranslator(".").translate(text)


def test_the_underline_is_a_wave_in_the_theme_colour_and_follows_threshold_and_switch(qtbot):
    result = fake_result("Hello world. The model is good. A cat sat 2021.")
    pane = pane_with(qtbot, result)
    text = pane.editor.toPlainText()
    # Unknown words ("is", "a", "cat", …) come out as 词 at 20 %: below the default 35 %
    underlined = pane.underlined()
    assert [text[a:b] for a, b in underlined] == ["词", "词词词词"]
    selections = pane.editor.extraSelections()
    assert len(selections) == 2
    selection = selections[0]
    fmt = selection.format
    assert fmt.underlineStyle() == QTextCharFormat.UnderlineStyle.WaveUnderline
    assert fmt.underlineColor() == unsure_underline(pane.editor.palette())
    pane.set_review_options(True, 15)
    assert pane.underlined() == [], "20 % is not unsure below 15 %"
    pane.set_review_options(True, 95)
    assert len(pane.underlined()) > 2, "below 95 % even the dictionary words (92 %) are unsure"
    pane.set_review_options(False, 95)
    assert pane.underlined() == [] and pane.editor.extraSelections() == []


def test_the_underline_never_enters_the_text(qtbot):
    result = fake_result("The model is good.")
    pane = pane_with(qtbot, result)
    assert pane.underlined()
    cursor = QTextCursor(pane.editor.document())
    for pos in range(1, len(result.text) + 1):
        cursor.setPosition(pos)
        assert cursor.charFormat().underlineStyle() == QTextCharFormat.UnderlineStyle.NoUnderline
    assert pane.editor.toPlainText() == result.text
    html = pane.editor.document().toHtml()
    assert "wave" not in html and "underline" not in html


def test_an_edited_sentence_loses_its_underline(qtbot):
    pane = pane_with(qtbot, fake_result("The model is good. A cat."))
    assert len(pane.underlined()) == 2
    cursor = pane.editor.textCursor()
    cursor.setPosition(pane.sentence_range(1)[0])
    pane.editor.setTextCursor(cursor)
    qtbot.keyClicks(pane.editor, "Z")
    assert len(pane.underlined()) == 1, "the user's own words are not the model's guesses"


def test_the_window_applies_the_review_settings(qtbot, make_window, settings):
    window = make_window(FakeFactory())
    window.source.setPlainText("The model is good.")
    window.translate()
    qtbot.waitUntil(lambda: not window.translating, timeout=5000)
    assert window.target_pane.underlined()
    settings.set(Key.CONFIDENCE_UNDERLINE, False)
    assert window.target_pane.underlined() == [] and not window.underline_action.isChecked()
    window.underline_action.trigger()
    assert settings.get(Key.CONFIDENCE_UNDERLINE) and window.target_pane.underlined()
    settings.set(Key.CONFIDENCE_THRESHOLD, 10)
    assert window.target_pane.underlined() == []
    dialog = window.open_settings()
    page = dialog.review
    assert page.threshold.value() == 10 and page.underline.isChecked() and page.sync_scroll.isChecked()
    page.threshold.setValue(50)
    page.sync_scroll.setChecked(False)
    dialog.accept()
    assert settings.get(Key.CONFIDENCE_THRESHOLD) == 50 and settings.get(Key.SYNC_SCROLL) is False
    assert window.target_pane.underlined()
    assert not window.alignment.sync


def test_a_flagged_sentence_has_a_margin_mark_with_its_reasons(qtbot):
    result = fake_result("Hello world. The year 2021 was good.")
    pane = pane_with(qtbot, result)
    marks = pane.editor.visible_marks()
    assert [(m.kind, m.start, m.end) for m, _, _ in marks] == [(MARK_FLAG, *pane.sentence_range(1))]
    mark, top, bottom = marks[0]
    assert "“2021” is missing from the translation" in mark.tooltip
    assert pane.editor.margin_tooltip((top + bottom) // 2) == mark.tooltip
    assert pane.editor.margin_tooltip(bottom + 40) == ""
    # The mark is painted in the theme's flag colour, in the margin beside the sentence's line
    image = pane.editor.margin.grab().toImage()
    colour = flag_mark(pane.editor.palette())
    found = any(
        _close(image.pixelColor(x, y), colour)
        for x in range(image.width())
        for y in range(max(0, top), min(image.height(), bottom))
    )
    assert found
    # A tooltip event over it shows the reasons
    margin = pane.editor.margin
    point = QPoint(4, (top + bottom) // 2)
    QApplication.sendEvent(margin, QHelpEvent(QEvent.Type.ToolTip, point, margin.mapToGlobal(point)))
    assert QToolTip.text() == mark.tooltip
    QToolTip.hideText()


def _close(a, b) -> bool:
    return abs(a.red() - b.red()) < 12 and abs(a.green() - b.green()) < 12 and abs(a.blue() - b.blue()) < 12


def test_an_unplaced_glossary_term_is_said_once_in_the_tooltip(qtbot):
    """The engine's guards already flag each term they could not place (guards.check_sentence): the tooltip said
    it twice, once from the flag and once from `unmet` (seen with a Firefox model and "{name}" kept verbatim)."""
    source, text = "Send {name} the report.", "发送报告。"
    flags = check_sentence(source, text, source_tokens=8, target_tokens=4, unmet=("{name}",))
    result = Translation(
        text=text,
        sentences=[SentenceResult(0, source, (0, len(source)), (0, len(text)), flags=flags, unmet=("{name}",))],
    )
    reasons = pane_with(qtbot, result).flag_reasons(0)
    assert [r for r in reasons if "could not be placed" in r] == [
        "The glossary term “{name}” could not be placed in the translation."
    ], reasons
    assert any("is missing from the translation" in r for r in reasons), "the other guard's reason stays"


def test_engine_flags_and_unmet_terms_are_worded_for_the_tooltip(qtbot):
    text = "太长了。你好。"
    result = Translation(
        text=text,
        sentences=[
            SentenceResult(0, "Too long.", (0, 9), (0, 4), flags=(Flag(FLAG_LENGTH, ""),), unmet=("Qiao",)),
            SentenceResult(1, "Hello.", (10, 16), (4, 7)),
        ],
    )
    pane = pane_with(qtbot, result)
    reasons = pane.flag_reasons(0)
    assert reasons[0] == "The translation is much longer or shorter than the source suggests."
    assert "“Qiao”" in reasons[1]
    assert pane.flag_reasons(1) == []
    cursor = pane.editor.textCursor()
    cursor.setPosition(5)
    pane.editor.setTextCursor(cursor)
    qtbot.keyClicks(pane.editor, "X")
    kinds = sorted(m.kind for m, _, _ in pane.editor.visible_marks())
    assert kinds == [MARK_EDIT, MARK_FLAG]
