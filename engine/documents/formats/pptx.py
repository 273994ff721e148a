"""PowerPoint presentations (.pptx): the slides and their speaker notes; layouts and masters are left alone.

A unit is one DrawingML paragraph (a:p) in any shape, grouped shape or table cell; its runs are the a:t texts of its
a:r runs. A line break (a:br) and a field (a:fld: the slide number, a date) are fixed runs. Code is kept as it is:
a run in a monospace font (pandoc writes code as Courier runs, LibreOffice as Courier New) is a fixed run, so a
paragraph of code is not translated at all; the font is the run's own a:latin, else its paragraph's default
(a:pPr/a:defRPr), else its text body's list style for the paragraph's level (a code shape's a:lstStyle). Only a:t
contents change (DrawingML keeps spaces as they are); run properties (a:rPr) and everything else stay byte for byte.
"""

from __future__ import annotations

from engine.documents.formats import _package, _xml
from engine.documents.formats._code import monospace
from engine.documents.formats._zip import ZipArchive
from engine.documents.model import DocumentError, DocumentFormat, Extracted, Run

A_NAMESPACES = (
    "http://schemas.openxmlformats.org/drawingml/2006/main",
    "http://purl.oclc.org/ooxml/drawingml/main",  # Strict Open XML
)
P_NAMESPACES = (
    "http://schemas.openxmlformats.org/presentationml/2006/main",
    "http://purl.oclc.org/ooxml/presentationml/main",
)
_A = {
    local: set(_xml.names(A_NAMESPACES, local))
    for local in ("p", "r", "t", "fld", "br", "pPr", "rPr", "defRPr", "latin", "lstStyle")
}
_TEXT_BODY = set(_xml.names((*A_NAMESPACES, *P_NAMESPACES), "txBody"))
_LEVELS = {
    name: int(local[3]) - 1 for name, local in _xml.names(A_NAMESPACES, *(f"lvl{n}pPr" for n in range(1, 10))).items()
}

_SLIDE = "presentationml.slide+xml"
_NOTES = "presentationml.notesslide+xml"


def _parts(archive: ZipArchive) -> list[str]:
    """Slides in their number order, then their notes."""
    slides, notes = [], []
    types = _package.content_types(archive)
    for name, content_type in types.items():
        lowered = content_type.lower()
        if lowered.endswith(_SLIDE):
            slides.append(name)
        elif lowered.endswith(_NOTES):
            notes.append(name)
    if not any(".presentationml." in t.lower() or "ms-powerpoint" in t.lower() for t in types.values()):
        raise DocumentError("this is not a PowerPoint presentation (it has no presentation part)")
    return sorted(slides, key=_package.natural_key) + sorted(notes, key=_package.natural_key)


class _SlideCollector(_package.ParagraphCollector):
    """The paragraph collector, knowing DrawingML's fonts: a run in a monospace font is code, a fixed run."""

    def __init__(self, data: bytes, part: str, **options: object) -> None:
        super().__init__(data, part, **options)  # type: ignore[arg-type]
        self._bodies: list[dict[int, bool]] = []  # each open text body's list style: level -> monospace
        self._level = 0
        self._paragraph_font: bool | None = None  # None: the paragraph names no default font
        self._run_font: bool | None = None  # None: the run names no font of its own

    def start(self, name: str, attrs: dict[str, str]) -> None:
        stack = self._stack  # the element's ancestors, its parent last (it is pushed by the base class)
        if name in _TEXT_BODY:
            self._bodies.append({})
        elif name in _A["p"]:
            self._level, self._paragraph_font = 0, None
        elif name in _A["pPr"] and stack and stack[-1] in _A["p"]:
            lvl = attrs.get("lvl", "0")
            self._level = int(lvl) if lvl.isdigit() and len(lvl) < 3 else 0
        elif name in _A["r"]:
            self._run_font = None
        elif name in _A["latin"] and len(stack) >= 3:
            mono = monospace(attrs.get("typeface", ""))
            holder, owner, above = stack[-1], stack[-2], stack[-3]
            if holder in _A["rPr"] and owner in _A["r"]:
                self._run_font = mono
            elif holder in _A["defRPr"] and owner in _A["pPr"] and above in _A["p"]:
                self._paragraph_font = mono
            elif holder in _A["defRPr"] and owner in _LEVELS and above in _A["lstStyle"] and self._bodies:
                self._bodies[-1][_LEVELS[owner]] = mono
        super().start(name, attrs)

    def end(self, name: str) -> None:
        if name in _TEXT_BODY and self._bodies:
            self._bodies.pop()
        super().end(name)

    def _add(self, run: Run, slot: _package.Slot | None) -> None:
        if slot is not None and self._in_code():
            run, slot = Run(run.text, fixed=True), None  # code: kept as it is
        super()._add(run, slot)

    def _in_code(self) -> bool:
        shape = self._bodies[-1].get(self._level) if self._bodies else None
        for font in (self._run_font, self._paragraph_font, shape):
            if font is not None:
                return font
        return False


def read(data: bytes) -> Extracted:
    """The paragraphs of a .pptx's slides and notes; DocumentError for anything that is not a presentation."""
    archive = ZipArchive(data, "PowerPoint presentation")
    units, slots, encodings = _package.collect(
        archive,
        _parts(archive),
        collector=_SlideCollector,
        paragraph=_A["p"],
        text={name: _A["r"] for name in _A["t"]},
        fixed_text={name: _A["fld"] for name in _A["t"]},
        markers={name: (_A["p"], "\n") for name in _A["br"]},
    )
    return _package.PackageDocument(archive, units, slots, encodings)


FORMAT = DocumentFormat(name="pptx", label="PowerPoint presentation", extensions=(".pptx",), read=read)
