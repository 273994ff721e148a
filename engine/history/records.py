"""What the history keeps of a finished translation: plain values the store writes and reads back."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

# Marks a re-translation may add or drop at the very end without being another text ("Hello" / "Hello." / "Hello!")
_TRAILING = ".,;:!?…。，；：！？、 \t\r\n\u3000"


def source_key(pair: str, source: str) -> str:
    """The key under which re-translations of one text merge into one history entry: the pair, and the source with
    its whitespace runs made one space and its trailing punctuation dropped (what a re-paste or a settings change
    varies), hashed so the index stays small whatever the text's length."""
    text = " ".join(source.split()).rstrip(_TRAILING)
    return hashlib.blake2b(f"{pair}\n{text}".encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass(frozen=True)
class SentenceRecord:
    """One sentence of a kept translation: the source (as the model read it), the model's output, the user's
    edit (None: untouched) and the alternative they chose (None: none), the text shown being `shown`."""

    source: str
    output: str
    edited: str | None = None
    chosen: str | None = None

    @property
    def shown(self) -> str:
        return self.edited if self.edited is not None else self.chosen if self.chosen is not None else self.output


@dataclass(frozen=True)
class HistoryEntry:
    """One finished translation. `id` is 0 until stored; `created` is ISO 8601 UTC ("2026-12-01T17:40:00Z")."""

    source: str  # the whole request text
    output: str  # the whole translation as shown (edits and choices included)
    pair: str  # "en-zh"
    model: str  # the bundle's model id
    precision: str  # "int8" | "fp32"
    variant: str | None = None
    beams: int | None = None
    sentences: tuple[SentenceRecord, ...] = field(default=())
    created: str = ""
    id: int = 0
