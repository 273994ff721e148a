"""Translation memory: sentences the user fixed before, reused instead of decoding them again.

The engine only asks; the window backs it with the session's edits and the history database (engine.history).
`lookup` is called on the engine's thread, once per sentence, before decoding.
"""

from __future__ import annotations

from typing import Protocol


class TranslationMemory(Protocol):
    """The user's own translation of a source sentence (exactly as the model would read it), or None."""

    def lookup(self, source: str) -> str | None: ...
