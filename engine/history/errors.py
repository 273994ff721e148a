"""Why the history database could not be used: each a QiaoError with a message a person can act on."""

from __future__ import annotations

from pathlib import Path

from engine.errors import QiaoError


class HistoryError(QiaoError):
    """The history database refused an operation (busy for too long, disk full, closed)."""


class HistoryDamaged(HistoryError):
    """The file was not a readable history database. It was moved to `moved_to` and an empty history was started
    in its place, so opening the same path again works."""

    def __init__(self, path: Path, moved_to: Path | None, reason: str) -> None:
        self.path = path
        self.moved_to = moved_to
        self.reason = reason
        kept = f"it was kept as {moved_to}" if moved_to is not None else "it could not be moved aside"
        super().__init__(f"the history database {path} was damaged ({reason}); {kept} and a new, empty history started")


class HistoryTooNew(HistoryError):
    """The file was written by a newer Qiao (a schema version this one does not know). It is left untouched, so the
    newer Qiao still finds its history; this one runs without."""

    def __init__(self, path: Path, version: int, known: int) -> None:
        self.path = path
        self.version = version
        self.known = known
        super().__init__(
            f"the history database {path} was written by a newer Qiao (schema {version}; this one knows up to "
            f"{known}); it was left as it is and the history is off until Qiao is updated"
        )
