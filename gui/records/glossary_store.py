"""The user's glossary on disk (`glossary.tsv` in the config folder), loaded once, saved whole or not at all.

A file that cannot be read as a glossary is never overwritten: it is moved aside (`glossary.tsv.corrupt-<time>`,
every entry it had still in it) and `problem` says so, in words the window shows; the store starts empty. A file
that cannot be opened at all (permissions) is left where it is, and saving is refused until it can be read, so the
entries in it are not replaced by an empty list.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, Signal

from engine.atomic_write import remove_stale_temps, write_state_file
from engine.errors import InputError
from engine.glossary import Glossary
from engine.glossary_io import format_glossary, read_glossary

FILE_NAME = "glossary.tsv"


def default_path() -> Path:
    from engine.paths import config_dir

    return config_dir() / FILE_NAME


class GlossaryStore(QObject):
    """The glossary the window applies; `changed` fires after every successful save."""

    changed = Signal()

    def __init__(self, path: str | Path | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = Path(path) if path is not None else default_path()
        self.problem: str | None = None  # what went wrong loading, for the window to show (translated)
        self.kept_aside: Path | None = None  # where an unreadable file was moved
        self._locked = False  # the file exists but could not be read: never overwrite it
        self._glossary = Glossary()
        remove_stale_temps(self.path)
        self._load()

    def glossary(self) -> Glossary:
        return self._glossary

    def save(self, glossary: Glossary) -> None:
        """Write `glossary` (atomically) and use it; raises OSError when it cannot be written (nothing changes)."""
        if self._locked:
            raise PermissionError(
                QCoreApplication.translate(
                    "GlossaryStore", "{path} could not be read, so it is not overwritten; check its permissions."
                ).format(path=self.path)
            )
        write_state_file(self.path, format_glossary(glossary, "tsv").encode("utf-8"))
        self._glossary = glossary
        self.changed.emit()

    def _load(self) -> None:
        if not self.path.exists():
            return
        try:
            self._glossary = read_glossary(self.path, "tsv")
        except InputError as exc:
            if isinstance(exc.__cause__, OSError):
                self._locked = True
                self.problem = QCoreApplication.translate(
                    "GlossaryStore", "The glossary could not be read ({reason}); it is left as it is."
                ).format(reason=str(exc))
                return
            self._move_aside(str(exc))

    def _move_aside(self, reason: str) -> None:
        backup = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        try:
            os.replace(self.path, backup)
        except OSError:
            self._locked = True
            self.problem = QCoreApplication.translate(
                "GlossaryStore", "The glossary file is damaged ({reason}); it is left as it is and not used."
            ).format(reason=reason)
            return
        self.kept_aside = backup
        self.problem = QCoreApplication.translate(
            "GlossaryStore",
            "The glossary file was damaged ({reason}). It was kept as {path}; the glossary starts empty.",
        ).format(reason=reason, path=backup)
