"""Keeps the source text on disk, so nothing pasted is lost to a restart or a crash.

Writes are debounced (the text may be megabytes and change on every key press), done on a background thread,
and atomic (`engine.atomic_write.write_state_file`), so a crash mid-write leaves the previous copy intact. A write
that fails (read-only or full disk) is retried on the next edit and every few seconds, and reported once per failure
spell, so nobody believes their text is safe when it is not.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QTimer, Signal, Slot

from engine.atomic_write import remove_stale_temps, write_state_file

DEBOUNCE_MS = 400
RETRY_MS = 5000
LEGACY_TEMPS = (".source-*.tmp",)  # tempfile.mkstemp names used before the temp name was predictable


class Autosave(QObject):
    """Debounced, atomic saving of one text to one file; the timer's saves write on a background thread."""

    failed = Signal(str)  # the first failure after a success (or since start): the OS's reason
    recovered = Signal()  # a save worked again after `failed`
    _written = Signal(object)  # a background write's Future, delivered on the UI thread

    def __init__(
        self,
        path: str | Path,
        text: Callable[[], str],
        parent: QObject | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        *,
        retry_ms: int = RETRY_MS,
        companions: Sequence[Path] = (),
        pool: ThreadPoolExecutor | None = None,
    ) -> None:
        super().__init__(parent)
        self.path = Path(path)
        self._get_text = text  # read only when saving: a multi-megabyte paste is not copied per key press
        self._companions = tuple(companions)  # files about this text (its translation), removed when it is emptied
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._debounce_ms = debounce_ms
        self._timer.timeout.connect(self._flush_in_background)
        self._retry_ms = retry_ms
        # Encoding, writing and fsyncing 20 MB takes 0.1 s or more (far more on a slow disk): not on the UI thread.
        # A shared one-thread pool keeps this file's writes in order with its companions' (never a deleted
        # translation written back by a save queued before it).
        self._pool = pool or ThreadPoolExecutor(max_workers=1, thread_name_prefix="qiao-autosave")
        self._inflight: Future[str | None] | None = None
        self._written.connect(self._background_done, Qt.ConnectionType.QueuedConnection)
        self.last_error: str | None = None
        self.cleaned = remove_stale_temps(self.path, *LEGACY_TEMPS)  # left by a kill mid-write

    def load(self) -> str:
        """The text saved last time, or "" if none (or unreadable: better an empty pane than a crash)."""
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def schedule(self) -> None:
        """The text changed: save it once typing pauses."""
        self._dirty = True
        self._timer.start(self._debounce_ms)

    def pending(self) -> bool:
        """Something typed is not on disk yet (not saved, being written, or its save failed)."""
        return self._dirty or self._inflight is not None

    def flush(self) -> None:
        """Save now and wait for it (on close, and in tests); a failure keeps the text pending and retries."""
        self._timer.stop()
        self._wait()
        if not self._dirty:
            return
        self._dirty = False
        # Through the pool, behind what is queued there (a companion's write must not land after this removes it)
        self._finish(self._pool.submit(self._attempt, self._get_text()).result())

    @Slot()
    def _flush_in_background(self) -> None:
        if self._inflight is not None:  # one write at a time: look again once this one is done
            self._timer.start(self._debounce_ms)
            return
        if not self._dirty:
            return
        self._dirty = False
        text = self._get_text()  # the snapshot is an immutable str: safe to hand to the writer thread
        future = self._pool.submit(self._attempt, text)
        self._inflight = future
        future.add_done_callback(self._written.emit)

    @Slot(object)
    def _background_done(self, future: Future[str | None]) -> None:
        if future is self._inflight:  # not already collected by a flush() that waited for it
            self._inflight = None
            self._finish(future.result())

    def _wait(self) -> None:
        future, self._inflight = self._inflight, None
        if future is not None:
            self._finish(future.result())

    def _attempt(self, text: str) -> str | None:
        """Write; the OS's reason on failure (a full or read-only disk must not take the window down)."""
        try:
            self._write(text)
        except OSError as exc:
            return exc.strerror or str(exc)  # "Permission denied": the notice names the folder itself
        return None

    def _finish(self, error: str | None) -> None:
        if error is None:
            if self.last_error is not None:
                self.last_error = None
                self.recovered.emit()
            return
        self._dirty = True  # what is on screen is still not on disk
        first = self.last_error is None
        self.last_error = error
        self._timer.start(self._retry_ms)
        if first:
            self.failed.emit(error)

    def _write(self, text: str) -> None:
        if not text:
            for path in (self.path, *self._companions):
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            return
        write_state_file(self.path, text.encode("utf-8", "replace"))  # a lone surrogate must not stop the save
