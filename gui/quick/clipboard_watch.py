"""Clipboard watching (opt-in, pausable): new English text on the clipboard is offered to the popup.

Skipped: Qiao's own copies (its MIME marker), non-text, huge text, anything a password manager marked, text that
is not English-looking (the en→zh direction), and the text handled last time. Changes are debounced, because
apps often set the clipboard several times for one copy.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QClipboard

from gui.quick.clipboard_text import MAX_CHARS, is_concealed, is_qiao_copy, looks_english

DEBOUNCE_MS = 350


class ClipboardWatcher(QObject):
    text_ready = Signal(str)
    skipped = Signal(str)  # why the last change was not offered (for tests and logs; never the content)

    def __init__(
        self, clipboard: QClipboard, *, debounce_ms: int = DEBOUNCE_MS, english_only: bool = True, parent=None
    ) -> None:
        super().__init__(parent)
        self._clipboard = clipboard
        self.english_only = english_only
        self.enabled = False
        self.paused = False
        self._last_text: str | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._check)
        clipboard.dataChanged.connect(self._changed)

    @property
    def active(self) -> bool:
        return self.enabled and not self.paused

    def set_enabled(self, enabled: bool) -> None:
        self.enabled = enabled
        if not enabled:
            self._timer.stop()

    def set_paused(self, paused: bool) -> None:
        self.paused = paused
        if paused:
            self._timer.stop()

    def _changed(self) -> None:
        if self.active:
            self._timer.start()  # restart: only the last of a burst of changes is read

    def _check(self) -> None:
        if not self.active:
            return
        mime = self._clipboard.mimeData(QClipboard.Mode.Clipboard)
        reason = None
        if mime is None or not mime.hasText():
            reason = "not text"
        elif is_qiao_copy(mime):
            reason = "copied from Qiao"
        elif is_concealed(mime):
            reason = "password manager"
        else:
            text = mime.text().strip()
            if not text:
                reason = "empty"
            elif len(text) > MAX_CHARS:
                reason = "too long"
            elif self.english_only and not looks_english(text):
                reason = "not English"
            elif text == self._last_text:
                reason = "unchanged"
            else:
                self._last_text = text
                self.text_ready.emit(text)
                return
        self.skipped.emit(reason)
