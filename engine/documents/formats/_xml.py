"""One expat pass over an XML part that reports where things are in its bytes, and splicing new text into them.

Formats find the byte ranges of the texts they translate (element contents, character data between tags) and later
replace only those ranges: every other byte of the part (namespaces, mc:Ignorable, attribute order and quoting,
whitespace) stays as it was. The part is fed to expat in chunks, and only what a format chooses to record is kept,
so a 30 MB part costs little beyond its own bytes.
"""

from __future__ import annotations

import codecs
import re
import xml.parsers.expat
from collections.abc import Iterable

from engine.documents.model import DocumentError

XML_NS = "http://www.w3.org/XML/1998/namespace"
SEP = " "  # between a namespace URI and a local name in the names expat reports: "uri local"
_CHUNK = 1 << 20
# Characters XML 1.0 does not allow (a model could emit them; Word calls such a file corrupt).
_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


class Handler:
    """What a format gives `scan`: it overrides the events it wants. While an event is handled, `at()` is its byte
    offset in the part: a start tag's `<`; an end tag's `<` (for an empty element `<a/>`, the offset just after
    it); a character-data piece's first byte. (Asked only where needed: most events need no offset.)"""

    _parser: xml.parsers.expat.XMLParserType | None = None

    def at(self) -> int:
        assert self._parser is not None, "at() is only meaningful during scan()"
        return self._parser.CurrentByteIndex

    def start(self, name: str, attrs: dict[str, str]) -> None:
        """An element starts (`name` is "namespace-uri local-name")."""

    def end(self, name: str) -> None:
        """An element ends."""

    def text(self, text: str) -> None:
        """Character data (one element's text may come in several pieces)."""

    def mark(self) -> None:
        """A comment or processing instruction: ends any stretch of character data."""


def scan(data: bytes, handler: Handler, part: str, *, allow_doctype: bool = False) -> str:
    """Run expat over `data`, calling `handler`; the part's encoding (a Python codec name) comes back.
    DocumentError for malformed XML, a DTD (no Office part has one; refusing it rules out entity bombs), or an
    encoding other than an ASCII-compatible one. `allow_doctype` lets a bare <!DOCTYPE …> through (XHTML has
    one), still refusing an internal subset, where entities would be declared; external DTDs are never read."""
    parser = xml.parsers.expat.ParserCreate(namespace_separator=SEP)
    declared: list[str | None] = [None]

    def on_decl(_version: str, encoding: str | None, _standalone: int) -> None:
        declared[0] = encoding

    def on_doctype(_name: str, _system: str | None, _public: str | None, internal_subset: int) -> None:
        if allow_doctype and not internal_subset:
            return
        raise DocumentError(f"{part} declares a DTD, which no document part has; the file is not a valid document")

    parser.XmlDeclHandler = on_decl
    parser.StartDoctypeDeclHandler = on_doctype
    parser.StartElementHandler = handler.start
    parser.EndElementHandler = handler.end
    parser.CharacterDataHandler = handler.text
    parser.CommentHandler = lambda _text: handler.mark()
    parser.ProcessingInstructionHandler = lambda _target, _data: handler.mark()
    handler._parser = parser
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:1] == b"\0" or data[1:2] == b"\0":
        raise DocumentError(f"{part} is in UTF-16, which Qiao cannot rewrite; save the document again and retry")
    view = memoryview(data)
    try:
        for pos in range(0, len(data), _CHUNK):
            parser.Parse(bytes(view[pos : pos + _CHUNK]), False)
        parser.Parse(b"", True)
    except xml.parsers.expat.ExpatError as exc:
        raise DocumentError(
            f"{part} is damaged (not well-formed XML: {xml.parsers.expat.ErrorString(exc.code)} at line "
            f"{exc.lineno}, column {exc.offset})"
        ) from exc
    finally:
        # The handlers refer to the parser: break the cycle so the part's bytes are freed now, not at the next GC.
        handler._parser = None
        for attr in (
            "StartElementHandler",
            "EndElementHandler",
            "CharacterDataHandler",
            "CommentHandler",
            "ProcessingInstructionHandler",
            "XmlDeclHandler",
            "StartDoctypeDeclHandler",
        ):
            setattr(parser, attr, None)
    encoding = (declared[0] or "utf-8").lower()
    try:
        codec = codecs.lookup(encoding).name
    except LookupError as exc:
        raise DocumentError(f"{part} is in an unknown encoding {encoding!r}") from exc
    if "16" in codec or "32" in codec:
        raise DocumentError(f"{part} is in {encoding}, which Qiao cannot rewrite; save the document again and retry")
    return codec


def start_tag_end(data: bytes, at: int) -> tuple[int, bool]:
    """Where the start tag beginning at `at` ends (just after its `>`), and whether it is an empty-element tag
    (`<a/>`). Quoted attribute values may hold `>`; they are skipped."""
    pos = at + 1
    quote = 0
    size = len(data)
    while pos < size:
        byte = data[pos]
        if quote:
            if byte == quote:
                quote = 0
        elif byte in (0x22, 0x27):  # " '
            quote = byte
        elif byte == 0x3E:  # >
            return pos + 1, data[pos - 1] == 0x2F  # /
        pos += 1
    raise DocumentError("an XML start tag has no end")  # expat accepted the part, so this cannot happen


def escape(text: str, encoding: str = "utf-8") -> bytes:
    """`text` as XML character data in `encoding`: & < > escaped, a carriage return kept as a reference (a raw
    one would be read back as a line feed), characters XML forbids dropped, others the encoding lacks as
    references."""
    text = _INVALID.sub("", text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    return text.encode(encoding, "xmlcharrefreplace")


def splice(data: bytes, edits: Iterable[tuple[int, int, bytes]]) -> bytes:
    """`data` with each (start, end, new) edit's range replaced by `new`. Edits must not overlap; an insertion is
    an edit with start == end. Everything between edits is copied as it was."""
    view = memoryview(data)
    pieces: list[bytes | memoryview] = []
    pos = 0
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], edit[1])):
        if start < pos:
            raise ValueError("overlapping edits")
        pieces.append(view[pos:start])
        pieces.append(new)
        pos = end
    pieces.append(view[pos:])
    return b"".join(pieces)


def names(namespaces: Iterable[str], *locals_: str) -> dict[str, str]:
    """{"uri local": local} for every namespace and local name: formats look event names up in one dict."""
    return {f"{ns}{SEP}{local}": local for ns in namespaces for local in locals_}
