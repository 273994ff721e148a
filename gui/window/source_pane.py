"""The source pane: the editor the user types into, its heading, and its word count.

It also owns `SourceText`, the one copy of the editor's text per change that the count, the autosave and the
request controller share (each copy of a 20 MB document costs ~0.1 s on the UI thread), and, once a translation
has finished, where each of its sentences is in the source (following edits), for the alignment highlight.
"""

from __future__ import annotations

from operator import attrgetter, eq

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from engine.languages import Language, LanguagePair
from engine.results import SentenceResult
from engine.text.source_language import count_scripts
from gui.fonts import pane_font
from gui.pair_text import language_name, source_heading
from gui.review.review_editor import SelectionLayers, text_after_change
from gui.sentence_view import SentenceRanges, spans_fit
from gui.window.pane import Pane
from gui.window.word_count import count_characters, count_words

COUNT_SAMPLE = 2_000  # characters of the text's start judged for its script: a bounded cost per keystroke

COUNT_DELAY_MS = 200  # count once typing pauses this long, not on every key


class SourceText:
    """`editor.toPlainText()`, copied once per change and shared by everyone who reads it."""

    def __init__(self, editor: QPlainTextEdit) -> None:
        self._editor = editor
        self._text: str | None = None
        editor.document().contentsChanged.connect(self._invalidate)

    def _invalidate(self) -> None:
        self._text = None

    def __call__(self) -> str:
        if self._text is None:
            self._text = self._editor.toPlainText()
        return self._text


class SourcePane(Pane):
    """The source editor with its heading (the pair's source language) and its count (words, or characters for a
    language written without spaces)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        editor = QPlainTextEdit()
        editor.setObjectName("source")
        editor.setTabChangesFocus(True)
        super().__init__(editor, parent)
        self.language: Language | None = None  # None until the window knows its pair
        self.text = SourceText(editor)
        self._count_timer = QTimer(self)
        self._count_timer.setSingleShot(True)
        self._count_timer.setInterval(COUNT_DELAY_MS)
        self._count_timer.timeout.connect(self.update_count)
        editor.textChanged.connect(self._count_timer.start)
        self.layers = SelectionLayers(editor, ("highlight",))
        self.ranges = SentenceRanges()  # each translated sentence's source range, following edits
        self._rows: list[int] = []  # target sentence → its source range
        self._first_row: list[int] = []  # source range → its first target sentence
        editor.document().contentsChange.connect(self._contents_change)

    # ---- the translated sentences ----------------------------------------------------------------------------

    def set_sentences(self, sentences: list[SentenceResult], source_text: str) -> None:
        """Where each translated sentence's source is: only when the editor still holds `source_text` (the text
        that was translated); typing since then leaves the source without sentences until the next result. The
        parts of a split sentence share one source range."""
        text = self.text()
        rows: list[int] = []
        spans: list[tuple[int, int]] = []
        firsts: list[SentenceResult] = []
        self._first_row = []
        if text == source_text and sentences:
            all_spans = list(map(attrgetter("source_span"), sentences))
            if not any(map(eq, all_spans[:-1], all_spans[1:])):  # no sentence split in parts: one range each
                rows, spans, firsts = list(range(len(sentences))), all_spans, list(sentences)
                self._first_row = rows
            else:
                for row, result in enumerate(sentences):
                    if not spans or result.source_span != spans[-1]:
                        spans.append(result.source_span)
                        firsts.append(result)
                        self._first_row.append(row)
                    rows.append(len(spans) - 1)
            if not spans_fit(spans, len(text)):
                rows, spans, firsts, self._first_row = [], [], [], []
        self._rows = rows
        self.ranges.reset(text, firsts, spans)

    def clear_sentences(self) -> None:
        self._rows, self._first_row = [], []
        self.ranges.reset("")
        self.layers.set("highlight", [])

    def sentence_count(self) -> int:
        """How many target sentences the source knows (0: none, e.g. typed since the translation)."""
        return len(self._rows)

    def sentence_at(self, pos: int) -> int | None:
        """The target sentence whose source holds position `pos` (the first part, for a sentence split in parts)."""
        i = self.ranges.index_at(pos)
        return self._first_row[i] if i is not None else None

    def sentence_range(self, i: int) -> tuple[int, int]:
        """Where target sentence i's source is now."""
        return self.ranges.span(self._rows[i])

    def _contents_change(self, pos: int, removed: int, added: int) -> None:
        if not self.ranges.items:
            return
        old = self.ranges.text
        if pos == 0 and removed >= len(old) and old:
            self.clear_sentences()  # the whole text was replaced (a restore, a swap): its sentences are gone
            return
        new = text_after_change(self.editor, old, pos, removed)
        removed = max(0, min(removed, len(old) - pos))
        self.ranges.apply(pos, removed, len(new) - len(old) + removed, new)

    def retranslate(self, pair: LanguagePair | None) -> None:
        """Every visible string, worded for `pair`'s source; called again when the language or the pair changes."""
        self.language = pair.source if pair is not None else None
        if pair is None:
            self.heading.setText(self.tr("&Source text"))
            self.editor.setPlaceholderText(self.tr("Paste or type text here, then press Ctrl+Enter."))
            self.editor.setAccessibleName(self.tr("Source text"))
        else:
            name = language_name(pair.source)
            self.heading.setText(source_heading(pair))
            self.editor.setPlaceholderText(
                self.tr("Paste or type {language} text here, then press Ctrl+Enter.").format(language=name)
            )
            self.editor.setAccessibleName(self.tr("{language} source text").format(language=name))
        self.update_count()

    def apply_font(self, size: int) -> None:
        script = self.language.script if self.language is not None else "latin"
        self.editor.setFont(pane_font(script, None, size))

    def update_count(self) -> None:
        """The count beside the heading; a fast count, so 20 MB documents stay responsive. Text written mostly in a
        script without spaces (Chinese pasted into the English box, where no zh→en model is installed to switch to)
        is counted in characters whatever the pane's language: its words are not separated."""
        text = self.text()
        if not text:
            self.info.setText("")
        elif (self.language is not None and not self.language.spaced) or _unspaced(text):
            n = count_characters(text)
            self.info.setText((self.tr("{n} character") if n == 1 else self.tr("{n} characters")).format(n=n))
        else:
            n = count_words(text)
            self.info.setText((self.tr("{n} word") if n == 1 else self.tr("{n} words")).format(n=n))


def _unspaced(text: str) -> bool:
    """Mostly Han, kana or Hangul letters in the text's start (engine.text.source_language's script counts): a text
    whose words no space separates, so counting words would give one per line."""
    c = count_scripts(text, COUNT_SAMPLE)
    return c.han + c.kana + c.hangul > c.latin + c.other
