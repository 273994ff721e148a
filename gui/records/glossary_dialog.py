"""Tools → Glossary…: the table of source term → target term (empty: keep as is), its import/export, and the two
switches (apply the glossary at all; keep placeholders, links and code verbatim). Edits are saved when OK'd.

`attach_glossary(window, store)` adds the menu item and makes the window's requests carry the glossary.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QPainter, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMenu,
    QMessageBox,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from engine.errors import InputError
from engine.glossary import Glossary, GlossaryEntry
from engine.glossary_io import read_glossary, write_glossary
from gui.records.glossary_store import GlossaryStore
from gui.settings import Key, Settings

SOURCE, TARGET, CASE, WHOLE = range(4)
MERGE, REPLACE = "merge", "replace"


class _KeepHint(QStyledItemDelegate):
    """Shows "keep as is" in grey in an empty target cell, so a do-not-translate entry reads as one."""

    def __init__(self, hint: str, parent: QObject) -> None:
        super().__init__(parent)
        self.hint = hint

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index) -> None:
        super().paint(painter, option, index)
        if index.data():
            return
        painter.save()
        color = option.palette.color(QPalette.ColorRole.PlaceholderText)
        if option.state & QStyle.StateFlag.State_Selected:
            color = option.palette.color(QPalette.ColorRole.HighlightedText)
        painter.setPen(color)
        font = painter.font()
        font.setItalic(True)
        painter.setFont(font)
        rect = option.rect.adjusted(4, 0, -4, 0)
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft), self.hint)
        painter.restore()


class GlossaryDialog(QDialog):
    """Edits a copy of the store's glossary; OK saves it (and the "apply" switch), Cancel forgets the edits."""

    def __init__(self, store: GlossaryStore, settings: Settings | None = None, parent: QWidget | None = None) -> None:
        if isinstance(settings, QWidget) and parent is None:  # GlossaryDialog(store, parent)
            settings, parent = None, settings
        super().__init__(parent)
        self.setObjectName("glossaryDialog")
        self.store = store
        self.settings = settings
        self.setWindowTitle(self.tr("Glossary"))
        self.resize(680, 460)

        intro = QLabel(
            self.tr(
                "Terms translated your way in every translation. Leave the target empty to keep a term as it is "
                "(names, products, code)."
            ),
            self,
        )
        intro.setWordWrap(True)
        self.table = QTableWidget(0, 4, self)
        self.table.setObjectName("glossaryTable")
        self.table.setHorizontalHeaderLabels(
            [self.tr("Source term"), self.tr("Target term"), self.tr("Match case"), self.tr("Whole words")]
        )
        self.table.horizontalHeaderItem(TARGET).setToolTip(self.tr("Empty: keep the source term as it is"))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(SOURCE, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(TARGET, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(CASE, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(WHOLE, QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAlternatingRowColors(True)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        self.table.setItemDelegateForColumn(TARGET, _KeepHint(self.tr("keep as is"), self.table))

        self.add_button = QPushButton(self.tr("&Add"), self)
        self.remove_button = QPushButton(self.tr("&Remove"), self)
        self.import_button = QPushButton(self.tr("&Import…"), self)
        self.export_button = QPushButton(self.tr("&Export…"), self)
        self.add_button.clicked.connect(self.add_row)
        self.remove_button.clicked.connect(self.remove_selected)
        delete = QAction(self.table)
        delete.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        delete.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)  # not while a cell is being edited
        delete.triggered.connect(self.remove_selected)
        self.table.addAction(delete)
        self.import_button.clicked.connect(self._ask_import)
        self.export_button.clicked.connect(self._ask_export)
        row = QHBoxLayout()
        for button in (self.add_button, self.remove_button):
            row.addWidget(button)
        row.addStretch(1)
        for button in (self.import_button, self.export_button):
            row.addWidget(button)

        self.enabled_box = QCheckBox(self.tr("Apply the glossary to every translation"), self)
        self.protect_box = QCheckBox(self.tr("Keep placeholders, links and code as they are"), self)
        self.protect_box.setToolTip(self.tr("{name}, %s, web addresses, e-mail addresses and `code` stay verbatim"))
        self.message = QLabel(self)
        self.message.setObjectName("glossaryMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.hide()

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(self.enabled_box)
        layout.addWidget(self.protect_box)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)

        glossary = store.glossary()
        self.set_entries(glossary.entries)
        self.protect_box.setChecked(glossary.protect)
        self.enabled_box.setChecked(bool(settings.get(Key.GLOSSARY_ENABLED)) if settings is not None else True)
        self.enabled_box.setVisible(settings is not None)
        if store.problem:
            self.show_message(store.problem, error=True)
        self._update_buttons()

    # -- the table ------------------------------------------------------------------------------------------------
    def set_entries(self, entries: tuple[GlossaryEntry, ...] | list[GlossaryEntry]) -> None:
        self.table.setRowCount(0)
        for entry in entries:
            self._append(entry)
        self._update_buttons()

    def _append(self, entry: GlossaryEntry) -> int:
        r = self.table.rowCount()
        self.table.insertRow(r)
        self.table.setItem(r, SOURCE, QTableWidgetItem(entry.source))
        target = "" if entry.target is None or entry.target == entry.source else entry.target
        self.table.setItem(r, TARGET, QTableWidgetItem(target))
        for column, on in ((CASE, entry.case_sensitive), (WHOLE, entry.whole_word)):
            item = QTableWidgetItem()
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if on else Qt.CheckState.Unchecked)
            self.table.setItem(r, column, item)
        return r

    def entries(self) -> tuple[GlossaryEntry, ...]:
        """The table's entries (rows without a source term are left out)."""
        out = []
        for r in range(self.table.rowCount()):
            source = self._text(r, SOURCE)
            if not source:
                continue
            out.append(
                GlossaryEntry(
                    source=source,
                    target=self._text(r, TARGET) or None,
                    case_sensitive=self._checked(r, CASE),
                    whole_word=self._checked(r, WHOLE),
                )
            )
        return tuple(out)

    def glossary(self) -> Glossary:
        return Glossary(entries=self.entries(), protect=self.protect_box.isChecked())

    def _text(self, r: int, c: int) -> str:
        item = self.table.item(r, c)
        return item.text().strip() if item is not None else ""

    def _checked(self, r: int, c: int) -> bool:
        item = self.table.item(r, c)
        return item is not None and item.checkState() == Qt.CheckState.Checked

    def add_row(self) -> None:
        r = self._append(GlossaryEntry(""))
        self.table.setCurrentCell(r, SOURCE)
        self.table.editItem(self.table.item(r, SOURCE))
        self._update_buttons()

    def remove_selected(self) -> None:
        rows = sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True)
        for r in rows:
            self.table.removeRow(r)
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.remove_button.setEnabled(bool(self.table.selectedIndexes()))
        self.export_button.setEnabled(self.table.rowCount() > 0)

    # -- messages ------------------------------------------------------------------------------------------------
    def show_message(self, text: str, *, error: bool = False) -> None:
        self.message.setText(text)
        self.message.setProperty("error", error)
        self.message.setStyleSheet("color: palette(link);" if not error else "color: #c0392b; font-weight: bold;")
        self.message.show()

    # -- import / export -----------------------------------------------------------------------------------------
    def ask_import_path(self) -> str:
        """The file dialog (tests replace this)."""
        path, _ = QFileDialog.getOpenFileName(
            self, self.tr("Import a glossary"), "", self.tr("Glossaries (*.csv *.tsv *.tab *.txt);;All files (*)")
        )
        return path

    def ask_export_path(self) -> tuple[str, str]:
        """The file dialog and the format chosen (tests replace this)."""
        tsv, csv = self.tr("Tab-separated (*.tsv)"), self.tr("Comma-separated (*.csv)")
        path, chosen = QFileDialog.getSaveFileName(
            self, self.tr("Export the glossary"), "glossary.tsv", f"{tsv};;{csv}"
        )
        return path, "csv" if chosen == csv else "tsv"

    def ask_merge(self, count: int) -> str | None:
        """Merge with the table or replace it (tests replace this); None: cancelled."""
        box = QMessageBox(self)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(self.tr("Import a glossary"))
        box.setText(
            self.tr("Add the {count} imported entries to the {rows} in the table, or replace the table?").format(
                count=count, rows=self.table.rowCount()
            )
        )
        merge = box.addButton(self.tr("&Merge"), QMessageBox.ButtonRole.AcceptRole)
        replace = box.addButton(self.tr("&Replace"), QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(merge)
        box.exec()
        clicked = box.clickedButton()
        return MERGE if clicked is merge else REPLACE if clicked is replace else None

    def _ask_import(self) -> None:
        path = self.ask_import_path()
        if path:
            self.import_from(path)

    def import_from(self, path: str | Path) -> bool:
        """Read a CSV/TSV glossary into the table (merged or replacing it, as the user says); False when it could
        not be read (the message says why) or was cancelled."""
        try:
            imported = read_glossary(Path(path))
        except InputError as exc:
            self.show_message(self.tr("The glossary was not imported: {reason}").format(reason=exc), error=True)
            return False
        how = REPLACE if not self.entries() else self.ask_merge(len(imported.entries))
        if how is None:
            return False
        if how == REPLACE:
            self.set_entries(imported.entries)
        else:
            self.set_entries(merged(self.entries(), imported.entries))
        self.show_message(
            self.tr("Imported {count} entries from {name}.").format(count=len(imported.entries), name=Path(path).name)
        )
        return True

    def _ask_export(self) -> None:
        path, fmt = self.ask_export_path()
        if path:
            self.export_to(path, fmt)

    def export_to(self, path: str | Path, fmt: str | None = None) -> bool:
        path = Path(path)
        if fmt and path.suffix.lower() not in (".csv", ".tsv", ".tab", ".txt"):
            path = path.with_name(f"{path.name}.{fmt}")
        try:
            write_glossary(self.glossary(), path, fmt if path.suffix.lower() not in (".csv", ".tsv") else None)
        except OSError as exc:
            self.show_message(
                self.tr("Could not export to {path}: {reason}").format(path=path, reason=exc.strerror or exc),
                error=True,
            )
            return False
        self.show_message(self.tr("Exported {count} entries to {path}.").format(count=len(self.entries()), path=path))
        return True

    # -- OK ------------------------------------------------------------------------------------------------------
    def accept(self) -> None:
        try:
            self.store.save(self.glossary())
        except OSError as exc:
            self.show_message(
                self.tr("The glossary could not be saved: {reason}").format(reason=exc.strerror or exc), error=True
            )
            return
        if self.settings is not None:
            self.settings.set(Key.GLOSSARY_ENABLED, self.enabled_box.isChecked())
        super().accept()


def merged(current: tuple[GlossaryEntry, ...], imported: tuple[GlossaryEntry, ...]) -> tuple[GlossaryEntry, ...]:
    """The table's entries with the imported ones added; an imported entry replaces one for the same term (same
    case rule; case-insensitive terms compare without case), in its place."""

    def key(e: GlossaryEntry) -> tuple[str, bool]:
        return (e.source if e.case_sensitive else e.source.casefold(), e.case_sensitive)

    out = {key(e): e for e in current}
    for e in imported:
        out[key(e)] = e
    return tuple(out.values())


class _GlossaryMenu(QObject):
    """The Tools → Glossary… action, retitled when the interface language changes."""

    def __init__(self, window, store: GlossaryStore) -> None:
        super().__init__(window)
        self.window, self.store = window, store
        self.dialog: GlossaryDialog | None = None
        self.action = QAction(window)
        self.action.setObjectName("glossaryAction")
        self.action.triggered.connect(self.open)
        self._retitle()
        window.installEventFilter(self)

    def _retitle(self) -> None:
        self.action.setText(QCoreApplication.translate("GlossaryDialog", "&Glossary…"))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window and event.type() == QEvent.Type.LanguageChange:
            self._retitle()
        return False

    def open(self) -> GlossaryDialog:
        if self.dialog is not None and self.dialog.isVisible():
            self.dialog.raise_()
            self.dialog.activateWindow()
            return self.dialog
        self.dialog = GlossaryDialog(self.store, getattr(self.window, "settings", None), self.window)
        self.dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.dialog.destroyed.connect(self._forget)
        self.dialog.open()
        return self.dialog

    def _forget(self) -> None:
        self.dialog = None


def attach_glossary(window, store: GlossaryStore) -> QAction:
    """Add Tools → Glossary… to `window` (its `tools_menu`, made here if the window has none) and let its requests
    carry the store's glossary while Key.GLOSSARY_ENABLED is on (None when off). Returns the menu action."""
    menu = getattr(window, "tools_menu", None)
    if menu is None:
        bar = window.menuBar()
        menu = QMenu(QCoreApplication.translate("MainWindow", "&Tools"), window)
        help_menu = getattr(window, "help_menu", None)
        if help_menu is not None:  # Tools before Help, as desktop conventions have it
            bar.insertMenu(help_menu.menuAction(), menu)
        else:
            bar.addMenu(menu)
        window.tools_menu = menu
    entry = _GlossaryMenu(window, store)
    menu.addAction(entry.action)
    window.glossary_menu = entry
    settings = window.settings

    def source() -> Glossary | None:
        return store.glossary() if settings.get(Key.GLOSSARY_ENABLED) else None

    window.requests.glossary_source = source
    if store.problem and getattr(window, "notice", None) is not None:
        window.notice.show_message(store.problem)
    return entry.action
