"""One row of the Documents panel: a file's name and format, its progress, state and time left, why it failed or
where its result went, and the buttons that fit its state (Cancel; Try again; Open and Show in folder).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtGui import QFont, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout, QWidget

from gui.documents.document_queue import Entry, Problem, State
from gui.documents.wording import done_detail, format_label, reason, state_label, time_left, took


class DocumentRow(QFrame):
    """One file: what it is, how far it got, and what can be done with it now."""

    cancel_requested = Signal(int)
    open_requested = Signal(int)
    folder_requested = Signal(int)
    retry_requested = Signal(int)

    def __init__(self, key: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key = key
        self.setObjectName("documentRow")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.name = QLabel(self)
        font = QFont(self.name.font())
        font.setBold(True)
        self.name.setFont(font)
        self.name.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.kind = QLabel(self)
        self.kind.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.state = QLabel(self)
        self.state.setObjectName("documentState")
        self.bar = QProgressBar(self)
        self.bar.setObjectName("documentProgress")
        self.bar.setTextVisible(True)
        self.bar.setMinimumWidth(160)
        self.eta = QLabel(self)
        self.eta.setObjectName("documentEta")
        self.detail = QLabel(self)  # the reason of a failure, or where the result went
        self.detail.setObjectName("documentDetail")
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cancel_button = self._button("documentCancel", self.cancel_requested)
        self.open_button = self._button("documentOpen", self.open_requested)
        self.folder_button = self._button("documentFolder", self.folder_requested)
        self.retry_button = self._button("documentRetry", self.retry_requested)

        top = QHBoxLayout()
        top.addWidget(self.name)
        top.addWidget(self.kind)
        top.addStretch(1)
        top.addWidget(self.state)
        middle = QHBoxLayout()
        middle.addWidget(self.bar, 1)
        middle.addWidget(self.eta)
        for b in (self.cancel_button, self.retry_button, self.open_button, self.folder_button):
            middle.addWidget(b)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.setSpacing(4)
        layout.addLayout(top)
        layout.addLayout(middle)
        layout.addWidget(self.detail)

    def _button(self, name: str, signal: Signal) -> QPushButton:
        button = QPushButton(self)
        button.setObjectName(name)
        button.setAutoDefault(False)
        button.clicked.connect(lambda: signal.emit(self.key))
        return button

    def paint(self, entry: Entry, output_exists: bool) -> None:
        """Show `entry` as it is now, worded in the interface language."""
        self.name.setText(entry.source.name)
        self.name.setToolTip(str(entry.source))
        self.kind.setText(format_label(entry.format, entry.source))
        self.state.setText(state_label(entry.state))
        parts = QCoreApplication.translate("DocumentsPanel", "%v / %m parts")
        p = entry.progress
        if p is not None and p.units_total > 0:
            self.bar.setRange(0, p.units_total)
            self.bar.setValue(p.units_done)
            self.bar.setFormat(parts)
        elif entry.state is State.DONE and entry.result is not None:
            total = max(entry.result.units, 1)
            self.bar.setRange(0, total)
            self.bar.setValue(total)
            self.bar.setFormat(parts)
        else:
            self.bar.setRange(0, 0 if entry.state is State.TRANSLATING else 1)  # busy while the file is read
            self.bar.setValue(0)
            self.bar.setFormat("")  # nothing counted yet: no "0 / 1"
        self.bar.setAccessibleName(
            QCoreApplication.translate("DocumentsPanel", "Progress of {name}").format(name=entry.source.name)
        )
        ended = entry.state.ended
        self.bar.setVisible(not (entry.state is State.FAILED and entry.progress is None))
        if entry.state in (State.TRANSLATING, State.CANCELLING):
            self.eta.setText(
                time_left(p.eta_s)
                if p is not None
                else QCoreApplication.translate("DocumentsPanel", "Reading the file…")
            )
        elif entry.state is State.DONE and entry.result is not None:
            self.eta.setText(took(entry.result.seconds))
        else:
            self.eta.setText("")
        self.eta.setVisible(bool(self.eta.text()))

        if entry.state is State.FAILED:
            self.detail.setText(reason(entry, output_exists))
        elif entry.state is State.DONE and entry.output is not None:
            self.detail.setText(done_detail(entry.output, entry.result))
            self.detail.setToolTip(str(entry.output))
        elif entry.state is State.CANCELLED:
            self.detail.setText(
                QCoreApplication.translate(
                    "DocumentsPanel", "Nothing was written. Try again goes on from where it stopped."
                )
            )
        elif entry.output is not None:
            self.detail.setText(
                QCoreApplication.translate("DocumentsPanel", "Will be saved as {name}").format(name=entry.output.name)
            )
            self.detail.setToolTip(str(entry.output))
        else:
            self.detail.setText("")
        self.detail.setVisible(bool(self.detail.text()))

        self.cancel_button.setText(QCoreApplication.translate("DocumentsPanel", "Cancel"))
        self.cancel_button.setAccessibleName(
            QCoreApplication.translate("DocumentsPanel", "Cancel translating {name}").format(name=entry.source.name)
        )
        self.cancel_button.setVisible(not ended)
        self.cancel_button.setEnabled(entry.state is not State.CANCELLING)
        self.open_button.setText(QCoreApplication.translate("DocumentsPanel", "Open"))
        self.open_button.setAccessibleName(
            QCoreApplication.translate("DocumentsPanel", "Open the translation of {name}").format(
                name=entry.source.name
            )
        )
        self.folder_button.setText(QCoreApplication.translate("DocumentsPanel", "Show in folder"))
        self.folder_button.setAccessibleName(
            QCoreApplication.translate("DocumentsPanel", "Show the translation in its folder")
        )
        done = entry.state is State.DONE and entry.output is not None
        self.open_button.setVisible(done)
        self.folder_button.setVisible(done)
        retry = entry.state in (State.FAILED, State.CANCELLED) and entry.problem is Problem.NONE
        self.retry_button.setText(
            QCoreApplication.translate("DocumentsPanel", "Replace the earlier result")
            if output_exists
            else QCoreApplication.translate("DocumentsPanel", "Try again")
        )
        self.retry_button.setToolTip(
            QCoreApplication.translate("DocumentsPanel", "Translate it again and replace {name}").format(
                name=entry.output.name
            )
            if output_exists and entry.output is not None
            else ""
        )
        self.retry_button.setVisible(retry)
        self.setAccessibleName(f"{entry.source.name}: {self.state.text()}")
        self.setAccessibleDescription(" ".join(t for t in (self.eta.text(), self.detail.text()) if t))
