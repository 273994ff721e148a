"""The Documents panel: one row per file given to Qiao (name, format, progress as parts done / total, time left,
state, and Cancel, or Open and Show in folder once done), with where results go and what they are called.

It paints a `gui.documents.document_queue.DocumentQueue`, one `gui.documents.document_row.DocumentRow` per file
(worded by gui.documents.wording); the queue and the worker do the work. A dock of the main window, shown when a
document is added.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, Qt, Slot
from PySide6.QtGui import QGuiApplication, QPalette
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from gui.documents.document_queue import DocumentQueue, State, supported_extensions
from gui.documents.document_row import DocumentRow
from gui.notice_bar import NoticeBar
from gui.settings import DEFAULT_NAME_TEMPLATE, Key


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
        # The View menu's entry: the dock gives it the title, which has no mnemonic for Alt+V, D
        self.toggleViewAction().setText(QCoreApplication.translate("DocumentsPanel", "&Documents"))

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
