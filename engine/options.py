"""What one translation request asks for, as one value that travels whole from the window or CLI to the engine."""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class TranslationOptions:
    """Per-request choices. The engine validates them (beams range, known script) when a request starts."""

    beams: int | None = None  # None: the model's default (its manifest's num_beams)
    script: str = "hans"  # target variant key in the manifest's `scripts` ("hans" / "hant")
    # Join hard-wrapped lines (a sentence broken over lines, as copied from a PDF or an e-mail) before translating.
    join_wrapped_lines: bool = True
    # Half-width ! ? , : ; ( ) between CJK characters become full-width (numbers, Latin text and URLs untouched).
    normalize_punctuation: bool = True

    def replace(self, **changes: object) -> TranslationOptions:
        return replace(self, **changes)  # type: ignore[arg-type]
