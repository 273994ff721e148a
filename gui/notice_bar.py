"""A dismissible in-window message bar: for notices the user should see but that must not block them
(settings reset, a precision the bundle lacks, a failed translation)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QStyle, QToolButton, QWidget


class NoticeBar(QFrame):
    """Hidden until `show_message`; each message is listed until the user dismisses the bar, or until the part of
    the window that said it takes it back (`withdraw`). A message may bring one action; the button runs the action
    of the latest message that brought one, so withdrawing that message gives the button back to the one before."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("noticeBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.ToolTipBase)
        self._messages: list[str] = []
        self._actions: dict[str, tuple[str, Callable[[], object]]] = {}  # message -> its action, latest last
        icon = QLabel(self)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxInformation).pixmap(20, 20))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setForegroundRole(QPalette.ColorRole.ToolTipText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.action_button = QPushButton(self)
        self.action_button.setObjectName("noticeAction")
        self.action_button.setAutoDefault(False)
        self.action_button.clicked.connect(self._run_action)
        self.action_button.hide()
        self.close_button = QToolButton(self)
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.dismiss)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        layout.addWidget(icon)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self._retranslate()
        self.hide()

    def show_message(self, text: str, action: tuple[str, Callable[[], object]] | None = None) -> None:
        """Add `text`; `action` (label, callback) puts one button beside it, e.g. "Copy path"."""
        if action is not None:
            self._actions.pop(text, None)
            self._actions[text] = action  # the latest action is the one on the button
        if text not in self._messages:
            self._messages.append(text)
        self._refresh()
        self.show()

    def withdraw(self, text: str) -> None:
        """Take back `text` (and its action) when what it said no longer holds; the other messages stay, the bar
        hides when none is left."""
        if text not in self._messages:
            return
        self._messages.remove(text)
        self._actions.pop(text, None)
        if not self._messages:
            self.dismiss()
            return
        self._refresh()

    def _refresh(self) -> None:
        self.label.setText("\n".join(self._messages))
        self.setAccessibleDescription(self.label.text())
        latest = self._latest()
        if latest is not None:
            self.action_button.setText(latest[0])
            self.action_button.show()
        else:
            self.action_button.hide()

    def _latest(self) -> tuple[str, Callable[[], object]] | None:
        """The action on the button: the latest message's that brought one (None: no button)."""
        return next(reversed(self._actions.values()), None)

    def messages(self) -> list[str]:
        return list(self._messages)

    def _run_action(self) -> None:
        latest = self._latest()
        if latest is not None:
            latest[1]()

    def dismiss(self) -> None:
        self.action_button.hide()
        self._messages.clear()
        self._actions.clear()
        self.label.clear()
        self.hide()

    def _retranslate(self) -> None:
        self.setAccessibleName(self.tr("Notice"))
        self.close_button.setToolTip(self.tr("Dismiss"))
        self.close_button.setAccessibleName(self.tr("Dismiss notice"))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self._retranslate()
        super().changeEvent(event)
