"""The History panel: the kept translations, searched as you type, reopened, deleted, exported or cleared, and the
"Keep a history" switch and size limit.

`attach_history(window, store, problem)` docks it on the window (hidden; View → History, Ctrl+H) with a
HistoryRecorder recording into `store`. `open_history_store()` opens the user's database: a damaged file was set
aside and a fresh one opened (the panel says so once); a database that cannot be used at all (a newer Qiao's, an
unwritable folder) gives no store and the panel shows why, while the rest of the app works without a history.
Reopen hands the entry to `window.show_history_entry(entry)` (the window puts source and shown output back).
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QDateTime, Qt, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QDockWidget,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engine.errors import QiaoError
from engine.history.errors import HistoryDamaged, HistoryTooNew
from engine.history.records import HistoryEntry
from engine.history.store import HistoryStore
from gui.records.history_recorder import HistoryRecorder
from gui.settings import SPECS, Key

log = logging.getLogger(__name__)

SEARCH_DELAY_MS = 200  # typing in the search field searches once it pauses this long
LIST_LIMIT = 200  # rows the list shows (search narrows it)
SNIPPET = 120  # characters of source and of output a row holds (the list elides them to its width)
EXPORT_FILTERS = {"jsonl": "JSON Lines (*.jsonl)", "csv": "CSV (*.csv)", "tsv": "TSV (*.tsv)"}
EDITED_MARK = "✎"


def default_history_path() -> Path:
    from engine.paths import data_dir

    return data_dir() / "history.sqlite3"


Problem = Exception | str | None  # why the history is not (all) there: the panel words it


def open_history_store(path: Path | None = None, max_entries: int | None = None) -> tuple[HistoryStore | None, Problem]:
    """The user's history database, and what the panel should say about it (None when all is well; a
    HistoryDamaged comes with the fresh store that replaced the file, any other problem with no store)."""
    path = Path(path) if path is not None else default_history_path()
    limit = max_entries if max_entries is not None else SPECS[Key.HISTORY_LIMIT].default
    try:
        return HistoryStore(path, max_entries=limit), None
    except HistoryDamaged as exc:
        log.warning("%s", exc)
        try:
            return HistoryStore(path, max_entries=limit), exc
        except (QiaoError, OSError) as again:
            return None, again
    except (QiaoError, OSError) as exc:
        log.warning("no history: %s", exc)
        return None, exc


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


def _edited(entry: HistoryEntry) -> bool:
    return any(s.edited is not None or s.chosen is not None for s in entry.sentences)


class HistoryPanel(QDockWidget):
    """The dock; see the module docstring."""

    reopened = Signal(object)  # the HistoryEntry handed to the window

    def __init__(self, window, store: HistoryStore | None, recorder: HistoryRecorder | None, problem: Problem = None):
        super().__init__(window)
        self.setObjectName("historyPanel")
        self.window_ = window
        self.store = store
        self.recorder = recorder
        self.settings = window.settings
        self.problem = problem
        self.setAllowedAreas(Qt.DockWidgetArea.RightDockWidgetArea | Qt.DockWidgetArea.LeftDockWidgetArea)

        body = QWidget(self)
        self.message = QLabel(body)
        self.message.setObjectName("historyMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.search = QLineEdit(body)
        self.search.setObjectName("historySearch")
        self.search.setClearButtonEnabled(True)
        self.list = QListWidget(body)
        self.list.setObjectName("historyList")
        self.list.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        self.list.setUniformItemSizes(True)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setSpacing(2)
        self.list.setAlternatingRowColors(True)
        self.empty = QLabel(body)
        self.empty.setObjectName("historyEmpty")
        self.empty.setWordWrap(True)
        self.empty.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.reopen_button = QPushButton(body)
        self.delete_button = QPushButton(body)
        self.export_button = QPushButton(body)
        self.clear_button = QPushButton(body)
        for button in (self.reopen_button, self.delete_button, self.export_button, self.clear_button):
            button.setAutoDefault(False)
        self.keep_box = QCheckBox(body)
        self.keep_box.setObjectName("historyKeep")
        self.limit_label = QLabel(body)
        self.limit_box = QSpinBox(body)
        self.limit_box.setObjectName("historyLimit")
        spec = SPECS[Key.HISTORY_LIMIT]
        self.limit_box.setRange(spec.minimum or 1, spec.maximum or 1_000_000)
        self.limit_box.setSingleStep(1000)
        self.limit_box.setGroupSeparatorShown(True)
        self.limit_label.setBuddy(self.limit_box)

        buttons = QHBoxLayout()
        for button in (self.reopen_button, self.delete_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        for button in (self.export_button, self.clear_button):
            buttons.addWidget(button)
        limit_row = QHBoxLayout()
        limit_row.addWidget(self.limit_label)
        limit_row.addWidget(self.limit_box)
        limit_row.addStretch(1)
        layout = QVBoxLayout(body)
        layout.addWidget(self.message)
        layout.addWidget(self.search)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.empty)
        layout.addLayout(buttons)
        layout.addWidget(self.keep_box)
        layout.addLayout(limit_row)
        self.setWidget(body)

        self.delete_action = QAction(self.list)
        self.delete_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Delete))
        self.delete_action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
        self.delete_action.triggered.connect(self.delete_selected)
        self.list.addAction(self.delete_action)

        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _text: self._search_timer.start(SEARCH_DELAY_MS))
        self.search.returnPressed.connect(self.refresh)
        self.list.itemActivated.connect(lambda _item: self.reopen_selected())
        self.list.itemSelectionChanged.connect(self._update_buttons)
        self.reopen_button.clicked.connect(self.reopen_selected)
        self.delete_button.clicked.connect(self.delete_selected)
        self.export_button.clicked.connect(self.export)
        self.clear_button.clicked.connect(self.clear_all)
        self.keep_box.toggled.connect(lambda on: self.settings.set(Key.HISTORY_ENABLED, on))
        self.limit_box.editingFinished.connect(self._limit_edited)
        self.settings.changed.connect(self._setting_changed)
        self.visibilityChanged.connect(lambda shown: shown and self.refresh())
        if recorder is not None:
            recorder.recorded.connect(lambda _id: self.isVisible() and self.refresh())
            recorder.changed.connect(lambda: self.isVisible() and self.refresh())
            recorder.failed.connect(self._show_problem)

        self._load_settings()
        self.retranslate()
        self.refresh()

    # ---- text -----------------------------------------------------------------------------------------------------

    def retranslate(self) -> None:
        self.setWindowTitle(self.tr("History"))
        self.toggleViewAction().setText(self.tr("&History"))
        self.search.setPlaceholderText(self.tr("Search source and translation"))
        self.search.setAccessibleName(self.tr("Search the history"))
        self.list.setAccessibleName(self.tr("Kept translations"))
        self.reopen_button.setText(self.tr("Reopen"))
        self.reopen_button.setToolTip(self.tr("Put this source and translation back in the window (Enter)"))
        self.delete_button.setText(self.tr("Delete"))
        self.delete_button.setToolTip(self.tr("Delete the selected entries (Del)"))
        self.export_button.setText(self.tr("Export…"))
        self.clear_button.setText(self.tr("Clear all…"))
        self.keep_box.setText(self.tr("Keep a history of translations"))
        self.limit_label.setText(self.tr("Keep at most"))
        self.limit_box.setSuffix(self.tr(" translations"))
        self._show_message()
        self.refresh()

    def changeEvent(self, event) -> None:
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        super().changeEvent(event)

    def _show_message(self) -> None:
        self.message.setText(self._problem_text())
        self.message.setVisible(bool(self.message.text()))

    def _problem_text(self) -> str:
        problem = self.problem
        if isinstance(problem, HistoryDamaged) and self.store is not None:
            if problem.moved_to is None:
                return self.tr("Your history could not be read, so a new, empty one was started.")
            return self.tr(
                "Your history could not be read, so a new, empty one was started. The damaged file was kept as {path}."
            ).format(path=problem.moved_to)
        if isinstance(problem, HistoryTooNew):
            return self.tr(
                "Your history was written by a newer version of Qiao. It is left as it is, and no history is kept "
                "until Qiao is updated."
            )
        if not problem:
            return ""
        if self.store is None:
            return self.tr("The history is not available: {reason}").format(reason=problem)
        return str(problem)  # a write or read the database refused just now (the engine's English wording)

    @Slot(str)
    def _show_problem(self, message: str) -> None:
        self.problem = message
        self._show_message()

    # ---- the list -------------------------------------------------------------------------------------------------

    @Slot()
    def refresh(self) -> None:
        """Show the entries the search field asks for (the most recent ones when it is empty)."""
        self._search_timer.stop()
        selected = set(self.selected_ids())
        self.list.clear()
        entries: list[HistoryEntry] = []
        if self.store is not None and not self.store.closed:
            try:
                entries = self.store.search(self.search.text(), limit=LIST_LIMIT)
            except QiaoError as exc:
                self._show_problem(str(exc))
        for entry in entries:
            item = QListWidgetItem(self._row_text(entry))
            item.setData(Qt.ItemDataRole.UserRole, entry)
            item.setToolTip(f"{entry.source[:500]}\n→ {entry.output[:500]}")
            self.list.addItem(item)
            item.setSelected(entry.id in selected)
        has_store = self.store is not None
        if not has_store:
            self.empty.setText("")
        elif self.search.text().strip():
            self.empty.setText(self.tr("Nothing in the history matches."))
        elif not self.settings.get(Key.HISTORY_ENABLED):
            self.empty.setText(self.tr("The history is off: new translations are not kept."))
        else:
            self.empty.setText(self.tr("Finished translations appear here."))
        self.empty.setVisible(has_store and not entries)
        for widget in (self.search, self.list, self.export_button, self.clear_button, self.keep_box, self.limit_box):
            widget.setEnabled(has_store)
        self.limit_label.setEnabled(has_store)
        self._update_buttons()

    def _row_text(self, entry: HistoryEntry) -> str:
        """Three lines: when (and the mark of the user's changes), the source's start, the output's start; the
        list elides each line to the panel's width."""
        when = QDateTime.fromString(entry.created, Qt.DateFormat.ISODate)
        if when.isValid():
            when = when.toLocalTime()
            time_text = when.toString("HH:mm")
            if when.date() == QDateTime.currentDateTime().date():
                stamp = self.tr("Today {time}").format(time=time_text)
            else:
                stamp = f"{when.toString('yyyy-MM-dd')} {time_text}"
        else:
            stamp = entry.created
        if _edited(entry):
            stamp += "   " + self.tr("{mark} changed by you").format(mark=EDITED_MARK)
        return f"{stamp}\n{_snippet(entry.source)}\n{_snippet(entry.output)}"

    def entries(self) -> list[HistoryEntry]:
        """What the list shows, top first."""
        return [self.list.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.list.count())]

    def selected_ids(self) -> list[int]:
        return [item.data(Qt.ItemDataRole.UserRole).id for item in self.list.selectedItems()]

    def _update_buttons(self) -> None:
        count = len(self.list.selectedItems())
        self.reopen_button.setEnabled(count == 1 and hasattr(self.window_, "show_history_entry"))
        self.delete_button.setEnabled(count > 0)
        self.delete_action.setEnabled(count > 0)

    # ---- actions --------------------------------------------------------------------------------------------------

    @Slot()
    def reopen_selected(self) -> None:
        items = self.list.selectedItems()
        if len(items) != 1 or not hasattr(self.window_, "show_history_entry"):
            return
        entry = items[0].data(Qt.ItemDataRole.UserRole)
        fresh = self._safely(lambda: self.store.get(entry.id)) if self.store is not None else None
        entry = fresh or entry
        self.window_.show_history_entry(entry)
        self.reopened.emit(entry)

    @Slot()
    def delete_selected(self) -> None:
        ids = self.selected_ids()
        if not ids or self.store is None:
            return
        self._safely(lambda: self.store.delete(ids))
        self.refresh()

    @Slot()
    def export(self) -> None:
        if self.store is None:
            return
        filters = list(EXPORT_FILTERS.values())
        path, chosen = QFileDialog.getSaveFileName(
            self, self.tr("Export the history"), str(Path.home() / "qiao-history.jsonl"), ";;".join(filters)
        )
        if not path:
            return
        fmt = next((k for k, v in EXPORT_FILTERS.items() if v == chosen), None)
        suffix = Path(path).suffix.lower().lstrip(".")
        if suffix in EXPORT_FILTERS:
            fmt = suffix  # the name the user typed wins over the filter left selected
        fmt = fmt or "jsonl"
        if not Path(path).suffix:
            path += f".{fmt}"
        QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)  # 10,000 entries take about half a second
        try:
            count = self.store.export(Path(path), fmt)
        except (QiaoError, OSError) as exc:
            self._show_problem(self.tr("The history could not be exported: {reason}").format(reason=exc))
            return
        finally:
            QApplication.restoreOverrideCursor()
        self.problem = None
        self._show_message()
        if hasattr(self.window_, "statusBar"):
            done = self.tr("Exported %n translation(s) to {path}", "", count).format(path=path)
            self.window_.statusBar().showMessage(done, 8000)

    @Slot()
    def clear_all(self) -> None:
        if self.store is None:
            return
        count = self._safely(self.store.count) or 0
        answer = QMessageBox.question(
            self,
            self.tr("Clear the history"),
            self.tr("Delete all %n kept translation(s)? This cannot be undone.", "", count),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        self._safely(self.store.clear)
        self.refresh()

    def _safely(self, work):
        try:
            return work()
        except QiaoError as exc:
            self._show_problem(str(exc))
            return None

    # ---- settings -------------------------------------------------------------------------------------------------

    def _load_settings(self) -> None:
        self.keep_box.blockSignals(True)
        self.keep_box.setChecked(bool(self.settings.get(Key.HISTORY_ENABLED)))
        self.keep_box.blockSignals(False)
        self.limit_box.blockSignals(True)
        self.limit_box.setValue(int(self.settings.get(Key.HISTORY_LIMIT)))
        self.limit_box.blockSignals(False)

    @Slot()
    def _limit_edited(self) -> None:
        self.settings.set(Key.HISTORY_LIMIT, self.limit_box.value())

    @Slot(object)
    def _setting_changed(self, key: Key) -> None:
        if key in (Key.HISTORY_ENABLED, Key.HISTORY_LIMIT):
            self._load_settings()
            self.refresh()


def attach_history(window, store: HistoryStore | None, problem: Problem = None) -> HistoryPanel:
    """Dock a History panel on `window` (hidden) with View → History (Ctrl+H), and record into `store` (None: the
    panel shows `problem` and nothing is recorded). Returns the panel; its `recorder` is None without a store."""
    recorder = HistoryRecorder(store, window) if store is not None else None
    panel = HistoryPanel(window, store, recorder, problem)
    window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, panel)
    panel.hide()
    menu = getattr(window, "view_menu", None)
    if not isinstance(menu, QMenu):
        menu = window.menuBar().addMenu(window.tr("&View"))
        window.view_menu = menu
    action = panel.toggleViewAction()
    action.setShortcut(QKeySequence("Ctrl+H"))
    menu.addSeparator()
    menu.addAction(action)
    window.history_panel = panel
    window.history_recorder = recorder
    return panel


def install_history(window) -> HistoryPanel:
    """Open the user's history database (the size limit from the settings) and attach it to `window`."""
    store, problem = open_history_store(max_entries=int(window.settings.get(Key.HISTORY_LIMIT)))
    return attach_history(window, store, problem)
