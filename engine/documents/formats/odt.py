"""OpenDocument text (.odt): the body (content.xml) and the page headers and footers (styles.xml).

A unit is one paragraph or heading (text:p, text:h). Its runs are the stretches of character data between its
inline elements (text:span, text:a, fields, …), so a word in a span keeps its span; spaces (text:s), tabs and line
breaks are fixed runs, as are a note's citation and a heading's cached number, and code: the text of a paragraph
or span in a code style ("Preformatted Text", "Source Text", or a monospace font: engine.documents.formats.
_odf_styles). A note's body paragraphs are units of their own, as are those of text boxes, and so is an image's (any
drawing's) alt text: its svg:title and svg:desc, as LibreOffice writes them. Comments (office:annotation) and the
deleted text of tracked changes are left alone. The mimetype member stays first and stored, as the specification
requires.
"""

from __future__ import annotations

import re

from engine.documents.formats import _odf_styles, _package, _xml
from engine.documents.formats._zip import ZipArchive
from engine.documents.model import DocumentError, DocumentFormat, Extracted, Run, Unit

TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
STYLE = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
DRAW = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
SVG = "urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"
LOEXT = "urn:org:documentfoundation:names:experimental:office:xmlns:loext:1.0"

_S = _xml.SEP
_PARAGRAPHS = {f"{TEXT}{_S}p", f"{TEXT}{_S}h"}
_MARKERS = {f"{TEXT}{_S}tab": "\t", f"{TEXT}{_S}line-break": "\n"}
_SPACE = f"{TEXT}{_S}s"
_SPAN = f"{TEXT}{_S}span"
_STYLE_NAME = f"{TEXT}{_S}style-name"
_FIXED = {f"{TEXT}{_S}note-citation", f"{TEXT}{_S}number"}
_IGNORED = {f"{OFFICE}{_S}annotation", f"{TEXT}{_S}tracked-changes", f"{OFFICE}{_S}forms"}
# Inside a paragraph, these hold no text of it (their own paragraphs, if any, are units of their own).
_BLOCKING_NAMESPACES = (f"{DRAW}{_S}", f"{SVG}{_S}")
_NOTE_BODY = f"{TEXT}{_S}note-body"
_ALT_TEXTS = {f"{SVG}{_S}title", f"{SVG}{_S}desc"}  # in a draw: element: its alt text, a unit of its own
_DRAWING = f"{DRAW}{_S}"
_HEADERS_FOOTERS = {
    f"{ns}{_S}{side}{variant}"
    for ns in (STYLE, LOEXT)
    for side in ("header", "footer")
    for variant in ("", "-left", "-first")
}
_WHITESPACE = re.compile(r"[ \t\r\n]+")
_MIMETYPES = ("application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.text-template")


class _Collector(_xml.Handler):
    """An _xml.Handler for content.xml and styles.xml (see the module docstring)."""

    def __init__(self, part: str, *, headers_only: bool, code_styles: frozenset[str] = frozenset()) -> None:
        self._part = part
        self._code_styles = code_styles
        self._code_depths: list[int] = []  # depths of the open code spans
        self._code_units: set[int] = set()  # paragraphs in a code style
        self._headers_only = headers_only
        self._in_headers = 0
        self._depth = 0
        self._ignoring = 0
        self._contexts: list[tuple[int, int]] = []  # (depth, unit index or -1 for a blocking element)
        self._names: list[str] = []  # the open elements
        self._alt_units: set[int] = set()  # units that are alt texts: never code, whatever span holds the image
        self._stretch: tuple[int, list[str]] | None = None  # (start offset, texts) of the character data being read
        self._fixed: tuple[int, list[str]] | None = None  # (depth, texts) of a citation or number
        self.units: list[tuple[list[Run], list[_package.Slot | None]] | None] = []

    def _paragraph(self) -> tuple[list[Run], list[_package.Slot | None]] | None:
        if not self._contexts or self._contexts[-1][1] < 0:
            return None
        return self.units[self._contexts[-1][1]]

    def _close(self) -> None:
        """End the stretch of character data being read here: it becomes a run of the open paragraph."""
        stretch, self._stretch = self._stretch, None
        if stretch is None:
            return
        entry = self._paragraph()
        if entry is not None:
            text = _WHITESPACE.sub(" ", "".join(stretch[1]))
            index = self._contexts[-1][1]
            if (self._code_depths and index not in self._alt_units) or index in self._code_units:
                entry[0].append(Run(text, fixed=True))  # code: kept as it is
                entry[1].append(None)
                return
            entry[0].append(Run(text))
            entry[1].append(_package.Slot(self._part, stretch[0], self.at()))

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if self._stretch is not None:
            self._close()
        self._depth += 1
        parent = self._names[-1] if self._names else ""
        self._names.append(name)
        if self._ignoring:
            self._ignoring += 1
            return
        if name in _IGNORED:
            self._ignoring = 1
            return
        if name in _HEADERS_FOOTERS:
            self._in_headers += 1
        if self._fixed is not None:
            return
        if name in _ALT_TEXTS and parent.startswith(_DRAWING) and (self._in_headers or not self._headers_only):
            self._alt_units.add(len(self.units))
            self._contexts.append((self._depth, len(self.units)))
            self.units.append(([], []))
            return
        if name in _PARAGRAPHS and (self._in_headers or not self._headers_only):
            if attrs.get(_STYLE_NAME, "") in self._code_styles:
                self._code_units.add(len(self.units))
            self._contexts.append((self._depth, len(self.units)))
            self.units.append(([], []))
            return
        entry = self._paragraph()
        if entry is None:
            return
        if name == _SPAN and attrs.get(_STYLE_NAME, "") in self._code_styles:
            self._code_depths.append(self._depth)
        if name in _FIXED:
            self._fixed = (self._depth, [])
        elif name == _SPACE:
            count = attrs.get(f"{TEXT}{_S}c", "1")
            entry[0].append(Run(" " * (int(count) if count.isdigit() and 0 < int(count) < 1000 else 1), fixed=True))
            entry[1].append(None)
        elif name in _MARKERS:
            entry[0].append(Run(_MARKERS[name], fixed=True))
            entry[1].append(None)
        elif name == _NOTE_BODY or name.startswith(_BLOCKING_NAMESPACES):
            self._contexts.append((self._depth, -1))

    def end(self, name: str) -> None:
        if self._stretch is not None:
            self._close()
        depth = self._depth
        self._depth -= 1
        if self._names:
            self._names.pop()
        if self._code_depths and self._code_depths[-1] == depth:
            self._code_depths.pop()
        if self._ignoring:
            self._ignoring -= 1
            return
        if name in _HEADERS_FOOTERS:
            self._in_headers -= 1
        if self._fixed is not None:
            if self._fixed[0] == depth:
                text = "".join(self._fixed[1])
                self._fixed = None
                entry = self._paragraph()
                if text and entry is not None:
                    entry[0].append(Run(text, fixed=True))
                    entry[1].append(None)
            return
        if self._contexts and self._contexts[-1][0] == depth:
            _depth, index = self._contexts.pop()
            if index >= 0:
                entry = self.units[index]
                if entry is not None and not any(slot is not None for slot in entry[1]):
                    self.units[index] = None

    def text(self, text: str) -> None:
        if self._ignoring:
            return
        if self._fixed is not None:
            self._fixed[1].append(text)
        elif self._paragraph() is not None:
            if self._stretch is None:
                self._stretch = (self.at(), [])
            self._stretch[1].append(text)

    def mark(self) -> None:
        self._close()


def _check(archive: ZipArchive) -> None:
    if "mimetype" in archive:
        mimetype = archive.read("mimetype").decode("ascii", "replace").strip()
        if mimetype not in _MIMETYPES:
            raise DocumentError(f"this is not an OpenDocument text (it says it is {mimetype!r})")
    if "META-INF/manifest.xml" in archive and b"encryption-data" in archive.read("META-INF/manifest.xml"):
        raise DocumentError("this OpenDocument text is password-protected; remove the password and try again")
    if "content.xml" not in archive:
        raise DocumentError("this is not an OpenDocument text (content.xml is missing)")


def read(data: bytes) -> Extracted:
    """The paragraphs and headings of an .odt; DocumentError for anything that is not a readable one."""
    archive = ZipArchive(data, "OpenDocument text")
    _check(archive)
    units: list[Unit] = []
    slots: list[tuple[_package.Slot | None, ...]] = []
    encodings: dict[str, str] = {}
    code = _odf_styles.code_styles(archive)
    for part in ("content.xml", "styles.xml"):
        if part not in archive:
            continue
        collector = _Collector(part, headers_only=part == "styles.xml", code_styles=code)
        encodings[part] = _xml.scan(archive.read(part), collector, part)
        for entry in collector.units:
            if entry is not None:
                units.append(Unit(tuple(entry[0])))
                slots.append(tuple(entry[1]))
    return _package.PackageDocument(archive, units, slots, encodings, stored=("mimetype",), first="mimetype")


FORMAT = DocumentFormat(name="odt", label="OpenDocument text", extensions=(".odt",), read=read)
