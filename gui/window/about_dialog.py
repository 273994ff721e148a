"""About: version, the model and its licence attribution (CC-BY-4.0 requires it), and the engine's versions."""

from __future__ import annotations

import platform
import sys
from importlib import metadata

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QFormLayout, QHBoxLayout, QLabel, QVBoxLayout, QWidget

import engine
from gui import pair_text
from gui.icons import app_icon
from gui.worker.scheduler import ModelInfo

DEFAULT_MODEL = "Helsinki-NLP/opus-mt-en-zh"
DEFAULT_LICENSE = "CC-BY-4.0"
DEFAULT_ATTRIBUTION = (
    "OPUS-MT (opus-mt-en-zh) by the Language Technology Research Group at the University of Helsinki "
    "(Tiedemann & Thottingal, 2020), CC-BY-4.0."
)


def package_version(name: str) -> str | None:
    """A package's version without importing it (onnxruntime is only imported by the worker)."""
    module = sys.modules.get(name)
    version = getattr(module, "__version__", None) if module else None
    if version:
        return str(version)
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def qiao_version() -> str:
    return package_version("qiao") or engine.__version__


def versions() -> list[tuple[str, str]]:
    """(component, version) pairs shown in About and useful in bug reports."""
    rows = [("Qiao", qiao_version())]
    for label, dist in (("ONNX Runtime", "onnxruntime"), ("tokenizers", "tokenizers"), ("NumPy", "numpy")):
        rows.append((label, package_version(dist) or "?"))
    rows.append(("Qt", f"{qVersion()} (PySide6 {pyside_version})"))
    rows.append(("Python", platform.python_version()))
    return rows


class AboutDialog(QDialog):
    def __init__(self, model: ModelInfo | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setMinimumWidth(540)
        self.setWindowTitle(self.tr("About Qiao"))
        icon = QLabel(self)
        icon.setPixmap(app_icon().pixmap(64, 64))
        title = QLabel(f"<h2>Qiao 桥 {qiao_version()}</h2>", self)
        blurb = QLabel(self.tr("Offline English ⇄ Chinese translator. Nothing you type leaves this computer."), self)
        blurb.setWordWrap(True)
        head = QVBoxLayout()
        head.addWidget(title)
        head.addWidget(blurb)
        top = QHBoxLayout()
        top.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        top.addLayout(head, 1)

        form = QFormLayout()
        self.fields: dict[str, QLabel] = {}
        model_id = (model.model_id if model else "") or DEFAULT_MODEL
        status = self.tr("{p}, loaded").format(p=model.precision.upper()) if model else self.tr("not loaded")
        self._row(form, "model", self.tr("Model:"), f"{model_id} ({status})")
        self._row(form, "license", self.tr("Licence:"), (model.license if model else "") or DEFAULT_LICENSE)
        self._row(
            form, "attribution", self.tr("Attribution:"), (model.attribution if model else "") or DEFAULT_ATTRIBUTION
        )
        if model and model.pair is not None:
            self._row(form, "languages", self.tr("Languages:"), pair_text.arrow(model.pair.key))
        if model and model.bundle_dir:
            self._row(form, "folder", self.tr("Model folder:"), model.bundle_dir)
        for name, version in versions():
            self._row(form, name, f"{name}:", version)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def _row(self, form: QFormLayout, key: str, label: str, value: str) -> None:
        field = QLabel(value, self)
        field.setWordWrap(True)
        field.setTextFormat(Qt.TextFormat.PlainText)
        field.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        field.setAccessibleName(label.rstrip(":"))
        self.fields[key] = field
        form.addRow(label, field)
