"""Word documents (.docx): the body, headers and footers, footnotes and endnotes; comments are left alone.

A unit is one paragraph (w:p), wherever it is: the body, a table cell, a text box (its paragraphs are units of
their own), a header. Its runs are the texts of its w:r runs' w:t elements, hyperlinks' and fields' result runs
included; a tab or line break inside a run is a fixed run. Field codes (w:instrText), deleted text of tracked
changes (w:del, w:moveFrom) and everything else stay exactly as they were, as does each run's formatting (w:rPr):
only w:t contents change, with xml:space="preserve" added where a new text starts or ends with a space. Languages
marked in the document (w:lang) are kept: they record the source's proofing settings, and Word detects the new
text's language itself.
"""

from __future__ import annotations

from engine.documents.formats import _package, _xml
from engine.documents.formats._zip import ZipArchive
from engine.documents.model import DocumentError, DocumentFormat, Extracted

W_NAMESPACES = (
    "http://schemas.openxmlformats.org/wordprocessingml/2006/main",
    "http://purl.oclc.org/ooxml/wordprocessingml/main",  # Strict Open XML
)
_W = {local: set(_xml.names(W_NAMESPACES, local)) for local in ("p", "r", "t", "tab", "ptab", "br", "cr", "del")}
_W["moveFrom"] = set(_xml.names(W_NAMESPACES, "moveFrom"))

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


def read(data: bytes) -> Extracted:
    """The paragraphs of a .docx; DocumentError for anything that is not a readable Word document."""
    archive = ZipArchive(data, "Word document")
    parts = _parts(archive)
    units, slots, encodings = _package.collect(
        archive,
        parts,
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
