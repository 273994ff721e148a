"""What one translation request asks for, as one value that travels whole from the window or CLI to the engine."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field, replace

from engine.config import MAX_BEAMS
from engine.errors import InputError
from engine.glossary import Glossary
from engine.memory import TranslationMemory


@dataclass(frozen=True)
class TranslationOptions:
    """Per-request choices. The engine validates them (`validate`) once, when a request starts."""

    beams: int | None = None  # None: the model's default (its manifest's num_beams)
    # Target variant key of the model's language pair ("hans" / "hant" for en→zh); None: the pair's default.
    variant: str | None = None
    # Join hard-wrapped lines (a sentence broken over lines, as copied from a PDF or an e-mail) before translating.
    join_wrapped_lines: bool = True
    # Half-width ! ? , : ; ( ) next to CJK characters become full-width (numbers, Latin text and URLs untouched).
    normalize_punctuation: bool = True
    # Whole-sentence alternatives per sentence from the beam (SentenceResult.alternatives): 0 none, at most
    # MAX_BEAMS - 1. The beam is raised to at least alternatives + 1 (so the best translation may change with it,
    # as with more beams), and fewer come back when the beam's hypotheses read alike (texts are distinct).
    alternatives: int = 0
    # Terms the output must contain (constrained beam search); None: no glossary for this request.
    glossary: Glossary | None = None
    # The user's earlier fixes, used instead of decoding (SentenceResult.origin "memory"); None: none.
    memory: TranslationMemory | None = field(default=None, compare=False)
    # Guards against known model failures (engine.pipeline.guards): flags, subtitle artefacts kept out, loops cut in
    # greedy and beam search; off: the model's own output.
    guards: bool = True

    def replace(self, **changes: object) -> TranslationOptions:
        return replace(self, **changes)  # type: ignore[arg-type]

    def validate(self, variants: Collection[str], max_beams: int = MAX_BEAMS) -> TranslationOptions:
        """Check every field once, with one clear InputError for the first bad one; returns self.

        `variants` are the model's target variant keys (empty: the pair has none, and any variant is ignored, so
        one saved choice works for both directions).
        """
        beams = self.beams
        if beams is not None and (isinstance(beams, bool) or not isinstance(beams, int)):
            raise InputError(f"beams must be a whole number between 1 and {max_beams}, not {beams!r}")
        if beams is not None and not 1 <= beams <= max_beams:
            raise InputError(f"beams must be between 1 and {max_beams}, not {beams}")
        if self.variant is not None and not isinstance(self.variant, str):
            raise InputError(f"variant must be a name such as 'hans', not {self.variant!r}")
        if variants and self.variant is not None and self.variant not in variants:
            raise InputError(f"unknown variant {self.variant!r}; this model offers {', '.join(variants)}")
        for name in ("join_wrapped_lines", "normalize_punctuation", "guards"):
            if not isinstance(getattr(self, name), bool):
                raise InputError(f"{name} must be true or false, not {getattr(self, name)!r}")
        k = self.alternatives
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k <= max_beams - 1:
            raise InputError(f"alternatives must be a whole number between 0 and {max_beams - 1}, not {k!r}")
        if self.glossary is not None and not isinstance(self.glossary, Glossary):
            raise InputError(f"glossary must be a Glossary or None, not {type(self.glossary).__name__}")
        if self.memory is not None and not callable(getattr(self.memory, "lookup", None)):
            raise InputError(f"memory must have a lookup(source) method, not {type(self.memory).__name__}")
        return self
