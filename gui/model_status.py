"""What the window shows when there is no usable model: what is wrong, where the model belongs, and buttons to
open that folder, copy its path and try again. Developers also see the command that builds a bundle."""

from __future__ import annotations

import contextlib
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QStyle, QVBoxLayout, QWidget

from gui.worker import ModelProblem

BUILD_COMMAND = "qiao model build"
MAX_DETAILS = 8


def open_folder(path: str) -> bool:
    """Open `path` in the system file manager, creating it first so there is somewhere to drop the model."""
    folder = Path(path)
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


class ModelStatusPanel(QFrame):
    """Shown above the text panes while no model is usable; the panes stay usable (typing is autosaved)."""

    retry_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelStatus")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.problem: ModelProblem | None = None

        icon = QLabel(self)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(32, 32))
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.title = QLabel(self)
        font = QFont(self.title.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.2)
        self.title.setFont(font)
        self.title.setWordWrap(True)
        self.body = self._label()
        self.location = self._label(mono=True)
        self.details = self._label()
        self.developer = self._label()

        self.open_button = QPushButton(self)
        self.open_button.clicked.connect(self._open)
        self.copy_button = QPushButton(self)
        self.copy_button.clicked.connect(self._copy)
        self.retry_button = QPushButton(self)
        self.retry_button.clicked.connect(self.retry_requested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.copy_button)
        buttons.addWidget(self.retry_button)
        buttons.addStretch(1)

        text = QVBoxLayout()
        text.setSpacing(6)
        for w in (self.title, self.body, self.location, self.details):
            text.addWidget(w)
        text.addLayout(buttons)
        text.addWidget(self.developer)
        outer = QHBoxLayout(self)
        outer.setContentsMargins(12, 10, 12, 10)
        outer.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        outer.addLayout(text, 1)
        self._retranslate()
        self.hide()

    def _label(self, mono: bool = False) -> QLabel:
        label = QLabel(self)
        label.setWordWrap(True)
        label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        if mono:
            label.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        return label

    def folder(self) -> str:
        """The folder the buttons act on: the broken bundle if there is one, else where a model belongs."""
        p = self.problem
        if p is None:
            return ""
        return p.bundle_dir or p.expected_dir

    def show_problem(self, problem: ModelProblem) -> None:
        self.problem = problem
        self._retranslate()
        self.show()

    def clear(self) -> None:
        self.problem = None
        self.hide()

    def _open(self) -> None:
        if self.folder():
            open_folder(self.folder())

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.folder())

    def _retranslate(self) -> None:
        self.open_button.setText(self.tr("Open model folder"))
        self.open_button.setAccessibleName(self.tr("Open the model folder in the file manager"))
        self.copy_button.setText(self.tr("Copy path"))
        self.copy_button.setAccessibleName(self.tr("Copy the model folder path"))
        self.retry_button.setText(self.tr("Try again"))
        self.retry_button.setAccessibleName(self.tr("Look for the model again"))
        self.setAccessibleName(self.tr("Model problem"))
        self.developer.setText(
            self.tr("For developers: build a model bundle with “{cmd}” (see the README), then press Try again.").format(
                cmd=BUILD_COMMAND
            )
        )
        p = self.problem
        if p is None:
            return
        if p.kind == "missing":
            self.title.setText(self.tr("No translation model found"))
            self.body.setText(
                self.tr(
                    "Qiao translates on this computer, without the internet, using a model stored on disk, "
                    "and none was found. Put the model folder (opus-mt-en-zh) here:"
                )
            )
            self.location.setText(p.expected_dir)
            shown = list(p.details[:MAX_DETAILS])
            self.details.setText(self.tr("Looked in:") + "\n" + "\n".join(f"• {d}" for d in shown) if shown else "")
        elif p.kind == "invalid":
            self.title.setText(self.tr("The translation model failed its check"))
            self.body.setText(
                self.tr("The model folder below is incomplete or damaged. Replace it with a fresh copy of the model:")
            )
            self.location.setText(p.bundle_dir or p.expected_dir)
            shown = list(p.details[:MAX_DETAILS])
            extra = len(p.details) - len(shown)
            lines = [f"• {d}" for d in shown] + ([self.tr("… and {n} more").format(n=extra)] if extra > 0 else [])
            self.details.setText(self.tr("Problems found:") + "\n" + "\n".join(lines))
        else:
            self.title.setText(self.tr("The translation model could not be loaded"))
            if p.bundle_dir:
                self.body.setText(self.tr("Qiao found a model but could not start it:"))
            else:
                self.body.setText(self.tr("Qiao could not look for the model:"))
            self.location.setText(p.bundle_dir or p.expected_dir)
            self.details.setText(p.message)
        self.details.setVisible(bool(self.details.text()))
        self.location.setVisible(bool(self.location.text()))
        self.open_button.setEnabled(bool(self.folder()))
        self.copy_button.setEnabled(bool(self.folder()))
        self.setAccessibleDescription(f"{self.title.text()} {self.body.text()} {self.location.text()}")

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self._retranslate()
        super().changeEvent(event)
