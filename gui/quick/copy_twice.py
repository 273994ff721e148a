""" "Copy twice": the same text copied twice within 0.5 s opens the popup (as DeepL's press-Ctrl+C-twice).

Timing comes from QClipboard.dataChanged and an injectable clock, so tests drive it without sleeping. Qiao's own
copies and password-manager content never count.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QClipboard

from gui.quick.clipboard_text import is_concealed, is_qiao_copy

WINDOW_S = 0.5


class CopyTwice(QObject):
    triggered = Signal(str)  # the text copied twice

    def __init__(
        self,
        clipboard: QClipboard,
        *,
        clock: Callable[[], float] = time.monotonic,
        window_s: float = WINDOW_S,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._clipboard = clipboard
        self._clock = clock
        self.window_s = window_s
        self.enabled = False
        self._last: tuple[str, float] | None = None
        clipboard.dataChanged.connect(self._changed)

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        self._last = None

    def _changed(self) -> None:
        if not self.enabled:
            return
        now = self._clock()
        mime = self._clipboard.mimeData(QClipboard.Mode.Clipboard)
        if mime is None or not mime.hasText() or is_qiao_copy(mime) or is_concealed(mime):
            self._last = None
            return
        text = mime.text()
        if not text.strip():
            self._last = None
            return
        last = self._last
        if last is not None and last[0] == text and 0 < now - last[1] <= self.window_s:
            self._last = None  # a third copy starts a new pair rather than opening the popup again
            self.triggered.emit(text)
            return
        if last is not None and last[0] == text and now == last[1]:
            return  # the same change reported twice (some platforms emit dataChanged twice per copy)
        self._last = (text, now)
