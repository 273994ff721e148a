"""The user's glossary: source term → required target term, and do-not-translate spans, as one value.

Matching a glossary against a source sentence, turning its hits into search constraints (engine.search.types
.Constraint), finding the automatic do-not-translate spans (placeholders, URLs, e-mails, code) and reading/writing
CSV/TSV live in engine.pipeline.glossary_match and engine.glossary_io; this module is only the data that travels in
`TranslationOptions.glossary`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GlossaryEntry:
    """`source` → `target`; `target` None (or equal to `source`) means do not translate: keep `source` verbatim.

    `case_sensitive` False matches "Qiao", "qiao" and "QIAO" alike; `whole_word` keeps "cat" from matching
    "category" (ignored for sources without spaces, such as Chinese)."""

    source: str
    target: str | None = None
    case_sensitive: bool = False
    whole_word: bool = True

    @property
    def keep(self) -> bool:
        """A do-not-translate entry: the source text itself must appear in the output."""
        return self.target is None or self.target == self.source


@dataclass(frozen=True)
class Glossary:
    """Entries applied to every sentence that contains their source term; `protect` also keeps placeholders
    ({name}, %s, %1$d), URLs, e-mail addresses and `code` verbatim without an entry for each."""

    entries: tuple[GlossaryEntry, ...] = ()
    protect: bool = True

    def __bool__(self) -> bool:
        return bool(self.entries) or self.protect
