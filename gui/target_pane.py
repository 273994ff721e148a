"""The target pane: a read-only editor the translation streams into, its heading (language, variant) and a note."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from engine.languages import Language, LanguagePair
from gui.fonts import pane_font
from gui.pair_text import chosen_variant, language_name, target_heading
from gui.pane import Pane


class TargetPane(Pane):
    """The translation: selectable, never editable; streamed text is appended and followed while at the end."""

    def __init__(self, parent: QWidget | None = None) -> None:
        editor = QPlainTextEdit()
        editor.setObjectName("target")
        editor.setReadOnly(True)
        editor.setTabChangesFocus(True)
        editor.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        super().__init__(editor, parent)
        self.language: Language | None = None  # None until the window knows its pair
        self.variant: str | None = None  # the variant the heading names (and the font is chosen for)

    def retranslate(self, pair: LanguagePair | None, variant: str | None) -> None:
        """Every visible string (the heading names the language and variant); called again when the language,
        the pair or the variant changes."""
        self.language = pair.target if pair is not None else None
        self.variant = chosen_variant(pair, variant) if pair is not None else None
        if pair is None:
            self.heading.setText(self.tr("Translation"))
            self.editor.setPlaceholderText(self.tr("The translation appears here as it is written."))
            self.editor.setAccessibleName(self.tr("Translation"))
        else:
            name = language_name(pair.target)
            self.heading.setText(target_heading(pair, variant))
            self.editor.setPlaceholderText(
                self.tr("The {language} translation appears here as it is written.").format(language=name)
            )
            self.editor.setAccessibleName(self.tr("{language} translation").format(language=name))
        self.editor.setAccessibleDescription(self.tr("Read-only; select and copy the translation"))

    def apply_font(self, size: int) -> None:
        script = self.language.script if self.language is not None else "latin"
        self.editor.setFont(pane_font(script, self.variant, size))

    def append(self, text: str) -> None:
        """Add streamed text at the end; keep the view at the end if the reader was there."""
        bar = self.editor.verticalScrollBar()
        follow = bar.value() >= bar.maximum() - 2
        cursor = QTextCursor(self.editor.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.insertText(text)
        if follow:
            bar.setValue(bar.maximum())

    def set_note(self, text: str, tooltip: str = "") -> None:
        """The one-word note beside the heading (e.g. "Restored"), with its meaning as tooltip and for readers."""
        self.info.setText(text)
        self.info.setToolTip(tooltip)
        self.info.setAccessibleName(text)
        self.info.setAccessibleDescription(tooltip)
