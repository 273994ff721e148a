"""What a translation request returns: plain dataclasses, so the CLI prints them and the GUI passes them in signals."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class TranslationStats:
    """Per-request figures shown in the status bar and printed by `qiao translate --json`."""

    total_ms: float
    first_token_ms: float | None  # None when nothing was decoded (empty input)
    source_tokens: int
    target_tokens: int
    tokens_per_s: float
    precision: str  # "int8" | "fp32"
    beams: int
    sentences: int
    # Sentences whose result came from the translator's cache (unchanged since an earlier request), not decoded.
    sentences_reused: int = 0

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class StreamEvent:
    """One step of a streamed translation.

    Concatenating every `delta` of a request, in order, gives exactly `Translation.text`.
    """

    delta: str
    sentences_done: int
    sentences_total: int


@dataclass(frozen=True)
class Translation:
    """A finished (or cancelled) request. On cancel, `text` holds the part already translated.

    `error` is set (and `text` empty, `stats` None) only by `Translator.translate_batch`, for a text it refuses on
    its own (too long, not a string): the English reason, so a bulk job reports that text and goes on.
    """

    text: str
    tokens: list[list[int]] = field(default_factory=list)  # generated ids per sentence, eos excluded
    stats: TranslationStats | None = None
    cancelled: bool = False
    error: str | None = None
