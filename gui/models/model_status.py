"""What the window shows when there is no usable model: what is wrong, where the model belongs, and buttons to
use another intact precision, open that folder, copy its path and try again. Developers also see the command that
builds a bundle."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path

from PySide6.QtCore import QEvent, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices, QFont, QFontDatabase, QGuiApplication, QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QStyle, QToolButton, QVBoxLayout, QWidget

from engine.errors import FileProblem
from gui import pair_text, problem_text, status_text
from gui.worker.scheduler import ModelProblem

BUILD_COMMAND = "qiao model build"
MAX_DETAILS = 8


def open_folder(path: str) -> bool:
    """Open `path` in the system file manager, creating it first so there is somewhere to drop the model."""
    folder = Path(path)
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


class ModelStatusPanel(QFrame):
    """Shown above the text panes while no model is usable; the panes stay usable (typing is autosaved).

    Problems are worded for a person (gui.problem_text); the engine's English detail is behind "Details". When
    another precision of the bundle is intact, "Use FP32 instead" offers it.
    """

    retry_requested = Signal()
    models_requested = Signal()  # "Get a model…": the Models dialog (import or download)
    use_precision = Signal(str)  # the user chose an intact precision instead of the broken one
    open_failed = Signal(str)  # no file manager could open this folder

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("modelStatus")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.AlternateBase)
        self.problem: ModelProblem | None = None
        self.checked_at: str = ""  # "HH:MM:SS" of a Try again that found the same problem

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
        self.raw_details = self._label(mono=True)
        self.raw_details.setObjectName("rawDetails")
        self.raw_details.hide()
        self.feedback = self._label()
        self.feedback.setObjectName("retryFeedback")
        self.developer = self._label()

        self.use_button = QPushButton(self)
        self.use_button.setObjectName("usePrecisionButton")
        self.use_button.clicked.connect(self._use)
        self.open_button = QPushButton(self)
        self.open_button.clicked.connect(self._open)
        self.copy_button = QPushButton(self)
        self.copy_button.clicked.connect(self._copy)
        self.retry_button = QPushButton(self)
        self.retry_button.clicked.connect(self.retry_requested)
        self.models_button = QPushButton(self)
        self.models_button.setObjectName("getModelButton")
        self.models_button.clicked.connect(self.models_requested)
        self.details_button = QToolButton(self)
        self.details_button.setObjectName("detailsButton")
        self.details_button.setCheckable(True)
        self.details_button.setAutoRaise(True)
        self.details_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.details_button.setArrowType(Qt.ArrowType.RightArrow)
        self.details_button.toggled.connect(self._toggle_details)
        buttons = QHBoxLayout()
        for b in (self.use_button, self.models_button, self.open_button, self.copy_button, self.retry_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(self.details_button)

        text = QVBoxLayout()
        text.setSpacing(6)
        for w in (self.title, self.body, self.location, self.details, self.feedback):
            text.addWidget(w)
        text.addLayout(buttons)
        text.addWidget(self.raw_details)
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

    def show_problem(self, problem: ModelProblem, *, again: bool = False) -> None:
        """Show `problem`; `again` when it answers Try again, so the user sees that the check did run."""
        self.checked_at = time.strftime("%H:%M:%S") if again else ""
        self.problem = problem
        self._retranslate()
        self.show()

    def clear(self) -> None:
        self.problem = None
        self.checked_at = ""
        self.hide()

    def _use(self) -> None:
        p = self.problem
        if p is not None and p.alternatives:
            self.use_precision.emit(p.alternatives[0])

    def _open(self) -> None:
        folder = self.folder()
        if folder and not open_folder(folder):
            self.open_failed.emit(folder)

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self.folder())

    def _toggle_details(self, on: bool) -> None:
        self.details_button.setArrowType(Qt.ArrowType.DownArrow if on else Qt.ArrowType.RightArrow)
        self.raw_details.setVisible(on and bool(self.raw_details.text()))

    def _retranslate(self) -> None:
        self.open_button.setText(self.tr("Open model folder"))
        self.open_button.setAccessibleName(self.tr("Open the model folder in the file manager"))
        self.copy_button.setText(self.tr("Copy path"))
        self.copy_button.setAccessibleName(self.tr("Copy the model folder path"))
        self.retry_button.setText(self.tr("Try again"))
        self.retry_button.setAccessibleName(self.tr("Look for the model again"))
        self.models_button.setText(self.tr("Get a &model…"))
        self.models_button.setAccessibleName(self.tr("Import or download a model"))
        self.details_button.setText(self.tr("Details"))
        self.details_button.setAccessibleName(self.tr("Show the technical details"))
        self.setAccessibleName(self.tr("Model problem"))
        self.developer.setText(
            self.tr("For developers: build a model bundle with “{cmd}” (see the README), then press Try again.").format(
                cmd=BUILD_COMMAND
            )
        )
        p = self.problem
        if p is None:
            return
        raw = ""
        if p.kind == "missing":
            self.title.setText(self.tr("No translation model found"))
            folder = Path(p.expected_dir).name if p.expected_dir else ""
            self.body.setText(
                self.tr(
                    "Qiao translates on this computer, without the internet, using a model stored on disk, "
                    "and none was found for {pair}. Get one with “Get a model…”, or put the model folder ({folder}) "
                    "here:"
                ).format(pair=pair_text.arrow(p.pair_key or "en-zh"), folder=folder or "opus-mt-en-zh")
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
            issues = p.issues or tuple(FileProblem("manifest", "", d) for d in p.details)
            every = problem_text.describe_all(issues, len(issues))
            shown = every[:MAX_DETAILS]
            extra = len(every) - len(shown)
            lines = [f"• {d}" for d in shown] + ([self.tr("… and {n} more").format(n=extra)] if extra > 0 else [])
            self.details.setText("\n".join([*lines, problem_text.fix(issues)]))
            raw = "\n".join(p.details)
        else:
            self.title.setText(self.tr("The translation model could not be loaded"))
            if p.bundle_dir:
                self.body.setText(problem_text.internal_error())
            else:
                self.body.setText(self.tr("Qiao could not look for the model:"))
            self.location.setText(p.bundle_dir or p.expected_dir)
            self.details.setText("")
            raw = p.message
        if p.alternatives:
            other = status_text.precision_label(p.alternatives[0])
            self.use_button.setText(self.tr("Use {p} instead").format(p=other))
            self.use_button.setAccessibleName(self.tr("Use the {p} model, which passed its check").format(p=other))
            intact = self.tr("The {p} model in the same folder is intact: you can use it now.").format(p=other)
            self.details.setText("\n".join(t for t in (self.details.text(), intact) if t))
        self.use_button.setVisible(bool(p.alternatives))
        self.models_button.setVisible(p.kind in ("missing", "invalid"))
        self.raw_details.setText(raw)
        self.details_button.setVisible(bool(raw))
        self._toggle_details(self.details_button.isChecked())
        self.feedback.setText(
            self.tr("Still no model — checked at {time}.").format(time=self.checked_at) if self.checked_at else ""
        )
        self.feedback.setVisible(bool(self.checked_at))
        self.details.setVisible(bool(self.details.text()))
        self.location.setVisible(bool(self.location.text()))
        self.open_button.setEnabled(bool(self.folder()))
        self.copy_button.setEnabled(bool(self.folder()))
        self.setAccessibleDescription(f"{self.title.text()} {self.body.text()} {self.location.text()}")

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self._retranslate()
        super().changeEvent(event)
