"""The source pane: the editor the user types into, its heading, and its word count.

It also owns `SourceText`, the one copy of the editor's text per change that the count, the autosave and the
request controller share (each copy of a 20 MB document costs ~0.1 s on the UI thread).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from engine.languages import Language, LanguagePair
from gui.fonts import pane_font
from gui.pair_text import language_name, source_heading
from gui.pane import Pane
from gui.word_count import count_characters, count_words

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
        """The count beside the heading; a fast count, so 20 MB documents stay responsive."""
        text = self.text()
        if not text:
            self.info.setText("")
        elif self.language is not None and not self.language.spaced:
            self.info.setText(self.tr("{n} characters").format(n=count_characters(text)))
        else:
            self.info.setText(self.tr("{n} words").format(n=count_words(text)))
