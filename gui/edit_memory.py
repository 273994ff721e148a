"""The session's own fixes: each sentence the user edited (or whose alternative they chose), by its English.

First in the window's translation memory (gui.memory_chain), so re-translating the source gives back the user's
version of every sentence whose English did not change. The engine asks `lookup` on its own thread while the
window adds edits on the UI thread: a lock keeps both sides consistent.
"""

from __future__ import annotations

import threading


class EditMemory:
    """source sentence (exactly as the model read it) → the user's text; a engine.memory.TranslationMemory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: dict[str, str] = {}

    def remember(self, source: str, text: str) -> None:
        if not source.strip():
            return
        with self._lock:
            self._texts[source] = text

    def forget(self, source: str) -> None:
        with self._lock:
            self._texts.pop(source, None)

    def lookup(self, source: str) -> str | None:
        with self._lock:
            return self._texts.get(source)

    def items(self) -> list[tuple[str, str]]:
        """Every kept edit, oldest first (what the last translation's file keeps across a restart)."""
        with self._lock:
            return list(self._texts.items())

    def clear(self) -> None:
        with self._lock:
            self._texts.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._texts)
