"""A worker on its own started QThread, and a clean way to stop both."""

from __future__ import annotations

import sys
from typing import Generic, Protocol, TypeVar

from PySide6.QtCore import QThread

SWITCH_INTERVAL_S = 0.001  # the interpreter's thread switch interval while a worker runs


class Worker(Protocol):
    """A QObject whose slots run on the thread it is moved to."""

    def moveToThread(self, thread: QThread) -> bool: ...

    def stop(self) -> None:
        """Cancel work and refuse new work (called on the UI thread before the thread quits)."""
        ...


W = TypeVar("W", bound=Worker)


class EngineThread(Generic[W]):
    """`worker` moved to a started QThread named "qiao-engine"."""

    def __init__(self, worker: W) -> None:
        # The worker's Python work (sentence results, token spans) holds the GIL for up to the switch interval each
        # time the UI thread asks for it back, and the UI thread asks at every Qt call it makes: at the default
        # 5 ms a finishing 72 000-sentence paste froze the window for 0.6 s; at 1 ms it does not.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self.thread = QThread()
        self.thread.setObjectName("qiao-engine")
        self.worker = worker
        self.worker.moveToThread(self.thread)
        self.thread.start()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel work, stop the thread; True if it ended within the timeout (a model load cannot be cut short)."""
        self.worker.stop()
        self.thread.quit()
        return self.thread.wait(timeout_ms)
