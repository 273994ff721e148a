"""The session's own fixes: each sentence the user edited (or whose alternative they chose), by its English.

First in the window's translation memory (gui.records.memory_chain), so re-translating the source gives back the user's
version of every sentence whose English did not change. The engine asks `lookup` on its own thread while the
window adds edits on the UI thread: a lock keeps both sides consistent.

Each fix remembers what it was made under (`KeptContext`: the pair and the target variant), so a later translation
that brings it back under other settings can say so (gui.review.review_kept) instead of silently mixing scripts. A fix
the
user asked to have translated again is `release`d: the chain then asks no memory for it (not even the history's)
until the user makes it theirs again.
"""

from __future__ import annotations

import threading
from typing import NamedTuple


class KeptContext(NamedTuple):
    """What a kept sentence was made under: the language pair's key ("en-zh") and the target variant ("hans")."""

    pair: str | None
    variant: str | None


class EditMemory:
    """source sentence (exactly as the model read it) → the user's text; a engine.memory.TranslationMemory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._texts: dict[str, str] = {}
        self._contexts: dict[str, KeptContext | None] = {}
        self._released: set[str] = set()

    def remember(self, source: str, text: str, context: KeptContext | None = None) -> None:
        """`context`: what the text was made under (None: not known, e.g. restored from an older file)."""
        if not source.strip():
            return
        with self._lock:
            self._texts[source] = text
            self._contexts[source] = context
            self._released.discard(source)

    def forget(self, source: str) -> None:
        with self._lock:
            self._texts.pop(source, None)
            self._contexts.pop(source, None)

    def release(self, source: str) -> None:
        """The user asked for a fresh translation of `source`: forget their text, and let no later memory answer."""
        with self._lock:
            self._texts.pop(source, None)
            self._contexts.pop(source, None)
            self._released.add(source)

    def released(self, source: str) -> bool:
        with self._lock:
            return source in self._released

    def lookup(self, source: str) -> str | None:
        with self._lock:
            return self._texts.get(source)

    def made_with(self, source: str) -> KeptContext | None:
        """What the kept text of `source` was made under; None when unknown or nothing is kept."""
        with self._lock:
            return self._contexts.get(source)

    def items(self) -> list[tuple[str, str]]:
        """Every kept edit, oldest first (what the last translation's file keeps across a restart)."""
        with self._lock:
            return list(self._texts.items())

    def clear(self) -> None:
        with self._lock:
            self._texts.clear()
            self._contexts.clear()
            self._released.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._texts)
