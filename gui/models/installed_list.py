"""The installed models, listed off the UI thread for the window's model indicator and its offer of a better model.

Listing reads every bundle's manifest (no hashing), which is quick but still disk work: it runs on a short-lived
daemon thread and the result comes back as the `listed` signal (queued onto the UI thread). Only the latest
listing's result is delivered, so a slow old one never overwrites a newer one.
"""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtCore import QObject, Signal

from gui.models.model_tasks import EngineStore, ModelStore


class InstalledList(QObject):
    """`refresh()` lists the installed bundles in the background; `listed(list)` delivers them, `failed` why not."""

    listed = Signal(object)
    failed = Signal(str)

    def __init__(self, store: ModelStore | None = None, explicit: str | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.store: ModelStore = store or EngineStore()
        self.explicit = explicit
        self._generation = 0
        self._lock = threading.Lock()
        self.threads_seen: set[int] = set()  # for tests: where the listing ran

    def refresh(self) -> None:
        with self._lock:
            self._generation += 1
            generation = self._generation
        threading.Thread(target=self._list, args=(generation,), name="qiao-list-models", daemon=True).start()

    def _list(self, generation: int) -> None:
        self.threads_seen.add(threading.get_ident())
        try:
            models: Any = list(self.store.installed_models(self.explicit))
            error = None
        except Exception as exc:  # a store that cannot be read only means no choice is offered
            models, error = None, str(exc) or type(exc).__name__
        with self._lock:
            if generation != self._generation:
                return
        try:
            if error is not None:
                self.failed.emit(error)
            else:
                self.listed.emit(models)
        except RuntimeError:  # the window closed meanwhile (the C++ object is gone)
            pass
