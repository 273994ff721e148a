"""A heading over a plain-text editor, with a small note at the heading's right: what each pane of the window is."""

from __future__ import annotations

from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget


class Pane(QWidget):
    """A heading over a plain-text editor; `info` is the note beside the heading (a count, a restored mark)."""

    def __init__(self, editor: QPlainTextEdit, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self.heading = QLabel(self)
        font = QFont(self.heading.font())
        font.setBold(True)
        self.heading.setFont(font)
        self.heading.setBuddy(editor)
        self.info = QLabel(self)
        self.info.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        head = QHBoxLayout()
        head.setContentsMargins(2, 0, 2, 0)
        head.addWidget(self.heading)
        self.head = head  # the window puts the swap button before the target's heading
        head.addStretch(1)
        head.addWidget(self.info)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addLayout(head)
        layout.addWidget(editor, 1)
