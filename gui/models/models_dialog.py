"""The Models dialog: the installed bundles (pair, the scripts each writes, family, published quality, measured speed,
size, precisions, licence, where, verified or not, which one each direction uses), choosing the one a direction
uses, import from a folder or an archive, remove, verify, and downloads from the catalogue, which is fetched only
when the user asks. Its columns fit its width (gui.models.column_fit): long text is elided, never scrolled to.

Every operation runs on `gui.models.model_tasks` (its own thread, cancellable); this dialog only starts jobs and paints
their reports. A failed job changes nothing, and the dialog says why in plain words.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QSize, Qt, Signal, Slot
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui import pair_text
from gui.models import column_fit, model_text
from gui.models.model_tasks import ALREADY, OFFLINE, ModelStore, ModelTaskThread
from gui.settings import Key, Settings

ARCHIVE_SUFFIXES = ("*.zip", "*.tar", "*.tar.gz", "*.tgz", "*.tar.xz", "*.tar.bz2")
MB = 1_000_000
_LOCATIONS = {
    "explicit": QT_TRANSLATE_NOOP("ModelsDialog", "Given with --model"),
    "env": QT_TRANSLATE_NOOP("ModelsDialog", "Named by QIAO_MODEL_DIR"),
    "program": QT_TRANSLATE_NOOP("ModelsDialog", "Beside the program"),
    "source": QT_TRANSLATE_NOOP("ModelsDialog", "Source folder"),
    "user": QT_TRANSLATE_NOOP("ModelsDialog", "Your models folder"),
}


megabytes = model_text.megabytes
InUse = Callable[[list], "set[str]"]  # installed models -> the paths of those their directions use


def best_in_use(models: list) -> set[str]:
    """Without the window: the model each direction would use with no choice saved (the best published quality)."""
    from engine.store.choice import pick

    keys = dict.fromkeys(m.pair.key for m in models if getattr(m, "pair", None) is not None)
    return {str(chosen.path) for key in keys if (chosen := pick(models, key)) is not None}


class ModelsDialog(QDialog):
    """See the module docstring; `models_changed(list)` after every fresh list, `removed(path)` after a removal,
    `use_requested(model)` when the user chooses the model a direction uses (the window saves and loads it)."""

    models_changed = Signal(object)
    removed = Signal(str)
    replaced = Signal(str)  # an import or download replaced the installed model at this path (the window reloads it)
    use_requested = Signal(object)
    fetched = Signal(object)  # the model `get_model` asked for, downloaded and installed (the window switches to it)

    INSTALLED_COLUMNS = 12
    FIT_WIDTH = 1220  # the installed table's columns fit at this width without scrolling (column_fit's docstring)
    OPEN_HEIGHT = 620
    CATALOGUE_COLUMNS = 8
    CATALOGUE_SPEED_COLUMN = 4
    CATALOGUE_STATE_COLUMN = 7
    NAME_COLUMN = 1
    SCRIPTS_COLUMN = 2
    QUALITY_COLUMN = 4
    SPEED_COLUMN = 5
    LOCATION_COLUMN = 9
    STATUS_COLUMN = 10
    USE_COLUMN = 11
    # Cut down (elided, full text in the tooltip) when the row is wider than the table: name, family, location, status
    SHRINKABLE = (NAME_COLUMN, 3, LOCATION_COLUMN, STATUS_COLUMN)
    CATALOGUE_SHRINKABLE = (1, 2)

    def __init__(
        self,
        store: ModelStore | None = None,
        explicit: str | None = None,
        parent: QWidget | None = None,
        *,
        in_use: InUse | None = None,
        settings: Settings | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings  # remembers where Import… last found a model (None: the file dialogs start anywhere)
        self.setObjectName("modelsDialog")
        self.setWindowTitle(self.tr("Models"))
        self.setMinimumSize(760, 520)
        self.resize(self.opening_size())  # wide enough for every column of the installed table, "In use" included
        self.models: list[Any] = []
        self.entries: list[Any] = []
        self.checked: dict[str, list[str]] = {}  # bundle path -> problems found by Verify ([] = intact)
        self._job = ""  # the kind of job running, "" when none
        self._last: tuple[str, tuple] = ("", ())  # the last job started and its arguments
        self._removing: str | None = None
        self._speed: tuple[float, int] | None = None  # (time, bytes) of the running download's first report
        self._closed = False
        self._wanted_download = ""  # that id while its download runs
        self._wanted = ""  # the catalogue id `get_model` fetches the catalogue for, then downloads
        self.explicit = explicit  # with --model the window runs one bundle: nothing to choose
        self.in_use: InUse = in_use or best_in_use
        self.engine = ModelTaskThread(store, explicit)
        tasks = self.engine.tasks
        tasks.progress.connect(self._progress)
        tasks.finished.connect(self._finished)
        tasks.cancelled.connect(self._cancelled)
        tasks.failed.connect(self._failed)
        tasks.listed.connect(self._listed)
        self._build()
        self.finished.connect(self.close_tasks)
        self._start("list")

    # ---- construction ----------------------------------------------------------------------------------------

    def _build(self) -> None:
        self.installed = QTableWidget(0, self.INSTALLED_COLUMNS, self)
        self.installed.setObjectName("installedModels")
        self.installed.setAccessibleName(self.tr("Installed models"))
        self.installed.setHorizontalHeaderLabels(
            [
                self.tr("Languages"),
                self.tr("Name"),
                self.tr("Writes"),
                self.tr("Family"),
                self.tr("Quality"),
                self.tr("Speed"),
                self.tr("Size"),
                self.tr("Precision"),
                self.tr("Licence"),
                self.tr("Location"),
                self.tr("Status"),
                self.tr("In use"),
            ]
        )
        self._table_style(self.installed)
        self._installed_fit = column_fit.ColumnFit(self.installed, self.SHRINKABLE)
        self.installed.itemSelectionChanged.connect(self._update_buttons)

        self.import_button = QPushButton(self.tr("&Import…"), self)
        self.import_button.setObjectName("importButton")
        menu = QMenu(self.import_button)
        self.import_folder_action = menu.addAction(self.tr("From a &folder…"))
        self.import_folder_action.triggered.connect(lambda: self._ask_import(folder=True))
        self.import_archive_action = menu.addAction(self.tr("From an &archive (.zip, .tar…)…"))
        self.import_archive_action.triggered.connect(lambda: self._ask_import(folder=False))
        self.import_button.setMenu(menu)
        self.verify_button = QPushButton(self.tr("&Verify"), self)
        self.verify_button.setObjectName("verifyButton")
        self.verify_button.setToolTip(self.tr("Check every file of the selected model against its manifest"))
        self.verify_button.clicked.connect(self.verify_selected)
        self.remove_button = QPushButton(self.tr("&Remove…"), self)
        self.remove_button.setObjectName("removeButton")
        self.remove_button.clicked.connect(self.remove_selected)
        self.use_button = QPushButton(self.tr("&Use for its direction"), self)
        self.use_button.setObjectName("useButton")
        self.use_button.clicked.connect(self.use_selected)

        self.check_button = QPushButton(self.tr("C&heck for models"), self)
        self.check_button.setObjectName("checkButton")
        self.check_button.setToolTip(self.tr("Download the list of available models from the model server"))
        self.check_button.clicked.connect(self.check_catalogue)
        self.catalogue = QTableWidget(0, self.CATALOGUE_COLUMNS, self)
        self.catalogue.setObjectName("catalogue")
        self.catalogue.setAccessibleName(self.tr("Models available for download"))
        self.catalogue.setHorizontalHeaderLabels(
            [
                self.tr("Languages"),
                self.tr("Name"),
                self.tr("Family"),
                self.tr("Quality"),
                self.tr("Speed"),
                self.tr("Size"),
                self.tr("Licence"),
                self.tr("Installed"),
            ]
        )
        self._table_style(self.catalogue)
        self._catalogue_fit = column_fit.ColumnFit(self.catalogue, self.CATALOGUE_SHRINKABLE)
        self.catalogue.itemSelectionChanged.connect(self._update_buttons)
        self.download_button = QPushButton(self.tr("&Download"), self)
        self.download_button.setObjectName("downloadButton")
        self.download_button.clicked.connect(self.download_selected)
        self.cancel_button = QPushButton(self.tr("&Cancel"), self)
        self.cancel_button.setObjectName("cancelTaskButton")
        self.cancel_button.setToolTip(self.tr("Stop the running operation; nothing is changed"))
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("taskProgress")
        self.progress.setAccessibleName(self.tr("Progress"))
        policy = self.progress.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # the buttons keep their size while no operation runs
        self.progress.setSizePolicy(policy)
        self.progress.hide()
        self.message = QLabel(self)
        self.message.setObjectName("modelsMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.buttons.rejected.connect(self.reject)

        installed_row = QHBoxLayout()
        for b in (self.use_button, self.import_button, self.verify_button, self.remove_button):
            b.setAutoDefault(False)
            installed_row.addWidget(b)
        installed_row.addStretch(1)
        download_row = QHBoxLayout()
        for b in (self.check_button, self.download_button, self.cancel_button):
            b.setAutoDefault(False)
            download_row.addWidget(b)
        download_row.addWidget(self.progress, 1)

        installed_label = QLabel(self.tr("Installed models"), self)
        installed_label.setBuddy(self.installed)
        download_label = QLabel(self.tr("Download"), self)
        download_label.setBuddy(self.catalogue)
        for label in (installed_label, download_label):
            font = label.font()
            font.setBold(True)
            label.setFont(font)
        self.offline_note = QLabel(
            self.tr("Qiao asks the model server only when you click “Check for models” or “Download”."), self
        )
        self.offline_note.setWordWrap(True)

        layout = QVBoxLayout(self)
        layout.addWidget(installed_label)
        layout.addWidget(self.installed, 3)
        layout.addLayout(installed_row)
        layout.addSpacing(8)
        layout.addWidget(download_label)
        layout.addWidget(self.offline_note)
        layout.addWidget(self.catalogue, 2)
        layout.addLayout(download_row)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        self._update_buttons()

    def opening_size(self) -> QSize:
        """The size the dialog opens at: FIT_WIDTH (the installed table's twelve columns then fit, long names
        elided: gui.models.column_fit) where the screen has room, else the screen's width; at its minimum the
        "In use" and "Status" columns were off to the right, behind a horizontal scroll bar."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        room = screen.availableGeometry() if screen is not None else None
        width = min(self.FIT_WIDTH, room.width() - 40) if room is not None else self.FIT_WIDTH
        height = min(self.OPEN_HEIGHT, room.height() - 60) if room is not None else self.OPEN_HEIGHT
        minimum = self.minimumSize()
        return QSize(max(minimum.width(), width), max(minimum.height(), height))

    @staticmethod
    def _table_style(table: QTableWidget) -> None:
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        # Tab goes on to the buttons, Shift+Tab back (the arrows move between rows): with Qt's default Tab walked
        # the cells, round and round, and a keyboard user never left the table
        table.setTabKeyNavigation(False)
        table.verticalHeader().hide()
        table.setWordWrap(False)

    def fit_columns(self) -> None:
        """Both tables' columns fit the dialog's width (long names and problems elided; see gui.models.column_fit);
        done again whenever a table changes size."""
        self._installed_fit.fit()
        self._catalogue_fit.fit()

    # ---- what is shown ---------------------------------------------------------------------------------------

    def status_of(self, model: Any) -> str:
        """ "Verified", "Not checked", or the problem in the engine's words."""
        if model.problem:
            return str(model.problem)
        problems = self.checked.get(str(model.path))
        if problems is None:
            return self.tr("Not checked")
        if not problems:
            return self.tr("Verified")
        return self.tr("Damaged: {problem}").format(problem=problems[0])

    def location_of(self, model: Any) -> str:
        known = _LOCATIONS.get(model.location)
        return QCoreApplication.translate("ModelsDialog", known) if known else str(model.location)

    def used_paths(self) -> set[str]:
        """The bundles their directions use now (the window's choice, else the best)."""
        try:
            return set(self.in_use(self.models))
        except Exception:  # advice only: never let it break the list
            return set()

    def _fill_installed(self) -> None:
        selected = self.selected_model()
        keep = str(selected.path) if selected is not None else None
        used = self.used_paths()
        self.installed.setRowCount(len(self.models))
        for row, m in enumerate(self.models):
            languages = pair_text.arrow(m.pair.key) if m.pair is not None else self.tr("Unknown")
            cells = [
                languages,
                m.name,
                model_text.scripts_text(m) if not m.problem else "",
                model_text.family_text(m) if not m.problem else "",
                model_text.quality_text(m) if not m.problem else "",
                model_text.speed_text(m) if not m.problem else "",
                megabytes(m.size_bytes),
                pair_text.listing([p.upper() for p in m.precisions]),
                m.license,
                self.location_of(m),
                self.status_of(m),
                self.tr("In use") if str(m.path) in used else "",
            ]
            tip = f"{m.path}\n{model_text.details(m)}" if not m.problem else str(m.path)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text if col == self.STATUS_COLUMN else tip)
                self.installed.setItem(row, col, item)
            if keep == str(m.path):
                self.installed.selectRow(row)
        # The hint when nothing is installed, unless a job's outcome is showing: the list is refreshed after every
        # job, and a failed import or download must keep saying why (it used to be replaced by this hint at once).
        hint = self.tr("No model is installed. Import one, or check for models to download.")
        if not self.models and self.message.text() in ("", hint):
            self.message.setText(hint)
        elif self.models and self.message.text() == hint:
            self.message.setText("")
        self.fit_columns()
        self._update_buttons()

    def _fill_catalogue(self) -> None:
        from engine.store.catalogue import recommended

        have = {(m.pair.key if m.pair else "", m.model_id) for m in self.models}
        best = {id(e) for e in recommended(self.entries)} if self.entries else set()
        self.catalogue.setRowCount(len(self.entries))
        for row, e in enumerate(self.entries):
            installed = (e.pair_key, e.model_id) in have
            state = self.tr("Installed") if installed else self.tr("Recommended") if id(e) in best else ""
            cells = [
                pair_text.arrow(e.pair_key),
                e.name,
                model_text.family_text(e),
                model_text.quality_text(e),
                model_text.speed_text(e),
                megabytes(e.size),
                e.license,
                state,
            ]
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(model_text.details(e))
                self.catalogue.setItem(row, col, item)
        self.fit_columns()
        self._update_buttons()

    def _select_recommended(self) -> None:
        """After "Check for models", with nothing selected: the best-quality entry of a direction that has no usable
        model installed is selected, so a new install gets the recommended model with one click on Download."""
        from engine.store.catalogue import recommended

        if self.selected_entry() is not None or not self.entries:
            return
        served = {m.pair.key for m in self.models if getattr(m, "pair", None) is not None and not m.problem}
        wanted = next((e for e in recommended(self.entries) if e.pair_key not in served), None)
        if wanted is not None:
            self.catalogue.selectRow(next(r for r, e in enumerate(self.entries) if e is wanted))

    def selected_model(self) -> Any | None:
        rows = self.installed.selectionModel().selectedRows()
        return self.models[rows[0].row()] if rows and rows[0].row() < len(self.models) else None

    def selected_entry(self) -> Any | None:
        rows = self.catalogue.selectionModel().selectedRows()
        return self.entries[rows[0].row()] if rows and rows[0].row() < len(self.entries) else None

    def _update_buttons(self) -> None:
        busy = bool(self._job)
        model = self.selected_model()
        self.import_button.setEnabled(not busy)
        self.verify_button.setEnabled(not busy and model is not None and not model.problem)
        removable = model is not None and model.removable
        self.remove_button.setEnabled(not busy and removable)
        choosable = model is not None and not model.problem and model.pair is not None and not self.explicit
        self.use_button.setEnabled(choosable and str(model.path) not in self.used_paths())
        if model is not None and model.pair is not None:
            self.use_button.setToolTip(
                self.tr("Translate {languages} with this model from now on").format(
                    languages=pair_text.arrow(model.pair.key)
                )
            )
        if self.explicit:
            self.use_button.setToolTip(self.tr("Qiao was started with one model (--model): there is nothing to choose"))
        if model is not None and not model.removable:
            self.remove_button.setToolTip(
                self.tr("Only models in your models folder can be removed here; this one is: {where}.").format(
                    where=self.location_of(model)
                )
            )
        else:
            self.remove_button.setToolTip(self.tr("Delete the selected model from your models folder"))
        self.check_button.setEnabled(not busy)
        self.download_button.setEnabled(not busy and self.selected_entry() is not None)
        self.cancel_button.setEnabled(self._job in ("verify", "import", "download", "catalogue"))

    # ---- actions ---------------------------------------------------------------------------------------------

    def _start(self, kind: str, *args: Any) -> bool:
        if not self.engine.tasks.start(kind, *args):
            return False
        self._job = kind
        self._last = (kind, args)  # what to run again, with replace=True, when the user agrees to replace
        self._speed = None
        if kind != "list":
            self.progress.setRange(0, 0)  # busy until the first report
            self.progress.setFormat("")
            self.progress.show()
        self._update_buttons()
        return True

    def _ask_import(self, *, folder: bool) -> None:
        path = self.ask_import_path(folder)
        if path:
            if self.settings is not None:  # the folder holding the model folder or archive: the next one is there too
                self.settings.set(Key.MODEL_IMPORT_DIR, str(Path(path).parent))
            self.import_from(path)

    def ask_import_path(self, folder: bool) -> str:
        """The file dialog, opened in the folder the last import came from (tests replace this)."""
        start = self.settings.get(Key.MODEL_IMPORT_DIR) if self.settings is not None else ""
        if folder:
            return QFileDialog.getExistingDirectory(self, self.tr("Import a model folder"), start)
        pattern = " ".join(ARCHIVE_SUFFIXES)
        path, _ = QFileDialog.getOpenFileName(
            self,
            self.tr("Import a model archive"),
            start,
            self.tr("Model archives ({patterns})").format(patterns=pattern),
        )
        return path

    def confirm_replace(self, what: Any) -> bool:
        """Ask before replacing an installed bundle by the one being imported or downloaded; `what` names the
        installed one (tests replace this)."""
        name = getattr(what, "name", None) or Path(str(what)).name
        answer = QMessageBox.question(
            self,
            self.tr("Replace model"),
            self.tr(
                "A model with the same name as “{name}” is installed already. Replace it? The installed one is kept "
                "until the new one has been checked."
            ).format(name=name),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def confirm_remove(self, model: Any) -> bool:
        """Ask before deleting (tests replace this)."""
        answer = QMessageBox.question(
            self,
            self.tr("Remove model"),
            self.tr("Delete “{name}” ({pair}) from {path}? This cannot be undone.").format(
                name=model.name, pair=pair_text.arrow(model.pair.key) if model.pair else "", path=model.path
            ),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def import_from(self, path: str | Path) -> None:
        """Import a bundle folder or archive; it is verified before it is moved in, so a bad one changes nothing."""
        self.message.setText(self.tr("Importing {path}…").format(path=path))
        self._start("import", str(path))

    @Slot()
    def use_selected(self) -> None:
        """Ask the window to use the selected model for its direction (saved per direction, loaded at once)."""
        model = self.selected_model()
        if model is None or model.problem or model.pair is None or self.explicit:
            return
        self.use_requested.emit(model)
        self.message.setText(
            self.tr("{name} now translates {languages}.").format(
                name=model.name, languages=pair_text.arrow(model.pair.key)
            )
        )
        self._fill_installed()

    @Slot()
    def verify_selected(self) -> None:
        model = self.selected_model()
        if model is not None:
            self.message.setText(self.tr("Checking {name}…").format(name=model.name))
            self._start("verify", model)

    @Slot()
    def remove_selected(self) -> None:
        model = self.selected_model()
        if model is None or not model.removable or not self.confirm_remove(model):
            return
        self._removing = str(model.path)
        self.message.setText(self.tr("Removing {name}…").format(name=model.name))
        self._start("remove", model)

    @Slot()
    def check_catalogue(self) -> None:
        self.message.setText(self.tr("Asking the model server which models are available…"))
        self._start("catalogue")

    def get_model(self, catalogue_id: str) -> None:
        """One click from the window's offer of a better model: read the catalogue, then download `catalogue_id`
        (both on the task thread); `fetched` follows once it is installed. The catalogue is read only now, when the
        user asked for the model."""
        self._wanted = catalogue_id
        if self._job == "list":  # the dialog lists the installed models first: the catalogue follows
            self.message.setText(self.tr("Asking the model server which models are available…"))
            return
        self.check_catalogue()
        if self._job != "catalogue":  # another job runs: the user can still check and download by hand
            self._wanted = ""

    def _download_wanted(self) -> None:
        wanted, self._wanted = self._wanted, ""
        row = next((r for r, e in enumerate(self.entries) if e.id == wanted), None)
        if row is None:
            self.message.setText(
                self.tr("The model server does not list {id}; nothing was downloaded.").format(id=wanted)
            )
            return
        self.catalogue.selectRow(row)
        self._wanted_download = wanted
        self.download_selected()

    @Slot()
    def download_selected(self) -> None:
        entry = self.selected_entry()
        if entry is not None:
            self.message.setText(self.tr("Downloading {name}…").format(name=entry.name))
            self._start("download", entry)

    @Slot()
    def cancel(self) -> None:
        self.engine.tasks.cancel()

    # ---- reports ---------------------------------------------------------------------------------------------

    @Slot(str, int, int)
    def _progress(self, kind: str, done: int, total: int) -> None:
        if kind != self._job:
            return
        if total > 0:
            scale = 1024 if total > 2**31 - 1 else 1  # a QProgressBar holds 32-bit values: KiB for huge totals
            self.progress.setRange(0, max(1, total // scale))
            self.progress.setValue(min(done, total) // scale)
        if kind != "download":  # verify and import count in their own units: a percentage says enough
            self.progress.setFormat("%p%")
            return
        text = self.tr("{done} of {total} MB").format(done=f"{done / MB:.1f}", total=f"{total / MB:.1f}")
        if self._speed is None:  # measured from the first report: a resumed download starts part-way
            self._speed = (time.monotonic(), done)
        else:
            seconds = time.monotonic() - self._speed[0]
            if seconds > 0.2:
                rate = (done - self._speed[1]) / seconds / MB
                text = self.tr("{progress} · {rate} MB/s").format(progress=text, rate=f"{rate:.1f}")
        self.progress.setFormat(text.replace("%", "%%"))

    def _end_job(self) -> None:
        self._job = ""
        self.progress.hide()
        self._update_buttons()

    @Slot(str, object)
    def _finished(self, kind: str, result: Any) -> None:
        if kind == "list":
            if self._job == "list":
                self._end_job()
                if self._wanted:  # get_model asked while the list ran
                    self.check_catalogue()
            return
        self._end_job()
        if kind == "verify":
            model = self.selected_model()
            problems = list(result or [])
            if model is not None:
                self.checked[str(model.path)] = problems
            self.message.setText(
                self.tr("Every file is intact.")
                if not problems
                else self.tr("The model is damaged: {problem}").format(problem="; ".join(problems[:3]))
            )
            self._fill_installed()
        elif kind == "import":
            self.message.setText(self.tr("Imported {name}.").format(name=getattr(result, "name", "")))
            self._replaced(kind, result)
        elif kind == "remove":
            self.message.setText(self.tr("The model was removed."))
            if self._removing:
                self.removed.emit(self._removing)
            self._removing = None
        elif kind == "catalogue":
            self.entries = list(result or [])
            self._fill_catalogue()
            self.message.setText(
                self.tr("{n} models are available.").format(n=len(self.entries))
                if self.entries
                else self.tr("The model server lists no models.")
            )
            if self._wanted:
                self._download_wanted()
            else:
                self._select_recommended()
        elif kind == "download":
            self.message.setText(self.tr("Downloaded and checked {name}.").format(name=getattr(result, "name", "")))
            self._replaced(kind, result)
            wanted, self._wanted_download = self._wanted_download, ""
            if wanted and result is not None:
                self.fetched.emit(result)

    def _replaced(self, kind: str, result: Any) -> None:
        """An import or download the user agreed would replace an installed model: its folder is new on disk, so a
        window that has the old one loaded must load it again (`replaced`)."""
        last_kind, args = self._last
        path = getattr(result, "path", None)
        if last_kind == kind and len(args) > 1 and args[1] and path is not None:
            self.replaced.emit(str(path))

    @Slot(str)
    def _cancelled(self, kind: str) -> None:
        self._end_job()
        self._wanted = self._wanted_download = ""
        self._removing = None
        self.message.setText(self.tr("Cancelled; nothing was changed."))

    @Slot(str, str)
    def _failed(self, kind: str, error: str) -> None:
        if kind == "list" and self._job != "list":
            self.message.setText(self.tr("Could not list the installed models: {error}").format(error=error))
            return
        self._end_job()
        self._removing = None
        self._wanted = ""
        wanted, self._wanted_download = self._wanted_download, ""  # kept only through a replace the user agrees to
        if error.startswith(ALREADY) and kind in ("import", "download") and self._last[0] == kind:
            args = self._last[1]
            if self.confirm_replace(error[len(ALREADY) :] or args[0]):  # the installed one's name, not the file's
                self.message.setText(self.tr("Replacing the installed model…"))
                self._wanted_download = wanted
                self._start(kind, args[0], True)
            else:
                self.message.setText(self.tr("The model is installed already; nothing was changed."))
            return
        if error == OFFLINE:
            self.message.setText(
                self.tr("Qiao could not reach the model server. You may be offline; nothing was changed.")
            )
            return
        wording = {
            "list": self.tr("Could not list the installed models: {error}"),
            "verify": self.tr("Could not check the model: {error}"),
            "import": self.tr("Could not import the model; nothing was changed. {error}"),
            "remove": self.tr("Could not remove the model: {error}"),
            "catalogue": self.tr("Could not read the list of models: {error}"),
            "download": self.tr("The download failed; nothing was changed. {error}"),
        }
        self.message.setText(wording.get(kind, "{error}").format(error=error))

    @Slot(object)
    def _listed(self, models: list) -> None:
        self.models = list(models)
        self._fill_installed()
        if self.entries:
            self._fill_catalogue()
        self.models_changed.emit(self.models)

    # ---- closing ---------------------------------------------------------------------------------------------

    @Slot()
    def close_tasks(self) -> None:
        """Cancel what runs and stop the task thread; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self.engine.shutdown()
