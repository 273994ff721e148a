"""The real window on the real worker and engine, opened as gui.app opens it, for tests that install bundles in a
profile of their own: open with the settings the test made, wait for the model (or fail with the window's problem),
and shut every window down (its history recorder first) when the test ends."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from gui.settings import Settings
from gui.window.main_window import MainWindow
from gui.worker.engine import local_engine


@contextlib.contextmanager
def real_windows(qtbot, tmp_path: Path) -> Iterator[Callable[[Settings], MainWindow]]:
    """open(settings) → a shown MainWindow whose model has loaded; every window opened is shut down on exit."""
    windows: list[MainWindow] = []

    def open_(settings: Settings) -> MainWindow:
        w = MainWindow(settings, tmp_path / "state" / "source.txt", engine=local_engine())
        qtbot.addWidget(w)
        windows.append(w)
        w.show()
        qtbot.waitUntil(lambda: w.model is not None or w.problem is not None, timeout=20_000)
        assert w.model is not None, w.problem
        return w

    try:
        yield open_
    finally:
        for w in windows:
            if getattr(w, "history_recorder", None) is not None:
                w.history_recorder.close()
            w.shutdown()
