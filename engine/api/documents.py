"""Documents and HTML fragments translated in memory, for `POST /translate_file` and `format=html`.

The same contract engine.documents.job follows, without its files: a format reads the bytes into units, each unit's
text (and, for a unit with inline markup, each of its lettered runs alone, so the markup lands on the right words)
is translated, engine.documents.inline shares the translation back among the runs, and the format renders the
document with only those texts changed. `translate` is any "texts → translations, in order" callable, so the
engine's service and the window's both drive it, a bounded step at a time (other requests run in between).

A unit whose translation came back empty (a small model gives "" for some inputs) is kept as it was, never written
as an empty paragraph, and said: within `noting()`, each such unit adds a `Kept` note the HTTP app reports in its
answer's `warnings` (the same rule the document job follows: engine.documents.job.keep_empty). A sentence of a unit
whose translation alone came back empty is its source text, in place, in the unit's translation, and noted the same
way: the services give `kept_texts` (a `KeptText` names the sentences it holds as they were).
"""

from __future__ import annotations

import codecs
import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

from engine.documents import registry
from engine.documents.inline import distribute, runs_alone
from engine.documents.job import keep_empty
from engine.documents.model import DocumentError, DocumentFormat, Extracted, Unit
from engine.results import Translation

TranslateTexts = Callable[[list[str]], list[str]]
STEP_TEXTS = 64  # texts per call of `translate`: a document never holds the queue for long


@dataclass(frozen=True)
class Kept:
    """A unit, or a sentence of one, kept as it was because the model's translation of it was empty: its text, and
    for `translate_html` the fragment it is in (its index in the `fragments` given; None for a document)."""

    text: str
    fragment: int | None = None


class KeptText(str):
    """A translation in which each sentence the model translated as empty is its source text, in its place: `kept`,
    those sentences (in reading order). A plain `str` to everyone else. As a stream's last delta (`stream_tail`),
    `whole` is the whole text when a sentence was put back before the end of the text already streamed."""

    kept: tuple[str, ...] = ()
    whole: str | None = None


def kept_texts(sources: Sequence[str], translations: Sequence[Translation]) -> list[str]:
    """Each translation's text with nothing of its source lost (engine.documents.job.keep_empty): a sentence with
    words whose translation came back empty is put back as it was, where its translation would be, and the text is a
    `KeptText` naming it. A translation empty as a whole stays as the engine gave it: the caller keeps the whole text
    as it was and says so (the HTTP app, `translate_units`). What both API services (`qiao serve`'s and the
    window's) turn their engine's Translations into."""
    out: list[str] = []
    for source, translation in zip(sources, translations, strict=True):
        text, kept = keep_empty(source, translation)
        if not kept or not text.strip():
            out.append(translation.text)
            continue
        marked = KeptText(text)
        marked.kept = tuple(kept)
        out.append(marked)
    return out


def stream_tail(source: str, translation: Translation) -> KeptText | None:
    """The delta that ends a stream of `translation` (its deltas streamed) with nothing of `source` lost: the
    sentences kept_texts puts back at its end, as one delta; a sentence put back before the end cannot be streamed
    in its place, so the delta is empty and `whole` the whole text. None when nothing is put back (or the whole
    translation is empty: the caller gives the text as it was)."""
    text, kept = keep_empty(source, translation)
    if not kept or not text.strip():
        return None
    if text.startswith(translation.text):
        tail = KeptText(text[len(translation.text) :])
    else:
        tail = KeptText("")
        tail.whole = text
    tail.kept = tuple(kept)
    return tail


def kept_sentences(text: str) -> tuple[str, ...]:
    """The sentences `text` (a service's answer) holds as they were (`KeptText.kept`; none for any other text)."""
    return text.kept if isinstance(text, KeptText) else ()


_notes: ContextVar[list[Kept] | None] = ContextVar("qiao_api_kept_units", default=None)
_fragment: ContextVar[int | None] = ContextVar("qiao_api_fragment", default=None)


@contextlib.contextmanager
def noting() -> Iterator[list[Kept]]:
    """Within it, this thread's `translate_units` calls add a Kept note to the list it gives for each unit kept."""
    notes: list[Kept] = []
    token = _notes.set(notes)
    try:
        yield notes
    finally:
        _notes.reset(token)


def read(fmt: DocumentFormat, data: bytes) -> Extracted:
    """`data` read as `fmt`; DocumentError for a document the format cannot read."""
    try:
        return fmt.read(data)
    except DocumentError:
        raise
    except Exception as exc:  # a format's unexpected error: said, not a traceback
        raise DocumentError(f"cannot read this {fmt.label} ({type(exc).__name__})") from exc


def warnings(extracted: Extracted) -> list[str]:
    """What the reader kept verbatim without translating (a stray line between subtitle cues), for the person;
    the same sentences the document job reports (DocumentResult.warnings)."""
    return [str(warning) for warning in getattr(extracted, "warnings", ())]


def render(extracted: Extracted, units: Sequence[Unit], translate: TranslateTexts, target: str) -> bytes:
    """The document with every translatable unit of `units` (its `extracted.units`) translated."""
    translations = translate_units(units, translate)
    try:
        return extracted.render(translations, target=target)
    except DocumentError:
        raise
    except Exception as exc:
        raise DocumentError(f"cannot write the translated document ({type(exc).__name__})") from exc


def translate_document(fmt: DocumentFormat, data: bytes, translate: TranslateTexts, target: str) -> bytes:
    """`data` read as `fmt`, translated, rendered; DocumentError for a document the format cannot read or write."""
    extracted = read(fmt, data)
    return render(extracted, list(extracted.units), translate, target)


def current_notes() -> list[Kept]:
    """The list the innermost `noting()` of this thread fills (a list no one reads when there is none)."""
    notes = _notes.get()
    return [] if notes is None else notes


def translate_units(units: Sequence[Unit], translate: TranslateTexts) -> list[list[str] | None]:
    """Run texts for each unit (None for a unit with nothing to translate, or whose translation came back empty:
    see the module docstring), STEP_TEXTS texts per call."""
    plan: list[tuple[int, list[int]]] = []  # (unit index, its runs translated alone)
    texts: list[str] = []
    for index, unit in enumerate(units):
        if not unit.translatable:
            continue
        alone = runs_alone(unit)
        plan.append((index, alone))
        texts.append(unit.source)
        texts.extend(unit.runs[r].text for r in alone)
    answers: list[str] = []
    for start in range(0, len(texts), STEP_TEXTS):
        answers.extend(translate(texts[start : start + STEP_TEXTS]))
    out: list[list[str] | None] = [None] * len(units)
    at = 0
    for index, alone in plan:
        unit = units[index]
        whole, parts = answers[at], answers[at + 1 : at + 1 + len(alone)]
        at += 1 + len(alone)
        if not whole.strip():  # nothing came back for text with words: kept as it was, formatting and all
            notes = _notes.get()
            if notes is not None:
                notes.append(Kept(unit.source.strip(), _fragment.get()))
            continue
        notes = _notes.get()
        if notes is not None:  # sentences put back in place (kept_texts): the answer names them
            notes.extend(Kept(sentence, _fragment.get()) for sentence in kept_sentences(whole))
        hints: list[str | None] = [None] * len(unit.runs)
        for r, text in zip(alone, parts, strict=True):
            hints[r] = text
        out[index] = distribute(unit, whole, hints if alone else None)
    return out


def translate_html(fragments: Sequence[str], translate: TranslateTexts, target: str) -> list[str]:
    """Each HTML fragment (or page) with its visible text translated and every tag, attribute and entity kept,
    read by engine.documents.formats.html (the same reader as `qiao translate-file page.html`)."""
    fmt = registry.get("html")
    out = []
    for number, fragment in enumerate(fragments):
        token = _fragment.set(number)
        try:
            rendered = translate_document(fmt, html_bytes(fragment), translate, target)
        finally:
            _fragment.reset(token)
        out.append(rendered.removeprefix(codecs.BOM_UTF8).decode("utf-8"))
    return out


def read_html(fragment: str) -> Extracted:
    """An HTML fragment (or page) read as the html format reads a file; DocumentError when it cannot be."""
    return read(registry.get("html"), html_bytes(fragment))


def html_bytes(fragment: str) -> bytes:
    """An HTML fragment given as text (a JSON or form field), as bytes the html reader takes for what they are:
    UTF-8, marked by a byte order mark, which outranks whatever charset its <meta> or XML declaration names (the
    client decoded the page already). Read by that declaration, a page saying gbk with Chinese in it was refused
    ("not valid gbk text") and one saying iso-8859-1 had its non-ASCII text translated as mojibake."""
    return codecs.BOM_UTF8 + fragment.encode("utf-8")


def format_for(filename: str) -> DocumentFormat:
    """The document format of an uploaded file's name (DocumentError names the ones Qiao reads)."""
    from pathlib import PurePath

    return registry.for_path(PurePath(filename))  # type: ignore[arg-type]
