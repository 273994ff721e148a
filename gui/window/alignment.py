"""Sentence alignment between the panes: the sentence under the mouse (or, without one, at the cursor of the pane
last used) is tinted in both panes, and scrolling one pane scrolls the other to the same sentence.

Scrolling maps by sentence, not by proportion: the other pane shows the counterpart of the sentence at the top,
as far into it as this pane is into its own. Without sentences (while streaming, an old result, a source typed
since) the panes scroll on their own: a proportion would be wrong for any text whose parts translate to different
lengths, and scrolling a long source to follow the streamed end would lay it all out. Each follow is done with the
other pane's scroll signal ignored, so the panes never chase each other.
"""

from __future__ import annotations

from bisect import bisect_left

from PySide6.QtCore import QEvent, QObject, QPoint, Slot
from PySide6.QtGui import QMouseEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

from gui.review.review_colors import sentence_highlight
from gui.window.source_pane import SourcePane
from gui.window.target_pane import TargetPane

SOURCE, TARGET = "source", "target"


def line_of(editor: QPlainTextEdit, pos: int) -> int:
    """The visual line (the vertical scroll bar's unit in a QPlainTextEdit) character `pos` is on."""
    block = editor.document().findBlock(pos)
    if not block.isValid():
        return 0
    layout = block.layout()
    line = layout.lineForTextPosition(pos - block.position()) if layout is not None else None
    return block.firstLineNumber() + (line.lineNumber() if line is not None and line.isValid() else 0)


def position_of_line(editor: QPlainTextEdit, line: int) -> int:
    """The first character of visual line `line`."""
    doc = editor.document()
    block = doc.findBlockByLineNumber(line)
    if not block.isValid():
        return max(0, doc.characterCount() - 1)
    layout = block.layout()
    within = line - block.firstLineNumber()
    if layout is not None and 0 <= within < layout.lineCount():
        return block.position() + layout.lineAt(within).textStart()
    return block.position()


class Alignment(QObject):
    """Highlights aligned sentences and keeps the panes' scrolling together (Key.SYNC_SCROLL: `sync`)."""

    def __init__(self, source: SourcePane, target: TargetPane, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.source = source
        self.target = target
        self.sync = True
        self.current: int | None = None  # the sentence highlighted now
        self._hover: tuple[str, int | None] | None = None  # (side, sentence) while the mouse is over a pane
        self._active = TARGET  # the pane whose cursor counts when the mouse is not over a sentence
        self._following = False
        # Kept, not asked again: events still come while the window is being destroyed
        self._watched = [
            (SOURCE, source.editor, source.editor.viewport()),
            (TARGET, target.editor, target.editor.viewport()),
        ]
        for side, editor in ((SOURCE, source.editor), (TARGET, target.editor)):
            editor.cursorPositionChanged.connect(lambda side=side: self._cursor_moved(side))
            editor.viewport().setMouseTracking(True)
            editor.viewport().installEventFilter(self)
            editor.installEventFilter(self)
            bar = editor.verticalScrollBar()
            bar.valueChanged.connect(lambda _value, side=side: self._scrolled(side))
        target.sentences_changed.connect(self.refresh)

    # ---- which sentence --------------------------------------------------------------------------------------

    def _pane(self, side: str) -> SourcePane | TargetPane:
        return self.source if side == SOURCE else self.target

    def _count(self) -> int:
        return len(self.target.ranges)

    def _range(self, side: str, i: int) -> tuple[int, int] | None:
        if i >= self._count() or (side == SOURCE and i >= self.source.sentence_count()):
            return None
        if side == TARGET:  # every part of a sentence the engine split
            rows = self.target.rows_of(i)
            return self.target.sentence_range(rows[0])[0], self.target.sentence_range(rows[-1])[1]
        return self.source.sentence_range(i)

    def sentence_under(self, side: str, point: QPoint) -> int | None:
        """The sentence under viewport point `point` of a pane; None over empty space."""
        editor = self._pane(side).editor
        cursor = editor.cursorForPosition(point)
        rect = editor.cursorRect(cursor)
        if not rect.top() - 1 <= point.y() <= rect.bottom() + 1:
            return None  # below the text's last line
        return self._pane(side).sentence_at(cursor.position())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        for side, editor, viewport in self._watched:
            if watched is viewport:
                if kind == QEvent.Type.MouseMove and isinstance(event, QMouseEvent):
                    self._hovered(side, self.sentence_under(side, event.position().toPoint()))
                elif kind == QEvent.Type.Leave:
                    self._hovered(side, None, leaving=True)
            elif watched is editor and kind == QEvent.Type.PaletteChange:
                self.refresh()
        return False

    def _hovered(self, side: str, index: int | None, *, leaving: bool = False) -> None:
        hover = None if leaving else (side, index)
        if hover != self._hover:
            self._hover = hover
            self.refresh()

    def _cursor_moved(self, side: str) -> None:
        self._active = side
        self.refresh()

    def _cursor_sentence(self) -> int | None:
        pane = self._pane(self._active)
        return pane.sentence_at(pane.editor.textCursor().position())

    @Slot()
    def refresh(self) -> None:
        """Tint the hovered sentence (or the one at the cursor) and its counterpart; nothing without sentences."""
        index = None
        if self._count():
            if self._hover is not None and self._hover[1] is not None:
                index = self._hover[1]
            else:
                index = self._cursor_sentence()
        self.current = index
        for side in (SOURCE, TARGET):
            pane = self._pane(side)
            span = self._range(side, index) if index is not None else None
            selections = []
            if span is not None and span[0] < span[1]:
                selection = QTextEdit.ExtraSelection()
                cursor = QTextCursor(pane.editor.document())
                cursor.setPosition(span[0])
                cursor.setPosition(span[1], QTextCursor.MoveMode.KeepAnchor)
                selection.cursor = cursor
                selection.format.setBackground(sentence_highlight(pane.editor.palette()))
                selection.format.setProperty(QTextFormat.Property.FullWidthSelection, False)
                selections.append(selection)
            pane.layers.set("highlight", selections)

    def highlighted(self, side: str) -> tuple[int, int] | None:
        """The range tinted in a pane now (None: none)."""
        pane = self._pane(side)
        found = pane.layers.get("highlight")
        if not found:
            return None
        cursor = found[0].cursor
        return cursor.selectionStart(), cursor.selectionEnd()

    # ---- scrolling together --------------------------------------------------------------------------------

    def _scrolled(self, side: str) -> None:
        if not self.sync or self._following:
            return
        other = TARGET if side == SOURCE else SOURCE
        value = self._follow_value(side, other)
        if value is None:
            return
        self._following = True
        try:
            self._pane(other).editor.verticalScrollBar().setValue(value)
        finally:
            self._following = False

    def _follow_value(self, side: str, other: str) -> int | None:
        """Where the other pane's scroll bar goes so that it shows the counterpart of this pane's top sentence."""
        editor = self._pane(side).editor
        bar = editor.verticalScrollBar()
        other_editor = self._pane(other).editor
        other_bar = other_editor.verticalScrollBar()
        n = min(self.source.sentence_count(), len(self.target.ranges))
        if n == 0 or self.target.streaming:
            return None
        if bar.value() >= bar.maximum() > 0:
            return other_bar.maximum()  # the end of one is the end of the other
        top = position_of_line(editor, bar.value())
        pane = self._pane(side)
        i = pane.sentence_at(top)
        if i is None:
            ends = [pane.sentence_range(j)[1] for j in range(n)]
            i = min(bisect_left(ends, top + 1), n - 1)
        start, end = pane.sentence_range(i)
        first, last = line_of(editor, start), line_of(editor, max(start, end - 1))
        into = 0.0 if bar.value() <= first else (bar.value() - first) / max(1, last - first + 1)
        o_start, o_end = self._pane(other).sentence_range(i)
        o_first, o_last = line_of(other_editor, o_start), line_of(other_editor, max(o_start, o_end - 1))
        return min(other_bar.maximum(), o_first + round(min(1.0, into) * (o_last - o_first + 1)))
