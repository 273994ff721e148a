"""The window's translation memory: the session's own edits first, then the history database's fixes.

Each source of fixes (gui edit tracking, engine.history's store) adds itself here; the request controller passes
the chain as `TranslationOptions.memory`, so the engine asks every source in order, on its own thread.

A source may also say what its answer was made under (`made_with(source)`: the pair and the target variant), which
`kept` passes on so the window can tell a kept sentence that no longer matches the settings; and one may have
`released` a sentence (the user asked for a fresh translation of it), which then no source answers.
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
        found = self.kept(source)
        return found[0] if found is not None else None

    def kept(self, source: str) -> tuple[str, tuple[str | None, str | None] | None] | None:
        """The first source's answer for `source` and what it was made under ((pair, variant), or None when that
        source does not say); None when no source answers or one released it."""
        with self._lock:
            sources = list(self._sources)
        for memory in sources:
            released = getattr(memory, "released", None)
            if released is not None and released(source):
                return None
            found = memory.lookup(source)
            if found is not None:
                made_with = getattr(memory, "made_with", None)
                return found, made_with(source) if made_with is not None else None
        return None
