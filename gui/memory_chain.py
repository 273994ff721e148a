"""The window's translation memory: the session's own edits first, then the history database's fixes.

Each source of fixes (gui edit tracking, engine.history's store) adds itself here; the request controller passes
the chain as `TranslationOptions.memory`, so the engine asks every source in order, on its own thread.
"""

from __future__ import annotations

import threading

from engine.memory import TranslationMemory


class MemoryChain:
    """Ordered translation memories; `lookup` gives the first one's answer. Safe to call from the worker thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sources: list[TranslationMemory] = []

    def add(self, memory: TranslationMemory, *, first: bool = False) -> None:
        with self._lock:
            if first:
                self._sources.insert(0, memory)
            else:
                self._sources.append(memory)

    def remove(self, memory: TranslationMemory) -> None:
        with self._lock:
            self._sources = [m for m in self._sources if m is not memory]

    def __len__(self) -> int:
        return len(self._sources)

    def lookup(self, source: str) -> str | None:
        with self._lock:
            sources = list(self._sources)
        for memory in sources:
            found = memory.lookup(source)
            if found is not None:
                return found
        return None
