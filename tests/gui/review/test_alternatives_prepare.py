"""The pointer resting on a sentence (or the text cursor entering one) asks the worker to decode its start ahead of
the click (`prepare_alternatives`), once per sentence as it is now; never for an edited sentence, between
sentences, or while the popup is open."""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QMouseEvent, QTextCursor
from PySide6.QtWidgets import QApplication

from tests.gui.review.test_alternatives_controller import (  # noqa: F401
    BRIDGE,
    FIRST,
    SECOND,
    SHOWN,
    THIRD,
    open_on_bridge,
    point_of,
    window,
)
from tests.gui.review_fakes import fake_alternatives


def hover(w, char: int, buttons=Qt.MouseButton.NoButton) -> None:
    """A mouse move over character `char` of the target editor (the pointer resting there)."""
    viewport = w.target.editor.viewport()
    at = QPointF(point_of(w.target.editor, char))
    event = QMouseEvent(
        QMouseEvent.Type.MouseMove,
        at,
        QPointF(viewport.mapToGlobal(at.toPoint())),
        Qt.MouseButton.NoButton,
        buttons,
        Qt.KeyboardModifier.NoModifier,
    )
    QApplication.sendEvent(viewport, event)


def test_hovering_a_sentence_prepares_it_once(qtbot, window):  # noqa: F811
    assert window.target.editor.viewport().hasMouseTracking(), "moves without a button pressed reach the filter"
    hover(window, BRIDGE)
    hover(window, BRIDGE - 1)  # the same sentence: asked already
    ((_rid, source, tokens, options),) = window.worker.of("prepare")
    assert (source, tokens, options) == (SECOND[0], SECOND[1], window.current_options)
    hover(window, SHOWN.index("河"))
    assert [c[1] for c in window.worker.of("prepare")] == [SECOND[0], THIRD[0]]
    hover(window, BRIDGE)  # back: the worker keeps only the last one, so it is asked again
    assert [c[1] for c in window.worker.of("prepare")] == [SECOND[0], THIRD[0], SECOND[0]]


def test_no_prepare_while_dragging_for_edited_sentences_or_with_the_popup_open(qtbot, window):  # noqa: F811
    hover(window, BRIDGE, buttons=Qt.MouseButton.LeftButton)  # a drag-selection
    assert window.worker.of("prepare") == []
    cursor = QTextCursor(window.target.editor.document())
    cursor.setPosition(BRIDGE)
    cursor.insertText("大")  # sentence 1 is the user's now
    hover(window, BRIDGE)
    assert window.worker.of("prepare") == []
    assert window.alternatives.prepare_at_char(SHOWN.index("河") + 1) is True
    assert window.alternatives.prepare_at_char(SHOWN.index("河") + 1) is False, "asked already"


def test_the_text_cursor_entering_a_sentence_prepares_it(qtbot, window):  # noqa: F811
    editor = window.target.editor
    cursor = editor.textCursor()
    cursor.setPosition(SHOWN.index("河"))
    editor.setTextCursor(cursor)
    assert [c[1] for c in window.worker.of("prepare")] == [THIRD[0]]


def test_a_new_text_prepares_again_and_an_open_popup_holds_it(qtbot, window):  # noqa: F811
    hover(window, BRIDGE)
    rid = open_on_bridge(qtbot, window)
    window.worker.alternatives_ready.emit(rid, fake_alternatives(SECOND[1], 4, 3))
    before = len(window.worker.of("prepare"))
    hover(window, SHOWN.index("河"))
    assert len(window.worker.of("prepare")) == before, "the popup is open: the click's start is kept"
    window.alternatives.popup.close()
    hover(window, BRIDGE)
    asked = len(window.worker.of("prepare"))
    window.target.show_sentences([FIRST, SECOND, THIRD])  # translated again (the same text, maybe another model)
    hover(window, BRIDGE)
    assert len(window.worker.of("prepare")) > asked and window.worker.of("prepare")[-1][1] == SECOND[0]
