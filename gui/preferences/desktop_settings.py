"""The Settings dialog's "Desktop" page: tray, start with the system, quick translate, clipboard, local API.

Like the rest of the dialog it edits a copy: `values()` is what OK stores. A shortcut that is not a valid global
shortcut (one to four modifiers and a key) is not stored; the page says why.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QKeySequenceEdit,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gui.settings import SHORTCUT, SPECS, Key


class DesktopPage(QWidget):
    """The page's widgets; `load_from(get)` shows values, `values()` returns what to store."""

    def __init__(self, has_tray: bool, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("desktopPage")
        self.close_to_tray = QCheckBox(self.tr("Keep running in the t&ray when the window is closed"), self)
        self.close_to_tray.setObjectName("closeToTray")
        self.close_to_tray.setEnabled(has_tray)
        if not has_tray:
            self.close_to_tray.setToolTip(self.tr("This desktop shows no tray icons."))
        self.autostart = QCheckBox(self.tr("&Start Qiao when I log in"), self)
        self.autostart.setObjectName("autostart")
        self.autostart.setToolTip(self.tr("Qiao starts in the background, in the tray where there is one."))

        self.shortcut = QKeySequenceEdit(self)
        self.shortcut.setObjectName("quickShortcut")
        self.shortcut.setMaximumSequenceLength(1)
        self.shortcut.setClearButtonEnabled(True)
        self.shortcut.setAccessibleName(self.tr("Quick translate shortcut"))
        self.shortcut.keySequenceChanged.connect(self._check_shortcut)
        self.shortcut_hint = QLabel(self)
        self.shortcut_hint.setObjectName("shortcutHint")
        self.shortcut_hint.setWordWrap(True)
        self.copy_twice = QCheckBox(self.tr("Copy the same text &twice quickly to translate it"), self)
        self.copy_twice.setObjectName("copyTwice")
        self.clipboard_watch = QCheckBox(self.tr("Translate English copied to the clip&board"), self)
        self.clipboard_watch.setObjectName("clipboardWatch")
        self.clipboard_watch.setToolTip(
            self.tr("Never for text copied from Qiao itself, from password managers, or very long text.")
        )

        self.api_enabled = QCheckBox(self.tr("&Let other apps on this computer translate through Qiao"), self)
        self.api_enabled.setObjectName("apiEnabled")
        self.api_enabled.setToolTip(
            self.tr("A LibreTranslate-compatible API on 127.0.0.1 only: nothing outside this computer can reach it.")
        )
        self.api_port = QSpinBox(self)
        self.api_port.setObjectName("apiPort")
        self.api_port.setRange(SPECS[Key.API_PORT].minimum or 1024, SPECS[Key.API_PORT].maximum or 65535)
        self.api_port.setAccessibleName(self.tr("API port"))
        self.api_key_file = QLineEdit(self)
        self.api_key_file.setObjectName("apiKeyFile")
        self.api_key_file.setPlaceholderText(self.tr("None: any app on this computer may call"))
        self.api_key_file.setAccessibleName(self.tr("API key file"))
        self.api_key_browse = QPushButton(self.tr("Choose…"), self)
        self.api_key_browse.setObjectName("apiKeyBrowse")
        self.api_key_browse.setAutoDefault(False)
        self.api_key_browse.clicked.connect(self._browse_key)
        self.api_url = QLabel(self)
        self.api_url.setObjectName("apiUrl")
        self.api_port.valueChanged.connect(self._show_url)
        self.api_enabled.toggled.connect(self._enable_api_fields)

        window = QGroupBox(self.tr("Window"), self)
        wform = QFormLayout(window)
        wform.addRow(self.close_to_tray)
        wform.addRow(self.autostart)
        quick = QGroupBox(self.tr("Quick translate"), self)
        qform = QFormLayout(quick)
        label = QLabel(self.tr("Short&cut:"), self)
        label.setBuddy(self.shortcut)
        qform.addRow(label, self.shortcut)
        qform.addRow("", self.shortcut_hint)
        qform.addRow(self.copy_twice)
        qform.addRow(self.clipboard_watch)
        api = QGroupBox(self.tr("Local translation API"), self)
        aform = QFormLayout(api)
        aform.addRow(self.api_enabled)
        port_label = QLabel(self.tr("&Port:"), self)
        port_label.setBuddy(self.api_port)
        aform.addRow(port_label, self.api_port)
        key_row = QHBoxLayout()
        key_row.addWidget(self.api_key_file, 1)
        key_row.addWidget(self.api_key_browse)
        key_label = QLabel(self.tr("API key &file:"), self)
        key_label.setBuddy(self.api_key_file)
        aform.addRow(key_label, key_row)
        aform.addRow("", self.api_url)

        layout = QVBoxLayout(self)
        layout.addWidget(window)
        layout.addWidget(quick)
        layout.addWidget(api)
        layout.addStretch(1)

    def load_from(self, get: Any) -> None:
        self.close_to_tray.setChecked(get(Key.CLOSE_TO_TRAY))
        self.autostart.setChecked(get(Key.AUTOSTART))
        self.shortcut.setKeySequence(QKeySequence(get(Key.QUICK_SHORTCUT)))
        self.copy_twice.setChecked(get(Key.COPY_TWICE))
        self.clipboard_watch.setChecked(get(Key.CLIPBOARD_WATCH))
        self.api_enabled.setChecked(get(Key.API_ENABLED))
        self.api_port.setValue(get(Key.API_PORT))
        self.api_key_file.setText(get(Key.API_KEY_FILE))
        self._enable_api_fields(self.api_enabled.isChecked())
        self._show_url()
        self._check_shortcut()

    def shortcut_text(self) -> str:
        return self.shortcut.keySequence().toString(QKeySequence.SequenceFormat.PortableText)

    def values(self) -> dict[Key, Any]:
        out: dict[Key, Any] = {
            Key.CLOSE_TO_TRAY: self.close_to_tray.isChecked(),
            Key.AUTOSTART: self.autostart.isChecked(),
            Key.COPY_TWICE: self.copy_twice.isChecked(),
            Key.CLIPBOARD_WATCH: self.clipboard_watch.isChecked(),
            Key.API_ENABLED: self.api_enabled.isChecked(),
            Key.API_PORT: self.api_port.value(),
            Key.API_KEY_FILE: self.api_key_file.text().strip(),
        }
        if SHORTCUT.fullmatch(self.shortcut_text()):
            out[Key.QUICK_SHORTCUT] = self.shortcut_text()
        return out

    def _check_shortcut(self) -> None:
        text = self.shortcut_text()
        if not text:
            self.shortcut_hint.setText(self.tr("Press the keys, e.g. Ctrl+Alt+T."))
        elif SHORTCUT.fullmatch(text):
            self.shortcut_hint.setText(self.tr("Opens the popup from any app while Qiao runs."))
        else:
            self.shortcut_hint.setText(
                self.tr("A global shortcut needs Ctrl, Alt, Shift or Meta and one key; this one is not kept.")
            )

    def _enable_api_fields(self, on: bool) -> None:
        for widget in (self.api_port, self.api_key_file, self.api_key_browse, self.api_url):
            widget.setEnabled(on)

    def _show_url(self) -> None:
        self.api_url.setText(self.tr("Address: {url}").format(url=f"http://127.0.0.1:{self.api_port.value()}"))

    def _browse_key(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, self.tr("API key file"), self.api_key_file.text())
        if path:
            self.api_key_file.setText(path)
