"""The English pane: the editor the user types into, its heading, and its word count.

It also owns `SourceText`, the one copy of the editor's text per change that the count, the autosave and the
request controller share (each copy of a 20 MB document costs ~0.1 s on the UI thread).
"""

from __future__ import annotations

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gui.fonts import source_font
from gui.pane import Pane
from gui.word_count import count_words

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
    """The English editor with its heading and word count."""

    def __init__(self, parent: QWidget | None = None) -> None:
        editor = QPlainTextEdit()
        editor.setObjectName("source")
        editor.setTabChangesFocus(True)
        super().__init__(editor, parent)
        self.text = SourceText(editor)
        self._count_timer = QTimer(self)
        self._count_timer.setSingleShot(True)
        self._count_timer.setInterval(COUNT_DELAY_MS)
        self._count_timer.timeout.connect(self.update_count)
        editor.textChanged.connect(self._count_timer.start)

    def retranslate(self) -> None:
        """Every visible string; called again when the interface language changes."""
        self.heading.setText(self.tr("E&nglish"))
        self.editor.setPlaceholderText(self.tr("Paste or type English text here, then press Ctrl+Enter."))
        self.editor.setAccessibleName(self.tr("English source text"))
        self.update_count()

    def apply_font(self, size: int) -> None:
        self.editor.setFont(source_font(size))

    def update_count(self) -> None:
        """The word count beside the heading; a fast count, so 20 MB documents stay responsive."""
        text = self.text()
        self.info.setText(self.tr("{n} words").format(n=count_words(text)) if text else "")
