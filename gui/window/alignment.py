"""Sentence alignment between the panes: the sentence under the mouse (or, without one, at the cursor of the pane
last used) is tinted in both panes, and scrolling one pane scrolls the other to the same sentence.

Scrolling maps by sentence, not by proportion: the other pane shows the counterpart of the sentence at the top,
as far into it as this pane is into its own. Without sentences (while streaming, an old result, a source typed
since) the panes scroll on their own: a proportion would be wrong for any text whose parts translate to different
lengths, and scrolling a long source to follow the streamed end would lay it all out. Each follow is done with the
other pane's scroll signal ignored, so the panes never chase each other.

Where the model gives word alignment (`words`, gui.review.word_alignment.WordAligner; Bergamot bundles), the word under
the pointer (or at the cursor) is tinted more strongly inside its sentence, and so are the words of the other pane it
aligns to: a target word's source words, a source word's target words. The alignment is asked of the worker for the
sentence the user points at (hovered, or the cursor moved into it), once per sentence; until it comes, and for a
model that cannot align (Marian bundles), the highlight is the sentence's alone, as without `words`.
"""

from __future__ import annotations

from bisect import bisect_left

from PySide6.QtCore import QEvent, QObject, QPoint, Slot
from PySide6.QtGui import QColor, QMouseEvent, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit

from gui.review.alternatives_controller import char_at
from gui.review.review_colors import sentence_highlight, word_highlight
from gui.review.word_alignment import (
    Span,
    WordAligner,
    char_map,
    mapped,
    sources_of_target,
    targets_of_source,
    unmapped,
)
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

    def __init__(
        self,
        source: SourcePane,
        target: TargetPane,
        parent: QObject | None = None,
        words: WordAligner | None = None,
    ) -> None:
        super().__init__(parent)
        self.source = source
        self.target = target
        self.words = words
        self.sync = True
        self.current: int | None = None  # the sentence highlighted now
        self._hover: tuple[str, int | None] | None = None  # (side, sentence) while the mouse is over a pane
        self._hover_char: int | None = None  # the character under the mouse there (None: beside the text)
        self._wanted: int | None = None  # the sentence the user points at: its word alignment is asked for
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
        if words is not None:
            words.changed.connect(self.refresh)

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
                    point = event.position().toPoint()
                    index = self.sentence_under(side, point)
                    words = index is not None and self.words is not None and self.words.supported
                    char = char_at(editor, point) if words else None  # else only the sentence counts
                    self._hovered(side, index, char=char)
                elif kind == QEvent.Type.Leave:
                    self._hovered(side, None, leaving=True)
            elif watched is editor and kind == QEvent.Type.PaletteChange:
                self.refresh()
        return False

    def _hovered(self, side: str, index: int | None, *, char: int | None = None, leaving: bool = False) -> None:
        hover = None if leaving else (side, index)
        if hover != self._hover or char != self._hover_char:
            if index is not None and hover != self._hover:
                self._wanted = index
            self._hover, self._hover_char = hover, char
            self.refresh()

    def _cursor_moved(self, side: str) -> None:
        self._active = side
        pane = self._pane(side)
        if pane.editor.hasFocus():  # the user moved it (a click, the keys): that sentence's words are wanted
            self._wanted = pane.sentence_at(pane.editor.textCursor().position())
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
        words = self._words(index) if index is not None else {}
        for side in (SOURCE, TARGET):
            pane = self._pane(side)
            span = self._range(side, index) if index is not None else None
            selections = []
            if span is not None and span[0] < span[1]:
                palette = pane.editor.palette()
                selections.append(self._selection(pane, span, sentence_highlight(palette)))
                tint = word_highlight(palette)
                selections += [self._selection(pane, w, tint) for w in words.get(side, ()) if w[0] < w[1]]
            pane.layers.set("highlight", selections)

    @staticmethod
    def _selection(pane: SourcePane | TargetPane, span: Span, colour: QColor) -> QTextEdit.ExtraSelection:
        selection = QTextEdit.ExtraSelection()
        cursor = QTextCursor(pane.editor.document())
        cursor.setPosition(span[0])
        cursor.setPosition(span[1], QTextCursor.MoveMode.KeepAnchor)
        selection.cursor = cursor
        selection.format.setBackground(colour)
        selection.format.setProperty(QTextFormat.Property.FullWidthSelection, False)
        return selection

    def highlighted(self, side: str) -> tuple[int, int] | None:
        """The range tinted in a pane now (None: none)."""
        pane = self._pane(side)
        found = pane.layers.get("highlight")
        if not found:
            return None
        cursor = found[0].cursor
        return cursor.selectionStart(), cursor.selectionEnd()

    def word_highlighted(self, side: str) -> list[Span]:
        """The aligned words tinted inside the sentence's tint in a pane now ([]: none)."""
        found = self._pane(side).layers.get("highlight")[1:]
        return [(s.cursor.selectionStart(), s.cursor.selectionEnd()) for s in found]

    # ---- which words ---------------------------------------------------------------------------------------

    def _point(self) -> tuple[str, int] | None:
        """The character words are highlighted for: the one under the mouse, else the active pane's cursor."""
        if self._hover is not None and self._hover[1] is not None:
            return (self._hover[0], self._hover_char) if self._hover_char is not None else None
        return self._active, self._pane(self._active).editor.textCursor().position()

    def _words(self, index: int) -> dict[str, list[Span]]:
        """The word ranges to tint in each pane for the point in sentence `index`; asks for the sentence's alignment
        when the user points at it and it is not known."""
        if self.words is None or not self.words.supported or index >= self.source.sentence_count():
            return {}
        if self._wanted == index:
            self._ask(index)
        point = self._point()
        if point is None:
            return {}
        side, pos = point
        if side == TARGET:
            return self._from_target(pos)
        for at in (pos, pos - 1):  # a cursor just after a word (at a space, a sentence's end) is on it
            found = self._from_source(index, at)
            if found:
                return found
        return {}

    def _ask(self, index: int) -> None:
        """The first part of sentence `index` whose alignment is not known yet (one at a time: the worker keeps only
        the last request; the next is asked when this one's answer redraws)."""
        assert self.words is not None
        for row in self.target.rows_of(index):
            result = self.target.ranges.results[row]
            if self.target.is_edited(row) or not result.tokens:
                continue
            if self.words.links(result.source, result.tokens) is None:
                self.words.want(result.source, result.tokens)
                return

    def _shown_source(self, index: int) -> tuple[int, str]:
        start, end = self.source.sentence_range(index)
        return start, self.source.editor.toPlainText()[start:end]

    def _from_target(self, pos: int) -> dict[str, list[Span]]:
        assert self.words is not None
        found = self.target.token_at(pos)
        if found is None and pos > 0:
            found = self.target.token_at(pos - 1)
        if found is None:
            return {}
        row, token = found
        result = self.target.ranges.results[row]
        links = self.words.links(result.source, result.tokens)
        if not links or row >= self.source.sentence_count():
            return {}
        start = self.target.ranges.starts[row]
        word, sources = sources_of_target(
            links, result.token_spans, result.source, self.target.ranges.current(row), token
        )
        if word is None or not sources:
            return {}
        begin, shown = self._shown_source(row)
        where = char_map(result.source, shown)
        return {
            TARGET: [(start + word[0], start + word[1])],
            SOURCE: [(begin + a, begin + b) for a, b in mapped(sources, where)],
        }

    def _from_source(self, index: int, pos: int) -> dict[str, list[Span]]:
        assert self.words is not None
        begin, shown = self._shown_source(index)
        if not 0 <= pos - begin < len(shown):
            return {}
        source_words: list[Span] = []
        targets: list[Span] = []
        for row in self.target.rows_of(index):
            result = self.target.ranges.results[row]
            links = None if self.target.is_edited(row) else self.words.links(result.source, result.tokens)
            if not links:
                continue
            where = char_map(result.source, shown)
            offset = unmapped(pos - begin, where)
            if offset is None:
                continue
            text = self.target.ranges.current(row)
            word, found = targets_of_source(links, result.token_spans, result.source, text, offset)
            if word is None or not found:
                continue
            start = self.target.ranges.starts[row]
            source_words += [(begin + a, begin + b) for a, b in mapped([word], where)]
            targets += [(start + a, start + b) for a, b in found]
        return {SOURCE: source_words, TARGET: targets} if targets else {}

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
