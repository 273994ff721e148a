"""What one translation request asks for, as one value that travels whole from the window or CLI to the engine."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace

from engine.errors import InputError


@dataclass(frozen=True)
class TranslationOptions:
    """Per-request choices. The engine validates them (`validate`) once, when a request starts."""

    beams: int | None = None  # None: the model's default (its manifest's num_beams)
    script: str = "hans"  # target variant key in the manifest's `scripts` ("hans" / "hant")
    # Join hard-wrapped lines (a sentence broken over lines, as copied from a PDF or an e-mail) before translating.
    join_wrapped_lines: bool = True
    # Half-width ! ? , : ; ( ) next to CJK characters become full-width (numbers, Latin text and URLs untouched).
    normalize_punctuation: bool = True

    def replace(self, **changes: object) -> TranslationOptions:
        return replace(self, **changes)  # type: ignore[arg-type]

    def validate(self, scripts: Collection[str], max_beams: int) -> TranslationOptions:
        """Check every field once, with one clear InputError for the first bad one; returns self.

        `scripts` are the model's target variants (empty: the model has none, any script is ignored).
        """
        beams = self.beams
        if beams is not None and (isinstance(beams, bool) or not isinstance(beams, int)):
            raise InputError(f"beams must be a whole number between 1 and {max_beams}, not {beams!r}")
        if beams is not None and not 1 <= beams <= max_beams:
            raise InputError(f"beams must be between 1 and {max_beams}, not {beams}")
        if not isinstance(self.script, str):
            raise InputError(f"script must be a name such as 'hans', not {self.script!r}")
        if scripts and self.script not in scripts:
            raise InputError(f"unknown script {self.script!r}; this model offers {', '.join(scripts)}")
        for name in ("join_wrapped_lines", "normalize_punctuation"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be true or false, not {getattr(self, name)!r}")
        return self
