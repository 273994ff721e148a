"""PowerPoint presentations (.pptx): the slides and their speaker notes; layouts and masters are left alone.

A unit is one DrawingML paragraph (a:p) in any shape, grouped shape or table cell; its runs are the a:t texts of its
a:r runs. A line break (a:br) and a field (a:fld: the slide number, a date) are fixed runs. Only a:t contents
change (DrawingML keeps spaces as they are); run properties (a:rPr) and everything else stay byte for byte.
"""

from __future__ import annotations

from engine.documents.formats import _package, _xml
from engine.documents.formats._zip import ZipArchive
from engine.documents.model import DocumentError, DocumentFormat, Extracted

A_NAMESPACES = (
    "http://schemas.openxmlformats.org/drawingml/2006/main",
    "http://purl.oclc.org/ooxml/drawingml/main",  # Strict Open XML
)
_A = {local: set(_xml.names(A_NAMESPACES, local)) for local in ("p", "r", "t", "fld", "br")}

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


def read(data: bytes) -> Extracted:
    """The paragraphs of a .pptx's slides and notes; DocumentError for anything that is not a presentation."""
    archive = ZipArchive(data, "PowerPoint presentation")
    units, slots, encodings = _package.collect(
        archive,
        _parts(archive),
        paragraph=_A["p"],
        text={name: _A["r"] for name in _A["t"]},
        fixed_text={name: _A["fld"] for name in _A["t"]},
        markers={name: (_A["p"], "\n") for name in _A["br"]},
    )
    return _package.PackageDocument(archive, units, slots, encodings)


FORMAT = DocumentFormat(name="pptx", label="PowerPoint presentation", extensions=(".pptx",), read=read)
