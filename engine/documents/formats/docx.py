"""Word documents (.docx): the body, headers and footers, footnotes and endnotes; comments are left alone.

A unit is one paragraph (w:p), wherever it is: the body, a table cell, a text box (its paragraphs are units of
their own), a header. Its runs are the texts of its w:r runs' w:t elements, hyperlinks' and fields' result runs
included; a tab or line break inside a run is a fixed run. Neighbouring w:r runs with the same formatting (pandoc
writes every space as a run of its own) are one run, whose text goes to the first one's w:t, so they do not split
the sentence's inline model: a link or a bold word is one run among few, not one among dozens. Code is kept as it
is: a paragraph in a code style ("Source Code", "Preformatted Text"…) and a run in a code character style
("Verbatim Char", "Source Text"…) or a monospace font are fixed (engine.documents.formats._code). An image's
description and title (wp:docPr descr/title, its alt text) are units of their own.

Field codes (w:instrText), deleted text of tracked changes (w:del, w:moveFrom) and everything else stay exactly as
they were, as does each run's formatting (w:rPr): only w:t contents (and descr/title values) change, with
xml:space="preserve" added where a new text starts or ends with a space. Languages marked in the document (w:lang)
are kept: they record the source's proofing settings, and Word detects the new text's language itself.
"""

from __future__ import annotations

import dataclasses
import re

from engine.documents.formats import _package, _word_styles, _xml
from engine.documents.formats._code import code_style, monospace
from engine.documents.formats._zip import ZipArchive
from engine.documents.model import DocumentError, DocumentFormat, Extracted, Run

W_NAMESPACES = (
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "http://purl.oclc.org/ooxml/wordprocessingml/main",  # Strict Open XML
)
_LOCALS = ("p", "r", "t", "tab", "ptab", "br", "cr", "del", "moveFrom", "pPr", "pStyle", "rPr", "rStyle", "rFonts")
_W = {local: set(_xml.names(W_NAMESPACES, local)) for local in (*_LOCALS, "proofErr")}
_VAL = tuple(f"{ns}{_xml.SEP}val" for ns in W_NAMESPACES)
_FONTS = tuple(f"{ns}{_xml.SEP}{key}" for ns in W_NAMESPACES for key in ("ascii", "hAnsi"))
_DOC_PR = set(
    _xml.names(
        (
            "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing",
            "http://purl.oclc.org/ooxml/drawingml/wordprocessingDrawing",
        ),
        "docPr",
    )
)
_ALT_ATTRIBUTE = re.compile(rb"""\s(descr|title)\s*=\s*("[^"]*"|'[^']*')""")

# Content type suffix -> reading order of the parts that hold the document's text.
_PART_KINDS = (
    (
        (
            "document.main+xml",
            "template.main+xml",
            "document.macroenabled.main+xml",
            "template.macroenabledtemplate.main+xml",
        ),
        0,
    ),
    (("wordprocessingml.header+xml",), 1),
    (("wordprocessingml.footer+xml",), 2),
    (("wordprocessingml.footnotes+xml",), 3),
    (("wordprocessingml.endnotes+xml",), 4),
)


def _parts(archive: ZipArchive) -> list[str]:
    """The parts to translate, in reading order: the main document, headers, footers, footnotes, endnotes."""
    ranked = []
    for name, content_type in _package.content_types(archive).items():
        lowered = content_type.lower()
        if "wordprocessingml" not in lowered and "ms-word" not in lowered:
            continue
        for suffixes, rank in _PART_KINDS:
            if lowered.endswith(suffixes):
                ranked.append((rank, _package.natural_key(name), name))
    if not any(rank == 0 for rank, _key, _name in ranked):
        raise DocumentError("this is not a Word document (it has no main document part)")
    return [name for _rank, _key, name in sorted(ranked)]


@dataclasses.dataclass
class _RunState:
    """What is known of the w:r being read."""

    start_event: int  # the collector's event count at its start
    props: bytes = b""  # its w:rPr's content: equal bytes, equal formatting
    props_at: int = -1
    code: bool = False
    added: int = 0  # runs of the unit it has given
    text_last: bool = False  # the last of them is a translatable text


class _WordCollector(_package.ParagraphCollector):
    """The paragraph collector, knowing Word's runs: merges identically formatted neighbours, keeps code fixed and
    adds images' alt texts (see the module docstring)."""

    def __init__(self, data: bytes, part: str, *, code_ids: frozenset[str], **options: object) -> None:
        super().__init__(data, part, **options)  # type: ignore[arg-type]
        self._code_ids = code_ids
        self._events = 0  # start and end events, w:proofErr (a spelling mark between runs) not counted
        self._paragraph_code: list[bool] = []
        self._runs: list[_RunState] = []
        self._last: tuple[int, bytes, int] | None = None  # (event count, props, unit) after a w:r ending in text

    def _code(self, attrs: dict[str, str]) -> bool:
        style = next((attrs[key] for key in _VAL if key in attrs), "")
        return bool(style) and (style in self._code_ids or code_style(style))

    def start(self, name: str, attrs: dict[str, str]) -> None:
        stack = self._stack
        parent = stack[-1] if stack else ""
        if name not in _W["proofErr"]:
            self._events += 1
        if name in _W["p"]:
            self._paragraph_code.append(False)
        elif name in _W["pStyle"] and parent in _W["pPr"] and self._paragraph_code:
            self._paragraph_code[-1] = self._code(attrs)
        elif name in _W["r"]:
            self._runs.append(_RunState(self._events))
        elif self._runs and name in _W["rPr"] and parent in _W["r"]:
            self._runs[-1].props_at = _xml.start_tag_end(self._data, self.at())[0]
        elif self._runs and parent in _W["rPr"] and len(stack) > 1 and stack[-2] in _W["r"]:
            if name in _W["rStyle"]:
                self._runs[-1].code |= self._code(attrs)
            elif name in _W["rFonts"]:
                self._runs[-1].code |= any(monospace(attrs.get(key, "")) for key in _FONTS)
        elif name in _DOC_PR and not self._skipping:
            self._alt_texts(attrs)
        super().start(name, attrs)

    def end(self, name: str) -> None:
        stack = self._stack
        if name not in _W["proofErr"]:
            self._events += 1
        if name in _W["p"] and self._paragraph_code:
            self._paragraph_code.pop()
        elif name in _W["r"] and self._runs:
            state = self._runs.pop()
            ended_in_text = state.added and state.text_last and self._open
            self._last = (self._events, state.props, self._open[-1]) if ended_in_text else None
        elif name in _W["rPr"] and self._runs and len(stack) > 1 and stack[-2] in _W["r"]:
            state = self._runs[-1]
            if state.props_at >= 0:
                state.props = bytes(self._data[state.props_at : max(state.props_at, self.at())])
        super().end(name)

    def _add(self, run: Run, slot: _package.Slot | None) -> None:
        state = self._runs[-1] if self._runs else None
        code = (self._paragraph_code and self._paragraph_code[-1]) or (state is not None and state.code)
        if slot is not None and code:
            run, slot = Run(run.text, fixed=True), None  # code: kept as it is
        entry = self.units[self._open[-1]]
        last = self._last
        if (
            entry is not None
            and slot is not None
            and state is not None
            and state.added == 0
            and last is not None
            and last[0] + 1 == state.start_event
            and last[1] == state.props
            and last[2] == self._open[-1]
            and entry[0]
            and not entry[0][-1].fixed
            and entry[1][-1] is not None
        ):
            # The previous w:r, just before this one and formatted the same: one run, written to its w:t.
            previous = entry[1][-1]
            entry[0][-1] = Run(entry[0][-1].text + run.text)
            entry[1][-1] = dataclasses.replace(previous, also=(*previous.also, (slot.start, slot.end)))
        else:
            super()._add(run, slot)
        if state is not None:
            state.added += 1
            state.text_last = not run.fixed

    def _alt_texts(self, attrs: dict[str, str]) -> None:
        """An image's description and title (its alt text), each a unit of its own."""
        at = self.at()
        end, _empty = _xml.start_tag_end(self._data, at)
        for match in _ALT_ATTRIBUTE.finditer(self._data, at, end):
            value = attrs.get(match.group(1).decode(), "")
            if value.strip():
                start, stop = match.span(2)
                self.units.append(([Run(value)], [_package.Slot(self._part, start + 1, stop - 1, attribute=True)]))


def _styles_part(archive: ZipArchive) -> str | None:
    for name, content_type in _package.content_types(archive).items():
        if content_type.lower().endswith("wordprocessingml.styles+xml"):
            return name
    return None


def read(data: bytes) -> Extracted:
    """The paragraphs of a .docx; DocumentError for anything that is not a readable Word document."""
    archive = ZipArchive(data, "Word document")
    parts = _parts(archive)
    units, slots, encodings = _package.collect(
        archive,
        parts,
        collector=_WordCollector,
        code_ids=_word_styles.code_styles(archive, _styles_part(archive), W_NAMESPACES),
        paragraph=_W["p"],
        text={name: _W["r"] for name in _W["t"]},
        markers={
            **{name: (_W["r"], "\t") for name in _W["tab"] | _W["ptab"]},
            **{name: (_W["r"], "\n") for name in _W["br"] | _W["cr"]},
        },
        skip=_W["del"] | _W["moveFrom"],
        preserve=True,
    )
    return _package.PackageDocument(archive, units, slots, encodings)


FORMAT = DocumentFormat(name="docx", label="Word document", extensions=(".docx",), read=read)
