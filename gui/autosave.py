"""Keeps the source text on disk, so nothing pasted is lost to a restart or a crash.

Writes are debounced (the text may be megabytes and change on every key press) and atomic (write a temporary
file, then `os.replace`), so a crash mid-write leaves the previous copy intact.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer

DEBOUNCE_MS = 400


class Autosave(QObject):
    """Debounced, atomic saving of one text to one file."""

    def __init__(
        self,
        path: str | Path,
        text: Callable[[], str],
        parent: QObject | None = None,
        debounce_ms: int = DEBOUNCE_MS,
    ) -> None:
        super().__init__(parent)
        self.path = Path(path)
        self._get_text = text  # read only when saving: a multi-megabyte paste is not copied per key press
        self._dirty = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.flush)
        self.last_error: str | None = None

    def load(self) -> str:
        """The text saved last time, or "" if none (or unreadable: better an empty pane than a crash)."""
        try:
            return self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def schedule(self) -> None:
        """The text changed: save it once typing pauses."""
        self._dirty = True
        self._timer.start()

    def pending(self) -> bool:
        return self._dirty

    def flush(self) -> None:
        """Save now if anything changed (also called on close)."""
        self._timer.stop()
        if not self._dirty:
            return
        self._dirty = False
        try:
            self._write(self._get_text())
            self.last_error = None
        except OSError as exc:  # a full or read-only disk must not take the window down
            self.last_error = str(exc)

    def _write(self, text: str) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not text:
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            return
        fd, tmp = tempfile.mkstemp(prefix=".source-", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
