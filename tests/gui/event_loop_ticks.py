"""What the responsiveness tests measure: when the UI thread's event loop got to a 10 ms timer."""

from __future__ import annotations

import time
from itertools import pairwise

from PySide6.QtCore import QObject, QTimer


def tick_recorder(parent: QObject) -> tuple[QTimer, list[float]]:
    """A 10 ms timer (not started) and the list of times it fires into: a long gap is a frozen UI."""
    ticks: list[float] = []
    timer = QTimer(parent)
    timer.setInterval(10)
    timer.timeout.connect(lambda: ticks.append(time.perf_counter()))
    return timer, ticks


def gaps(ticks: list[float]) -> list[float]:
    """Seconds between consecutive ticks."""
    return [b - a for a, b in pairwise(ticks)]
