"""Sentence alignment in the window: the cursor or the mouse over a sentence tints it and its counterpart (both
ways), and the panes scroll together by sentence, not by proportion, without chasing each other."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QPointF, Qt
from PySide6.QtGui import QMouseEvent, QPalette, QTextCursor
from PySide6.QtWidgets import QApplication

from gui.review.review_colors import sentence_highlight
from gui.settings import Key
from gui.window.alignment import SOURCE, TARGET, line_of
from tests.gui.fakes import FakeFactory

SOURCE_TEXT = "Hello world. The model is good. Good morning."


def translated(qtbot, make_window, text: str = SOURCE_TEXT):
    window = make_window(FakeFactory())
    window.source.setPlainText(text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating, timeout=10_000)
    assert len(window.target_pane.sentences()) > 0
    return window


def put_cursor(editor, pos: int) -> None:
    cursor = editor.textCursor()
    cursor.setPosition(pos)
    editor.setTextCursor(cursor)


def point_of(editor, pos: int) -> QPoint:
    cursor = QTextCursor(editor.document())
    cursor.setPosition(pos)
    rect = editor.cursorRect(cursor)
    return QPoint(rect.x() + 2, rect.center().y())


def move_mouse(editor, point: QPoint) -> None:
    viewport = editor.viewport()
    event = QMouseEvent(
        QEvent.Type.MouseMove,
        QPointF(point),
        QPointF(viewport.mapToGlobal(point)),
        Qt.MouseButton.NoButton,
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(viewport, event)


def test_the_cursor_in_either_pane_tints_the_sentence_and_its_counterpart(qtbot, make_window):
    window = translated(qtbot, make_window)
    align = window.alignment
    # The source cursor in "The model is good." → that sentence in both panes
    put_cursor(window.source, SOURCE_TEXT.index("model"))
    assert align.current == 1
    assert align.highlighted(SOURCE) == (13, 31)
    assert align.highlighted(TARGET) == window.target_pane.sentence_range(1)
    # The target cursor in "好早上。" → "Good morning."
    put_cursor(window.target, window.target_pane.sentence_range(2)[0] + 1)
    assert align.current == 2
    assert align.highlighted(SOURCE) == (32, 45)
    assert window.source.toPlainText()[slice(*align.highlighted(SOURCE))] == "Good morning."
    # The tint is the palette's selection colour, lightened: drawn as an extra selection, never in the text
    selection = window.source.extraSelections()[0]
    fmt = selection.format
    assert fmt.background().color() == sentence_highlight(window.source.palette())
    assert window.target.toPlainText() == "你好世界。这模型词好。好早上。"


def test_the_mouse_over_a_sentence_wins_over_the_cursor_and_leaving_gives_it_back(qtbot, make_window):
    window = translated(qtbot, make_window)
    align = window.alignment
    put_cursor(window.target, 0)
    assert align.current == 0
    move_mouse(window.target, point_of(window.target, window.target_pane.sentence_range(1)[0] + 1))
    assert align.current == 1
    assert align.highlighted(SOURCE) == (13, 31)
    move_mouse(window.source, point_of(window.source, SOURCE_TEXT.index("morning")))
    assert align.current == 2
    assert align.highlighted(TARGET) == window.target_pane.sentence_range(2)
    # Below the last line: no sentence under the mouse, the cursor's counts again
    move_mouse(window.source, QPoint(5, window.source.viewport().height() - 3))
    assert align.current == 0
    move_mouse(window.source, point_of(window.source, SOURCE_TEXT.index("morning")))
    assert align.current == 2
    QApplication.sendEvent(window.source.viewport(), QEvent(QEvent.Type.Leave))
    assert align.current == 0, "the target cursor's sentence again"


def test_edits_move_the_tinted_range_with_the_text(qtbot, make_window):
    window = translated(qtbot, make_window)
    put_cursor(window.source, 0)
    window.source.setFocus()
    qtbot.keyClicks(window.source, "Oh. ")  # a new sentence before the first; the ranges shift
    put_cursor(window.source, SOURCE_TEXT.index("model") + 4)
    assert window.alignment.highlighted(SOURCE) == (17, 35)
    assert window.source.toPlainText()[17:35] == "The model is good."


def test_the_highlight_is_quiet_and_follows_the_theme(qtbot, make_window):
    from gui.theme import apply_theme

    window = translated(qtbot, make_window)
    put_cursor(window.target, 1)
    app = QApplication.instance()
    colours = {}
    for mode in ("light", "dark"):
        apply_theme(app, mode)
        QApplication.processEvents()
        window.alignment.refresh()
        selection = window.target.extraSelections()[0]
        fmt = selection.format
        tint = fmt.background().color()
        base = window.target.palette().color(QPalette.ColorRole.Base)
        text = window.target.palette().color(QPalette.ColorRole.Text)
        colours[mode] = tint
        # Between the page and the selection colour, much nearer the page: the text stays legible
        assert abs(tint.lightness() - base.lightness()) < 70, mode
        assert abs(tint.lightness() - text.lightness()) > 100, mode
    assert colours["light"] != colours["dark"]


def long_text() -> str:
    """Lines whose sentences translate to very different lengths: a long run of unknown words becomes a short
    Chinese line, a short known sentence a comparatively long one; a proportional mapping lands elsewhere."""
    lines = []
    for i in range(40):
        if i % 2:
            lines.append(" ".join(["xylophone"] * 14) + ".")
        else:
            lines.append("hello world the language model bridge good morning.")
    return "\n".join(lines)


def test_the_panes_scroll_together_by_sentence(qtbot, make_window):
    window = translated(qtbot, make_window, long_text())
    window.resize(700, 400)
    QApplication.processEvents()
    src_bar, tgt_bar = window.source.verticalScrollBar(), window.target.verticalScrollBar()
    assert src_bar.maximum() > 0 and tgt_bar.maximum() > 0
    pane = window.target_pane
    source = window.source_pane
    for i in (5, 11, 20):
        src_bar.setValue(line_of(window.source, source.sentence_range(i)[0]))
        expected = min(tgt_bar.maximum(), line_of(window.target, pane.sentence_range(i)[0]))
        assert tgt_bar.value() == expected, f"sentence {i}"
        assert src_bar.value() == line_of(window.source, source.sentence_range(i)[0]), "no feedback loop"
    proportional = round(src_bar.value() / src_bar.maximum() * tgt_bar.maximum())
    assert tgt_bar.value() != proportional, "the test text must tell sentence mapping from proportion"
    # The other way round
    tgt_bar.setValue(line_of(window.target, pane.sentence_range(8)[0]))
    assert src_bar.value() == line_of(window.source, source.sentence_range(8)[0])


def test_scrolling_together_can_be_switched_off(qtbot, make_window, settings):
    window = translated(qtbot, make_window, long_text())
    window.resize(700, 400)
    QApplication.processEvents()
    settings.set(Key.SYNC_SCROLL, False)
    assert not window.sync_scroll_action.isChecked()
    tgt_bar = window.target.verticalScrollBar()
    before = tgt_bar.value()
    window.source.verticalScrollBar().setValue(line_of(window.source, window.source_pane.sentence_range(9)[0]))
    assert tgt_bar.value() == before
    window.sync_scroll_action.trigger()
    assert settings.get(Key.SYNC_SCROLL) is True
    window.source.verticalScrollBar().setValue(line_of(window.source, window.source_pane.sentence_range(13)[0]))
    assert tgt_bar.value() == min(tgt_bar.maximum(), line_of(window.target, window.target_pane.sentence_range(13)[0]))


def test_a_source_typed_since_the_translation_has_no_counterparts(qtbot, make_window):
    window = make_window(FakeFactory())
    window.source.setPlainText(SOURCE_TEXT)
    window.translate()
    window.source.moveCursor(QTextCursor.MoveOperation.End)
    qtbot.keyClicks(window.source, " More")  # typed while it translates: the spans no longer fit this text
    qtbot.waitUntil(lambda: not window.translating, timeout=10_000)
    assert window.source_pane.sentence_count() == 0
    put_cursor(window.target, 1)
    assert window.alignment.highlighted(SOURCE) is None
    assert window.alignment.highlighted(TARGET) == window.target_pane.sentence_range(0)


def test_a_sentence_split_in_parts_is_tinted_whole(qtbot):
    from engine.results import SentenceResult, Translation
    from gui.window.alignment import Alignment
    from gui.window.source_pane import SourcePane
    from gui.window.target_pane import TargetPane

    source_text = "A very long sentence. Short."
    text = "第一部分，第二部分。短。"
    rows = [
        SentenceResult(0, "A very long sentence.", (0, 21), (0, 5)),
        SentenceResult(1, "A very long sentence.", (0, 21), (5, 10)),
        SentenceResult(2, "Short.", (22, 28), (10, 12)),
    ]
    source, target = SourcePane(), TargetPane()
    qtbot.addWidget(source)
    qtbot.addWidget(target)
    align = Alignment(source, target)
    source.editor.setPlainText(source_text)
    target.editor.setPlainText(text)
    target.set_result(Translation(text=text, sentences=rows), source_text)
    source.set_sentences(rows, source_text)
    put_cursor(source.editor, 5)
    assert align.highlighted(TARGET) == (0, 10) and align.highlighted(SOURCE) == (0, 21)
    put_cursor(target.editor, 7)
    assert align.highlighted(TARGET) == (0, 10)
    put_cursor(target.editor, 11)
    assert align.highlighted(TARGET) == (10, 12) and align.highlighted(SOURCE) == (22, 28)
