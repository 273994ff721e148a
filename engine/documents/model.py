"""What every document format gives the job runner, and what it gets back (the contract between them).

A format reads a file's bytes into translatable `Unit`s (a paragraph, a heading, a table cell, a subtitle sentence,
an `alt` text) and keeps, privately, where each one sits in the original bytes. After translation it renders the
same document with only those texts replaced: everything else (markup, styles, timings, zip members it did not
touch) stays byte for byte as it was. Formats know nothing of the engine; the runner (engine.documents.job) knows
nothing of any format.

A unit is a sequence of `Run`s: the pieces of one paragraph that carry different inline formatting (a bold word in a
Word run, `<a>…</a>` inside an HTML sentence, a cue of a subtitle sentence). The whole unit is translated as one
text, so a sentence split over runs is translated as one sentence; engine.documents.inline then shares the
translation back among the runs, and the format writes each run's share where that run was.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from engine.errors import QiaoError
from engine.text.verbatim import nothing_to_translate

# How a unit's translation is shared back among its runs (engine.documents.inline.distribute):
#   "align": by meaning (each run's own translation located in the whole one): inline markup stays on the right
#            words (HTML, Markdown emphasis, Word/ODF/PowerPoint runs);
#   "length": in proportion to the runs' source lengths, cut at natural breaks (a sentence spread over subtitle
#            cues: each cue keeps its timing and gets about its share of the text).
Split = Literal["align", "length"]


class DocumentError(QiaoError):
    """A document Qiao cannot read or write (malformed, truncated, encrypted, too large, unsupported), worded for
    a person: what is wrong and, where there is one, what to do. Raised before any output file is written."""


@dataclass(frozen=True)
class Run:
    """One piece of a unit's text. `fixed` runs (inline code, a URL, a placeholder, an embedded object's marker)
    are never translated: they come back verbatim, in their place among the other runs.

    `markup` runs are fixed runs that are syntax, not text (Markdown's `**` and `[`…`](url)`, a subtitle's `<i>`):
    like an HTML tag they only mark where the runs around them begin and end, so the translator never sees them
    and the same sentence reads the same to the model in every format."""

    text: str
    fixed: bool = False
    markup: bool = False

    def __post_init__(self) -> None:
        if self.markup and not self.fixed:
            raise ValueError("a markup run is a fixed run: Run(text, fixed=True, markup=True)")


def markup(text: str) -> Run:
    """A markup run (see Run)."""
    return Run(text, fixed=True, markup=True)


@dataclass(frozen=True)
class Unit:
    """One translatable piece of a document, in reading order."""

    runs: tuple[Run, ...]
    split: Split = "align"

    @property
    def source(self) -> str:
        """The text the translator sees: every run's text, in order (fixed runs included, as context; markup left
        out, as an HTML tag is)."""
        return "".join(run.text for run in self.runs if not run.markup)

    @property
    def written(self) -> str:
        """The unit as the document writes it: every run's text, markup included."""
        return "".join(run.text for run in self.runs)

    @property
    def translatable(self) -> bool:
        """False for a unit with nothing to translate: blank, only fixed runs, or only a URL, an e-mail address, a
        number or code (engine.text.verbatim, the rule the text pipeline also uses). Such a unit is never sent to the
        model and comes back byte for byte. The runs are read together (a URL is often split over Word runs); a
        fixed run counts as a gap between them, markup as nothing."""
        return not nothing_to_translate(
            "".join("" if run.markup else " " if run.fixed else run.text for run in self.runs)
        )


class Extracted(Protocol):
    """A read document: its units, and how to write it back with new run texts. A format that kept some text
    verbatim because it could not parse it (a stray line between subtitle cues) may also have `warnings`, a
    sequence of sentences the job passes on to the person (DocumentResult.warnings, the CLI's stderr)."""

    @property
    def units(self) -> Sequence[Unit]: ...

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes:
        """The whole document with unit i's runs replaced by `translations[i]` (one string per run, in order), or
        left exactly as it was where `translations[i]` is None. `target` is the target language's code ("zh",
        "en"): formats that declare a language (HTML `lang`, …) may update it. Raises DocumentError, never writes."""
        ...


@dataclass(frozen=True)
class DocumentFormat:
    """One supported format. `read` raises DocumentError for anything it cannot parse (never a raw traceback)."""

    name: str  # "txt", "markdown", "html", "srt", "vtt", "docx", "odt", "pptx", "epub"
    label: str  # for people: "Word document"
    extensions: tuple[str, ...]  # lower case, with the dot: (".docx",)
    read: Callable[[bytes], Extracted]
