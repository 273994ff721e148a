"""Files dropped on the window become documents to translate.

Decision: a drop that carries local files goes to the Documents queue wherever it lands, the text panes included
(a dropped .txt is translated as a document, written beside it, not pasted into the source pane: before this,
dropping a file there did nothing useful — the editor inserted at most its path). A drag of plain text into the
panes still edits them as before. Unsupported files are still queued, and fail with the reason, so a drop is never
silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QEvent, QMimeData, QObject
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent


def dropped_files(mime: QMimeData | None) -> list[Path]:
    """The local files (or folders) a drag carries, in order; [] for text, remote URLs and anything else."""
    if mime is None or not mime.hasUrls():
        return []
    return [Path(url.toLocalFile()) for url in mime.urls() if url.isLocalFile() and url.toLocalFile()]


class FileDropFilter(QObject):
    """Installed on the window and on each editor's viewport: accepts drags of files and hands the files over."""

    def __init__(self, on_files: Callable[[list[Path]], object], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._on_files = on_files

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and isinstance(
            event, QDragEnterEvent | QDragMoveEvent
        ):
            if dropped_files(event.mimeData()):
                event.acceptProposedAction()
                return True
        elif kind == QEvent.Type.Drop and isinstance(event, QDropEvent):
            files = dropped_files(event.mimeData())
            if files:
                event.acceptProposedAction()
                self._on_files(files)
                return True
        return False
