"""The translation's editor: a plain-text editor with layers of extra selections (alignment highlight, unsure
underlines) and a narrow margin beside it for the sentences' marks (flagged by the guards, the user's own, kept
from other settings).

Nothing here enters the text: extra selections and the margin are painted over and beside it, so copying, the
autosave and the history get exactly the characters shown.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPoint, QPointF, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QHelpEvent, QKeyEvent, QPainter, QPaintEvent, QPalette, QPolygonF, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from gui.review.review_colors import edit_mark, flag_mark, stale_mark

# Drawn in this order; later layers' formats win where they overlap (the alignment tint over the user's own tint)
LAYERS = ("owned", "highlight", "underline")

MARK_FLAG = "flag"  # the guards flagged the sentence
MARK_EDIT = "edit"  # the user's own text (typed, chosen or remembered)
MARK_STALE = "stale"  # kept text that no longer matches the settings (another script, glossary or direction)


@dataclass(frozen=True)
class Mark:
    """A margin mark beside the lines of characters start..end, with what it means (the tooltip)."""

    start: int
    end: int
    kind: str
    tooltip: str


def text_after_change(editor: QPlainTextEdit, old: str, pos: int, removed: int) -> str:
    """The editor's text after QTextDocument.contentsChange(pos, removed, …), built from `old` (the text before)
    and the changed part only, so a 20 MB text is not copied out of the document on every key; the whole text when
    the reported numbers do not add up (Qt sometimes counts the final paragraph separator)."""
    doc = editor.document()
    length = doc.characterCount() - 1
    removed = max(0, min(removed, len(old) - pos))
    added = length - (len(old) - removed)
    if pos < 0 or added < 0 or pos + added > length:
        return editor.toPlainText()
    cursor = QTextCursor(doc)
    cursor.setPosition(pos)
    cursor.setPosition(pos + added, QTextCursor.MoveMode.KeepAnchor)
    part = cursor.selectedText().replace("\u2029", "\n").replace("\u00a0", " ")
    return old[:pos] + part + old[pos + removed :]


def _quote(sentence: str, limit: int = 12) -> str:
    sentence = sentence.strip()
    return f"“{sentence if len(sentence) <= limit else sentence[: limit - 1] + '…'}”"


class SelectionLayers:
    """Named lists of extra selections combined into one editor's `setExtraSelections` (each user sets its own)."""

    def __init__(self, editor: QPlainTextEdit, names: tuple[str, ...] = LAYERS) -> None:
        self.editor = editor
        self._layers: dict[str, list[QTextEdit.ExtraSelection]] = {name: [] for name in names}

    def set(self, name: str, selections: list[QTextEdit.ExtraSelection]) -> None:
        self._layers[name] = selections
        self.editor.setExtraSelections([s for layer in self._layers.values() for s in layer])

    def get(self, name: str) -> list[QTextEdit.ExtraSelection]:
        return list(self._layers[name])


class ReviewMargin(QWidget):
    """The strip left of the text: one mark per flagged or user-owned sentence, its reasons as tooltip."""

    def __init__(self, editor: ReviewEditor) -> None:
        super().__init__(editor)
        self.editor = editor
        self.setObjectName("reviewMargin")
        self.setMouseTracking(True)

    def sizeHint(self) -> QSize:
        return QSize(self.editor.margin_width(), 0)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.editor.palette()
        painter.fillRect(event.rect(), palette.color(QPalette.ColorRole.Base))
        width = self.width()
        for mark, top, bottom in self.editor.visible_marks():
            if mark.kind == MARK_EDIT:
                # A thin bar along the sentence's lines, like an editor's change bar
                painter.fillRect(QRectF(width - 4, top + 1, 2.5, max(2, bottom - top - 2)), edit_mark(palette))
            elif mark.kind == MARK_STALE:
                # A warning triangle on the sentence's first line (a flag's dot is round)
                size = min(width - 3, 9)
                line = self.editor.fontMetrics().height()
                y = top + (min(line, bottom - top) - size) / 2
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(stale_mark(palette))
                painter.drawPolygon(
                    QPolygonF([QPointF(1 + size / 2, y), QPointF(1 + size, y + size), QPointF(1, y + size)])
                )
            else:
                size = min(width - 4, 8)
                line = self.editor.fontMetrics().height()
                y = top + (min(line, bottom - top) - size) / 2
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(flag_mark(palette))
                painter.drawEllipse(QRectF(1, y, size, size))
        painter.end()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            assert isinstance(event, QHelpEvent)
            text = self.editor.margin_tooltip(event.pos().y())
            if text:
                QToolTip.showText(event.globalPos(), text, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)


class ReviewEditor(QPlainTextEdit):
    """A QPlainTextEdit with selection layers, a marks margin and a signal when its whole text is replaced."""

    about_to_replace = Signal()  # setPlainText / clear by the program is about to drop the sentences shown
    text_replaced = Signal()  # ...and the new text is in
    typed_while_read_only = Signal()  # a key that would type was pressed while the text cannot be edited

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.replacing = False  # inside setPlainText / clear
        self.layers = SelectionLayers(self)
        self.margin = ReviewMargin(self)
        self.marks: Callable[[int, int], list[Mark]] = lambda first, last: []
        self.updateRequest.connect(self._update_margin)
        self.setViewportMargins(self.margin_width(), 0, 0, 0)

    # ---- the program replacing everything --------------------------------------------------------------------

    def setPlainText(self, text: str) -> None:
        self.replacing = True  # the changes this makes are the program's, not the user's
        self.about_to_replace.emit()
        try:
            super().setPlainText(text)
        finally:
            self.replacing = False
        self.text_replaced.emit()

    def clear(self) -> None:
        self.replacing = True
        self.about_to_replace.emit()
        try:
            super().clear()
        finally:
            self.replacing = False
        self.text_replaced.emit()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if self.isReadOnly() and event.text() and event.text().isprintable():
            self.typed_while_read_only.emit()
        super().keyPressEvent(event)

    # ---- the margin ----------------------------------------------------------------------------------------

    def margin_width(self) -> int:
        return max(10, self.fontMetrics().height() // 2 + 4)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self.margin.setGeometry(QRect(rect.left(), rect.top(), self.margin_width(), rect.height()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self.setViewportMargins(self.margin_width(), 0, 0, 0)
            rect = self.contentsRect()
            self.margin.setGeometry(QRect(rect.left(), rect.top(), self.margin_width(), rect.height()))

    def _update_margin(self, rect: QRect, dy: int) -> None:
        if dy:
            self.margin.scroll(0, dy)
        else:
            self.margin.update(0, rect.y(), self.margin.width(), rect.height())

    def visible_range(self) -> tuple[int, int]:
        """The first and last character positions the viewport shows."""
        view = self.viewport().rect()
        first = self.cursorForPosition(QPoint(0, 0)).position()
        last = self.cursorForPosition(QPoint(view.width() - 1, view.height() - 1)).position()
        return first, last

    def line_span(self, start: int, end: int) -> tuple[int, int]:
        """Top and bottom (viewport y) of the lines that characters start..end are on."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(start)
        top = self.cursorRect(cursor).top()
        cursor.setPosition(max(start, end))
        bottom = self.cursorRect(cursor).bottom()
        return top, bottom + 1

    def visible_marks(self) -> list[tuple[Mark, int, int]]:
        first, last = self.visible_range()
        out = []
        for mark in self.marks(first, last):
            top, bottom = self.line_span(mark.start, mark.end)
            out.append((mark, top, bottom))
        return out

    def margin_tooltip(self, y: int) -> str:
        """The reasons of every mark beside viewport line `y`, one per line; when the line holds marks of several
        sentences, each reason is preceded by the start of its sentence, so the reader knows which is which."""
        marks = [mark for mark, top, bottom in self.visible_marks() if top <= y < bottom and mark.tooltip]
        if len({(m.start, m.end) for m in marks}) > 1:
            text = self.toPlainText()
            lines = [f"{_quote(text[m.start : m.end])}: {line}" for m in marks for line in m.tooltip.split("\n")]
        else:
            lines = [line for m in marks for line in m.tooltip.split("\n")]
        return "\n".join(dict.fromkeys(lines))

    def update_margin(self) -> None:
        self.margin.update()
