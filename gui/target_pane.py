"""The Chinese pane: a read-only editor the translation streams into, its heading (which script) and a note."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from gui.fonts import target_font
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

    def retranslate(self, script: str) -> None:
        """Every visible string (the heading names the script); called again when the language changes."""
        hant = script == "hant"
        self.heading.setText(self.tr("Chinese (Traditional)") if hant else self.tr("Chinese (Simplified)"))
        self.editor.setPlaceholderText(self.tr("The Chinese translation appears here as it is written."))
        self.editor.setAccessibleName(self.tr("Chinese translation"))
        self.editor.setAccessibleDescription(self.tr("Read-only; select and copy the translation"))

    def apply_font(self, script: str, size: int) -> None:
        self.editor.setFont(target_font(script, size))

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
