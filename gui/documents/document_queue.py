"""The window's documents, with no widgets: what was added, in which state each one is, and what it needs of the
worker. The Documents panel paints the entries; the window only adds files.

Each file dropped or opened becomes an `Entry` at once: a file Qiao cannot translate (PDF, an unknown extension, a
folder, a file that vanished) is an entry that failed with the reason, so nothing the user gave is silently
ignored. The others go to the worker's queue with the settings of the moment: the window's TranslationOptions and
direction, and the result folder and name template (gui.settings). A document keeps them to the end.

The window's translation memory goes with them (the user's fixed sentences), but only what matches the settings of
now (`settle`, the window's gui.review.review_kept.settled): the window marks a kept sentence that lacks a glossary
term or is in another script and asks; a document has no one to ask, so the model translates that sentence.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from PySide6.QtCore import QObject, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices

from engine.documents import registry
from engine.documents.job import DocumentOptions, DocumentProgress, DocumentResult, result_name
from engine.documents.model import DocumentError
from engine.options import TranslationOptions
from gui.settings import Key, Settings
from gui.worker.scheduler import TranslationWorker


class State(Enum):
    QUEUED = "queued"
    TRANSLATING = "translating"
    CANCELLING = "cancelling"  # asked to stop; the running step ends first
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"

    @property
    def ended(self) -> bool:
        return self in (State.DONE, State.CANCELLED, State.FAILED)


class Problem(Enum):
    """Why a file never reached the worker (worded by the panel)."""

    NONE = ""
    MISSING = "missing"
    FOLDER = "folder"
    UNSUPPORTED = "unsupported"  # `reason` holds the registry's English explanation


@dataclass
class Entry:
    """One file in the panel; `key` stays the same when the file is queued again ("Replace")."""

    key: int
    source: Path
    format: str  # a registry name ("docx"); "" when the file is not one Qiao reads
    pair: str  # the direction it is for ("en-zh")
    state: State = State.QUEUED
    job_id: int | None = None
    output: Path | None = None  # where the result goes (from the job), then where it was written
    progress: DocumentProgress | None = None
    result: DocumentResult | None = None
    reason: str = ""  # the worker's failure message (or the registry's, with `problem`)
    problem: Problem = Problem.NONE
    overwrite: bool = False


def expected_output(source: Path, options: DocumentOptions, target_lang: str) -> Path:
    """Where DocumentJob writes the result of `source` (its own rule, engine.documents.job.result_name), to say so
    before the job starts; DocumentError for a name template that does not make a file name."""
    folder = options.out_dir or source.parent
    return folder / result_name(source, options.name_template, target_lang)


def supported_extensions() -> tuple[str, ...]:
    """What the file dialog and drag and drop accept; the registry's answer (formats whose libraries load)."""
    return registry.extensions()


def open_path(path: Path) -> bool:
    """Open a file or folder with the desktop's application for it; False when none would."""
    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(path)))


class DocumentQueue(QObject):
    """The entries and their states; see the module docstring."""

    added = Signal(int)  # key
    changed = Signal(int)  # key
    removed = Signal(int)  # key

    def __init__(
        self,
        worker: TranslationWorker,
        settings: Settings,
        translation: Callable[[], TranslationOptions],
        direction: Callable[[], str],
        parent: QObject | None = None,
        *,
        settle: Callable[[TranslationOptions, str], TranslationOptions] | None = None,
    ) -> None:
        """`settle(options, pair)`: the options a document of `pair` is translated with (the memory limited to
        what matches them); None: the window's options as they are."""
        super().__init__(parent)
        self.worker = worker
        self.settings = settings
        self._translation = translation
        self._settle = settle
        self._direction = direction
        self.entries: dict[int, Entry] = {}  # in the order they were added
        self._by_job: dict[int, int] = {}  # worker's document id -> entry key
        self._keys = itertools.count(1)
        worker.document_started.connect(self._started)
        worker.document_progress.connect(self._progress)
        worker.document_finished.connect(self._finished)
        worker.document_failed.connect(self._failed)

    # ---- what the user does ------------------------------------------------------------------------------------

    def options(self, *, overwrite: bool = False) -> DocumentOptions:
        """The result folder and name the settings ask for now."""
        folder = self.settings.get(Key.DOCUMENT_FOLDER)
        return DocumentOptions(
            out_dir=Path(folder) if folder else None,
            name_template=self.settings.get(Key.DOCUMENT_NAME),
            overwrite=overwrite,
        )

    def add(self, paths: Iterable[str | Path]) -> list[int]:
        """Queue every file (in the order given); a file Qiao cannot translate becomes a failed entry that says why.
        Returns the new entries' keys."""
        keys = []
        for raw in paths:
            source = Path(raw)
            entry = Entry(next(self._keys), source, "", self._direction())
            self.entries[entry.key] = entry
            keys.append(entry.key)
            problem = self._check(entry)
            if problem is None:
                self._send(entry)
            self.added.emit(entry.key)
        return keys

    def _check(self, entry: Entry) -> Problem | None:
        """None when the file can go to the worker; otherwise the entry is marked failed."""
        source = entry.source
        if source.is_dir():
            problem, reason = Problem.FOLDER, ""
        elif not source.exists():
            problem, reason = Problem.MISSING, ""
        else:
            try:
                entry.format = registry.for_path(source).name
                return None
            except DocumentError as exc:
                problem, reason = Problem.UNSUPPORTED, str(exc)
        entry.state, entry.problem, entry.reason = State.FAILED, problem, reason
        return problem

    def _send(self, entry: Entry) -> None:
        options = self.options(overwrite=entry.overwrite)
        target = entry.pair.split("-")[-1]
        entry.progress, entry.result = None, None
        try:
            entry.output = expected_output(entry.source, options, target)
        except DocumentError as exc:  # a name template edited by hand in the settings file: said in the row
            entry.state, entry.reason, entry.job_id = State.FAILED, str(exc), None
            return
        entry.state, entry.reason = State.QUEUED, ""
        translation = self._translation()
        if self._settle is not None:
            translation = self._settle(translation, entry.pair)
        entry.job_id = self.worker.translate_document(entry.source, options, translation, pair=entry.pair)
        self._by_job[entry.job_id] = entry.key

    def cancel(self, key: int) -> None:
        """Stop a running document (within one step) or drop a waiting one."""
        entry = self.entries.get(key)
        if entry is None or entry.state.ended or entry.job_id is None:
            return
        if entry.state is State.TRANSLATING:
            entry.state = State.CANCELLING
            self.changed.emit(key)
        self.worker.cancel_document(entry.job_id)

    def replace(self, key: int) -> None:
        """Translate a failed (or cancelled) file again; `overwrite` when its earlier result is in the way."""
        entry = self.entries.get(key)
        if entry is None or not entry.state.ended or entry.problem is not Problem.NONE:
            return
        entry.overwrite = self.output_exists(entry)
        entry.pair = self._direction()
        self._send(entry)
        self.changed.emit(key)

    def output_exists(self, entry: Entry) -> bool:
        """A result of the same name is already there (the job refuses to write over it unless asked)."""
        return entry.output is not None and entry.output.exists() and entry.output != entry.source

    def remove_ended(self) -> None:
        """Forget the entries that are done, cancelled or failed (the files are untouched)."""
        for key in [k for k, e in self.entries.items() if e.state.ended]:
            entry = self.entries.pop(key)
            if entry.job_id is not None:
                self._by_job.pop(entry.job_id, None)
            self.removed.emit(key)

    def active(self) -> int:
        """Entries not yet ended."""
        return sum(1 for e in self.entries.values() if not e.state.ended)

    def open_result(self, key: int) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry.output is not None and open_path(entry.output)

    def show_in_folder(self, key: int) -> bool:
        entry = self.entries.get(key)
        return entry is not None and entry.output is not None and open_path(entry.output.parent)

    # ---- the worker's reports ------------------------------------------------------------------------------

    def _entry(self, job_id: int) -> Entry | None:
        key = self._by_job.get(job_id)
        entry = self.entries.get(key) if key is not None else None
        return entry if entry is not None and entry.job_id == job_id else None

    @Slot(int, object)
    def _started(self, job_id: int, output: Path) -> None:
        entry = self._entry(job_id)
        if entry is None:
            return
        entry.output = Path(output)
        if entry.state is State.QUEUED:
            entry.state = State.TRANSLATING
        self.changed.emit(entry.key)

    @Slot(int, object)
    def _progress(self, job_id: int, progress: DocumentProgress) -> None:
        entry = self._entry(job_id)
        if entry is None:
            return
        entry.progress = progress
        if entry.state is State.QUEUED:
            entry.state = State.TRANSLATING
        self.changed.emit(entry.key)

    @Slot(int, object)
    def _finished(self, job_id: int, result: DocumentResult) -> None:
        entry = self._entry(job_id)
        if entry is None:
            return
        entry.result = result
        if result.cancelled:
            entry.state = State.CANCELLED
        else:
            entry.state = State.DONE
            entry.output = result.output or entry.output
        self.changed.emit(entry.key)

    @Slot(int, str)
    def _failed(self, job_id: int, message: str) -> None:
        entry = self._entry(job_id)
        if entry is None:
            return
        entry.state, entry.reason = State.FAILED, message
        self.changed.emit(entry.key)
