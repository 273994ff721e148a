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
    """A finished (or cancelled) request. On cancel, `text` holds the part already translated."""

    text: str
    tokens: list[list[int]] = field(default_factory=list)  # generated ids per sentence, eos excluded
    stats: TranslationStats | None = None
    cancelled: bool = False
