"""The Documents panel: one row per file given to Qiao (name, format, progress as parts done / total, time left,
state, and Cancel, or Open and Show in folder once done), with where results go and what they are called.

It paints a `gui.documents.document_queue.DocumentQueue` and words its states in the interface language; the queue and
the
worker do the work. A dock of the main window, shown when a document is added.
"""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QEvent, Qt, Signal, Slot
from PySide6.QtGui import QFont, QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from engine.documents.job import DocumentResult
from gui import pair_text
from gui.documents.document_queue import DocumentQueue, Entry, Problem, State, supported_extensions
from gui.notice_bar import NoticeBar
from gui.settings import DEFAULT_NAME_TEMPLATE, Key
from gui.worker.scheduler import DOC_DIRECTION, DOC_LANGUAGE, INTERNAL, NO_MODEL

CONTEXT = "DocumentsPanel"

# What people call each format (the registry's labels are English only)
FORMAT_LABELS = {
    "txt": QT_TRANSLATE_NOOP("DocumentsPanel", "Plain text"),
    "markdown": QT_TRANSLATE_NOOP("DocumentsPanel", "Markdown"),
    "html": QT_TRANSLATE_NOOP("DocumentsPanel", "Web page (HTML)"),
    "srt": QT_TRANSLATE_NOOP("DocumentsPanel", "Subtitles (SRT)"),
    "vtt": QT_TRANSLATE_NOOP("DocumentsPanel", "Subtitles (WebVTT)"),
    "docx": QT_TRANSLATE_NOOP("DocumentsPanel", "Word document"),
    "odt": QT_TRANSLATE_NOOP("DocumentsPanel", "OpenDocument text"),
    "pptx": QT_TRANSLATE_NOOP("DocumentsPanel", "PowerPoint presentation"),
    "epub": QT_TRANSLATE_NOOP("DocumentsPanel", "EPUB e-book"),
}

STATE_LABELS = {
    State.QUEUED: QT_TRANSLATE_NOOP("DocumentsPanel", "Waiting"),
    State.TRANSLATING: QT_TRANSLATE_NOOP("DocumentsPanel", "Translating"),
    State.CANCELLING: QT_TRANSLATE_NOOP("DocumentsPanel", "Stopping…"),
    State.DONE: QT_TRANSLATE_NOOP("DocumentsPanel", "Done"),
    State.CANCELLED: QT_TRANSLATE_NOOP("DocumentsPanel", "Cancelled"),
    State.FAILED: QT_TRANSLATE_NOOP("DocumentsPanel", "Failed"),
}


def _tr(text: str) -> str:
    """A string marked with QT_TRANSLATE_NOOP above, in the interface language."""
    return QCoreApplication.translate(CONTEXT, text)


def format_label(name: str, source: Path) -> str:
    """ "Word document"; for a file Qiao does not read, its extension ("PDF")."""
    if name in FORMAT_LABELS:
        return _tr(FORMAT_LABELS[name])
    return source.suffix.lstrip(".").upper() or QCoreApplication.translate("DocumentsPanel", "Unknown")


def time_left(seconds: float | None) -> str:
    """ "about 3 min left"; rounded up, never "0 s"."""
    if seconds is None:
        return QCoreApplication.translate("DocumentsPanel", "Estimating the time left…")
    if seconds < 60:
        return QCoreApplication.translate("DocumentsPanel", "Less than a minute left")
    minutes = int(seconds // 60 + (1 if seconds % 60 else 0))
    if minutes < 60:
        return QCoreApplication.translate("DocumentsPanel", "About {n} min left").format(n=minutes)
    return QCoreApplication.translate("DocumentsPanel", "About {h} h {m} min left").format(
        h=minutes // 60, m=minutes % 60
    )


def took(seconds: float) -> str:
    if seconds < 60:
        return QCoreApplication.translate("DocumentsPanel", "Took {n} s").format(n=max(1, round(seconds)))
    return QCoreApplication.translate("DocumentsPanel", "Took {n} min").format(n=round(seconds / 60))


def reason(entry: Entry, output_exists: bool = False) -> str:
    """Why a file failed, for a person, in the interface language where Qiao knows the cause. `output_exists`: a
    result of the same name is there and replacing it was not asked for (the job refuses to write over it)."""
    if entry.problem is Problem.MISSING:
        return QCoreApplication.translate("DocumentsPanel", "The file is no longer there.")
    if entry.problem is Problem.FOLDER:
        return QCoreApplication.translate("DocumentsPanel", "This is a folder: add the documents in it instead.")
    if entry.problem is Problem.UNSUPPORTED:
        if entry.source.suffix.lower() == ".pdf":
            return QCoreApplication.translate(
                "DocumentsPanel",
                "PDF is not supported: its layout cannot be rebuilt in another language. Save or export it as a "
                "Word document (.docx) or as text first, then translate that.",
            )
        return (
            QCoreApplication.translate("DocumentsPanel", "Qiao does not translate this kind of file.")
            + " "
            + entry.reason
        )
    message = entry.reason
    if output_exists and not entry.overwrite and entry.output is not None:
        return QCoreApplication.translate(
            "DocumentsPanel",
            "A translation of this file is already there ({name}). Replace it, or choose another name or folder "
            "below and press Try again.",
        ).format(name=entry.output.name)
    if message == NO_MODEL:
        return QCoreApplication.translate("DocumentsPanel", "No translation model is loaded.")
    if message.startswith(DOC_DIRECTION):
        return QCoreApplication.translate(
            "DocumentsPanel",
            "Stopped because the translation direction changed. Switch back to {pair} and press Try again to go on "
            "from where it stopped.",
        ).format(pair=pair_text.arrow(message.removeprefix(DOC_DIRECTION)))
    if message.startswith(DOC_LANGUAGE):
        return language_refusal(message.removeprefix(DOC_LANGUAGE))
    if message.startswith(INTERNAL):
        print(f"qiao: document failed: {message.removeprefix(INTERNAL)}", file=sys.stderr)
        return QCoreApplication.translate(
            "DocumentsPanel", "An unexpected error stopped it. Try again; if it keeps failing, the file may be damaged."
        )
    return message  # the engine's own wording (DocumentError), which names the problem and what to do


_UNSUPPORTED = {
    "ja": QT_TRANSLATE_NOOP("DocumentsPanel", "Japanese"),
    "ko": QT_TRANSLATE_NOOP("DocumentsPanel", "Korean"),
}


def language_refusal(detail: str) -> str:
    """Why a document in another language was not translated (the worker's DOC_LANGUAGE detail: "missing:zh-en" or
    "unsupported:ja")."""
    kind, _, what = detail.partition(":")
    if kind == "missing":
        return QCoreApplication.translate(
            "DocumentsPanel",
            "This document is in {language}, and no {pair} model is installed to translate it. Get opus-mt-{key} in "
            "File → Models…, then press Try again.",
        ).format(language=pair_text.code_name(what.partition("-")[0]), pair=pair_text.arrow(what), key=what)
    name = QCoreApplication.translate("DocumentsPanel", _UNSUPPORTED.get(what, what))
    return QCoreApplication.translate(
        "DocumentsPanel", "This document looks {language}; Qiao translates only English and Chinese."
    ).format(language=name)


def done_detail(output: Path, result: DocumentResult | None) -> str:
    """Where the result went, and what a person should know about it (parts left as they were, a resumed run)."""
    parts = [QCoreApplication.translate("DocumentsPanel", "Saved as {name}").format(name=output.name)]
    failed = getattr(result, "failed_units", 0) or 0  # the runner's count of units the engine could not translate
    if failed:
        parts.append(
            QCoreApplication.translate(
                "DocumentsPanel", "{n} parts could not be translated and were left as they were"
            ).format(n=failed)
        )
    resumed = result.resumed if result is not None else 0
    if resumed:
        parts.append(
            QCoreApplication.translate(
                "DocumentsPanel", "went on from where it stopped ({n} parts done before)"
            ).format(n=resumed)
        )
    return " · ".join(parts)


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
        self.state.setText(_tr(STATE_LABELS[entry.state]))
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


class DocumentsPanel(QDockWidget):
    """The dock; see the module docstring."""

    def __init__(self, queue: DocumentQueue, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("documentsPanel")
        self.queue = queue
        self.settings = queue.settings
        self.rows: dict[int, DocumentRow] = {}
        self.setAllowedAreas(Qt.DockWidgetArea.BottomDockWidgetArea | Qt.DockWidgetArea.RightDockWidgetArea)

        body = QWidget(self)
        self.notice = NoticeBar(body)
        self.empty = QLabel(body)
        self.empty.setObjectName("documentsEmpty")
        self.empty.setWordWrap(True)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.list = QWidget(body)
        self.list_layout = QVBoxLayout(self.list)
        self.list_layout.setContentsMargins(0, 0, 0, 0)
        self.list_layout.setSpacing(4)
        self.list_layout.addStretch(1)
        self.scroll = QScrollArea(body)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(self.list)
        self.scroll.setMinimumHeight(110)

        self.add_button = QPushButton(body)
        self.add_button.setObjectName("documentsAdd")
        self.add_button.setAutoDefault(False)
        self.add_button.clicked.connect(self.choose_documents)
        self.clear_button = QPushButton(body)
        self.clear_button.setObjectName("documentsClear")
        self.clear_button.setAutoDefault(False)
        self.clear_button.clicked.connect(self.queue.remove_ended)
        self.folder_label = QLabel(body)
        self.folder_value = QLabel(body)
        self.folder_value.setObjectName("documentsFolder")
        self.folder_value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.folder_value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.choose_button = QPushButton(body)
        self.choose_button.setObjectName("documentsChooseFolder")
        self.choose_button.setAutoDefault(False)
        self.choose_button.clicked.connect(self._choose_folder)
        self.beside_button = QPushButton(body)
        self.beside_button.setObjectName("documentsBeside")
        self.beside_button.setAutoDefault(False)
        self.beside_button.clicked.connect(lambda: self.settings.set(Key.DOCUMENT_FOLDER, ""))
        self.name_label = QLabel(body)
        self.name_edit = QLineEdit(body)
        self.name_edit.setObjectName("documentsName")
        self.name_edit.setMaxLength(120)
        self.name_edit.editingFinished.connect(self._name_edited)
        self.name_label.setBuddy(self.name_edit)
        metrics = self.name_edit.fontMetrics()
        self.name_edit.setMinimumWidth(metrics.horizontalAdvance(DEFAULT_NAME_TEMPLATE) + 3 * metrics.height())

        where = QHBoxLayout()  # one row under the list: adding files, then where results go
        where.addWidget(self.add_button)
        where.addWidget(self.clear_button)
        where.addSpacing(16)
        where.addWidget(self.folder_label)
        where.addWidget(self.folder_value, 1)
        where.addWidget(self.choose_button)
        where.addWidget(self.beside_button)
        where.addSpacing(12)
        where.addWidget(self.name_label)
        where.addWidget(self.name_edit)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(8, 4, 8, 6)
        layout.addWidget(self.notice)
        layout.addWidget(self.empty)
        layout.addWidget(self.scroll, 1)
        layout.addLayout(where)
        self.setWidget(body)

        queue.added.connect(self._added)
        queue.changed.connect(self._changed)
        queue.removed.connect(self._removed)
        self.settings.changed.connect(self._setting_changed)
        self._retranslate()

    # ---- rows ------------------------------------------------------------------------------------------------

    @Slot(int)
    def _added(self, key: int) -> None:
        row = DocumentRow(key, self.list)
        row.cancel_requested.connect(self.queue.cancel)
        row.open_requested.connect(self.open_result)
        row.folder_requested.connect(self.show_in_folder)
        row.retry_requested.connect(self.queue.replace)
        self.rows[key] = row
        self.list_layout.insertWidget(self.list_layout.count() - 1, row)  # above the stretch
        row.show()
        self._changed(key)
        if not self.isVisible():
            self.show()
            self._fit_height()
        self.raise_()

    def _fit_height(self) -> None:
        """Docked under the panes: tall enough for about three rows, never more than half the window."""
        window = self.parentWidget()
        if not isinstance(window, QMainWindow) or self.isFloating() or not self.rows:
            return
        row = next(iter(self.rows.values())).sizeHint().height()
        footer = self.choose_button.sizeHint().height()
        wanted = 3 * (row + self.list_layout.spacing()) + footer + 3 * self.fontMetrics().height()
        window.resizeDocks([self], [min(wanted, window.height() // 2)], Qt.Orientation.Vertical)

    @Slot(int)
    def _changed(self, key: int) -> None:
        entry = self.queue.entries.get(key)
        row = self.rows.get(key)
        if entry is not None and row is not None:
            row.paint(entry, self.queue.output_exists(entry) and entry.state is not State.DONE)
        self._update_buttons()

    @Slot(int)
    def _removed(self, key: int) -> None:
        row = self.rows.pop(key, None)
        if row is not None:
            row.deleteLater()
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.clear_button.setEnabled(any(e.state.ended for e in self.queue.entries.values()))
        self.empty.setVisible(not self.rows)
        self.scroll.setVisible(bool(self.rows))
        active = self.queue.active()
        self.setWindowTitle(
            QCoreApplication.translate("DocumentsPanel", "Documents ({n} to go)").format(n=active)
            if active
            else QCoreApplication.translate("DocumentsPanel", "Documents")
        )

    # ---- opening results ---------------------------------------------------------------------------------------

    @Slot(int)
    def open_result(self, key: int) -> None:
        entry = self.queue.entries.get(key)
        if entry is None or entry.output is None or self.queue.open_result(key):
            return
        path = str(entry.output)
        self.notice.show_message(
            QCoreApplication.translate(
                "DocumentsPanel", "No application could open {name}. Open it yourself: {path}"
            ).format(name=entry.output.name, path=path),
            (
                QCoreApplication.translate("DocumentsPanel", "Copy path"),
                lambda: QGuiApplication.clipboard().setText(path),
            ),
        )

    @Slot(int)
    def show_in_folder(self, key: int) -> None:
        entry = self.queue.entries.get(key)
        if entry is None or entry.output is None or self.queue.show_in_folder(key):
            return
        path = str(entry.output.parent)
        self.notice.show_message(
            QCoreApplication.translate(
                "DocumentsPanel", "No file manager could open the folder. Open it yourself: {path}"
            ).format(path=path),
            (
                QCoreApplication.translate("DocumentsPanel", "Copy path"),
                lambda: QGuiApplication.clipboard().setText(path),
            ),
        )

    # ---- adding files ----------------------------------------------------------------------------------------------

    def ask_documents(self) -> list[str]:
        """The files the user picks (tests replace this); the dialog lists what Qiao reads first."""
        patterns = " ".join(f"*{ext}" for ext in supported_extensions())
        filters = [
            QCoreApplication.translate("DocumentsPanel", "Documents ({patterns})").format(patterns=patterns),
            QCoreApplication.translate("DocumentsPanel", "All files (*)"),
        ]
        paths, _ = QFileDialog.getOpenFileNames(
            self.parentWidget() or self,
            QCoreApplication.translate("DocumentsPanel", "Open documents to translate"),
            self.settings.get(Key.DOCUMENT_OPEN_DIR),
            ";;".join(filters),
        )
        return paths

    @Slot()
    def choose_documents(self) -> None:
        """File → Open document… and "Add documents…": the chosen files join the queue."""
        paths = self.ask_documents()
        if paths:
            self.settings.set(Key.DOCUMENT_OPEN_DIR, str(Path(paths[0]).parent))
            self.queue.add(paths)

    # ---- where results go --------------------------------------------------------------------------------------

    def ask_folder(self) -> str:
        """The folder for results ("" when the user cancels); tests replace this."""
        return QFileDialog.getExistingDirectory(
            self, QCoreApplication.translate("DocumentsPanel", "Folder for translated documents")
        )

    def _choose_folder(self) -> None:
        folder = self.ask_folder()
        if folder:
            self.settings.set(Key.DOCUMENT_FOLDER, folder)

    def _name_edited(self) -> None:
        text = self.name_edit.text().strip() or DEFAULT_NAME_TEMPLATE
        try:
            self.settings.set(Key.DOCUMENT_NAME, text)
        except ValueError:
            self.notice.show_message(
                QCoreApplication.translate(
                    "DocumentsPanel",
                    "A result's name must contain {stem} (the original name) and may use {lang} and {suffix}; "
                    "it cannot name a folder.",
                )
            )
        self._show_settings()

    @Slot(object)
    def _setting_changed(self, key: Key) -> None:
        if key in (Key.DOCUMENT_FOLDER, Key.DOCUMENT_NAME):
            self._show_settings()

    def _show_settings(self) -> None:
        folder = self.settings.get(Key.DOCUMENT_FOLDER)
        self.folder_value.setText(folder or QCoreApplication.translate("DocumentsPanel", "beside each original"))
        self.folder_value.setToolTip(folder)
        self.beside_button.setEnabled(bool(folder))
        template = self.settings.get(Key.DOCUMENT_NAME)
        if self.name_edit.text() != template:
            self.name_edit.setText(template)

    # ---- language ----------------------------------------------------------------------------------------------

    def _retranslate(self) -> None:
        self.add_button.setText(QCoreApplication.translate("DocumentsPanel", "Add documents…"))
        self.clear_button.setText(QCoreApplication.translate("DocumentsPanel", "Clear finished"))
        self.clear_button.setToolTip(
            QCoreApplication.translate(
                "DocumentsPanel", "Remove the finished, cancelled and failed files from this list"
            )
        )
        self.folder_label.setText(QCoreApplication.translate("DocumentsPanel", "Save translations:"))
        self.choose_button.setText(QCoreApplication.translate("DocumentsPanel", "Choose folder…"))
        self.beside_button.setText(QCoreApplication.translate("DocumentsPanel", "Beside the original"))
        self.name_label.setText(QCoreApplication.translate("DocumentsPanel", "Na&me:"))
        self.name_edit.setToolTip(
            QCoreApplication.translate(
                "DocumentsPanel", "{stem}: the original name · {lang}: the target language · {suffix}: the extension"
            )
        )
        self.name_edit.setAccessibleName(QCoreApplication.translate("DocumentsPanel", "Name of translated documents"))
        self.empty.setText(
            QCoreApplication.translate(
                "DocumentsPanel",
                "Drop documents on the window, or use File → Open document…, to translate whole files.",
            )
        )
        self.setAccessibleName(QCoreApplication.translate("DocumentsPanel", "Documents"))
        self._show_settings()
        for key in self.rows:
            self._changed(key)
        self._update_buttons()

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self._retranslate()
        super().changeEvent(event)
