"""EPUB books: the XHTML content documents the package lists are translated with the HTML logic, and so are the
book's title and the labels of an EPUB 2 table of contents (toc.ncx); every other member (images, styles, fonts,
other metadata) is copied unchanged. Code stays code: besides <code> and <pre>, the classes the book's stylesheets
set in a monospace font (LibreOffice's EPUB marks code only so: `.span4 { font-family: 'Courier New' }`).

An EPUB is a zip whose first member is an uncompressed `mimetype`; META-INF/container.xml names the package (OPF)
file, whose manifest lists the content documents. Books with DRM (encrypted members, an encryption.xml that
declares more than font obfuscation, a rights.xml) are refused. The zip is read and written by
engine.documents.formats._zip, as the Office formats' are: its checks (names outside the archive, duplicates, zip
bombs) apply, with this module's caps on members and uncompressed size; untouched members are copied byte for byte,
and `mimetype` is written first, uncompressed and without an extra field, as the OCF specification requires.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from html import escape, unescape
from typing import Protocol
from urllib.parse import unquote
from xml.etree import ElementTree

from engine.documents.formats import _code, html
from engine.documents.formats._zip import ZipArchive
from engine.documents.model import DocumentError, DocumentFormat, Run, Unit

# A book's own caps, stricter on members than _zip's defaults (a book of 10,000 files is already unusual); both are
# checked against the sizes the archive declares, which zipfile enforces while inflating.
MAX_MEMBERS = 10_000
MAX_UNCOMPRESSED = 1024 * 1024 * 1024  # all members together
MIMETYPE = b"application/epub+zip"
CONTENT_TYPES = frozenset(("application/xhtml+xml", "text/html"))
# Font obfuscation (IDPF, Adobe) is declared in encryption.xml without making the book unreadable; anything else is DRM.
FONT_OBFUSCATION = frozenset(("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"))
NCX_TYPE = "application/x-dtbncx+xml"
_TITLE = re.compile(r"<(?:[\w.-]+:)?title\b[^>]*>([^<]*)</(?:[\w.-]+:)?title\s*>")
_NCX_TEXT = re.compile(r"<(?:[\w.-]+:)?text\b[^>]*>([^<]*)</(?:[\w.-]+:)?text\s*>")
_LANGUAGE = re.compile(r"(<(?:[\w.-]+:)?language\b[^>]*>)([^<]*)(</)")
_DRM = "this book is encrypted (DRM); Qiao can only translate DRM-free EPUB books"


class _Part(Protocol):
    """One member's translatable part (a content document, the table of contents, the package's title)."""

    @property
    def units(self) -> Sequence[Unit]: ...

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes: ...


class EpubDocument:
    """A read book: the package's title, then the units of its content documents and EPUB 2 table of contents, in
    manifest order."""

    def __init__(self, archive: ZipArchive, parts: list[tuple[str, _Part]], opf: str) -> None:
        self._archive = archive
        self._parts = parts
        self._opf = opf
        self._units = [unit for _, part in parts for unit in part.units]

    @property
    def units(self) -> Sequence[Unit]:
        return self._units

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes:
        """The book with its units replaced (see engine.documents.model.Extracted); the package's dc:language set
        to `target` when anything was translated."""
        if len(translations) != len(self._units):
            raise DocumentError(f"{len(translations)} translations for a book of {len(self._units)} units")
        archive = self._archive
        replaced: dict[str, bytes] = {}
        at = 0
        for name, part in self._parts:
            mine = translations[at : at + len(part.units)]
            at += len(part.units)
            if any(item is not None for item in mine):
                replaced[name] = part.render(mine, target=target)
        if any(item is not None for item in translations):
            package = replaced.get(self._opf) or archive.read(self._opf)
            replaced[self._opf] = _set_language(package, target)
        added = {} if "mimetype" in archive else {"mimetype": MIMETYPE}
        return archive.rewrite(replaced, stored=("mimetype",), first="mimetype", added=added)


class _Labels:
    """The texts of simple XML elements (the package's dc:title, an NCX table of contents' <text> labels): one
    unit each, written back escaped; every other byte kept."""

    def __init__(self, data: bytes, pattern: re.Pattern[str]) -> None:
        self._data = data
        self._decoded = html.decode(data)
        self._slots: list[tuple[int, int]] = []
        self._units: list[Unit] = []
        text = self._decoded.text
        for match in pattern.finditer(text):
            start, end = match.span(1)
            raw = text[start:end]
            start += len(raw) - len(raw.lstrip())
            end -= len(raw) - len(raw.rstrip())
            unit = Unit((Run(" ".join(unescape(text[start:end]).split())),))
            if unit.translatable:
                self._units.append(unit)
                self._slots.append((start, end))

    @property
    def units(self) -> Sequence[Unit]:
        return self._units

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes:
        edits = [
            (start, end, escape(new[0], quote=False))
            for (start, end), unit, new in zip(self._slots, self._units, translations)
            if new is not None and new[0] != unit.runs[0].text
        ]
        return html.splice(self._data, self._decoded, edits) if edits else self._data


def read(data: bytes) -> EpubDocument:
    """The book's units (DocumentError for anything that is not a readable, DRM-free EPUB)."""
    archive = ZipArchive(data, "EPUB book", max_members=MAX_MEMBERS, max_total_bytes=MAX_UNCOMPRESSED, encrypted=_DRM)
    archive.verify()  # a damaged image fails here, not as a damaged copy in the translation
    _refuse_drm(archive)
    if "mimetype" in archive and archive.read("mimetype").strip() != MIMETYPE:
        raise DocumentError("this zip file is not an EPUB book (its mimetype member says otherwise)")
    opf = _package_path(archive)
    package = archive.read(opf)
    manifest = _manifest(package, opf)
    code = _code_classes(archive, manifest)
    parts: list[tuple[str, _Part]] = []
    for name, kind in [(opf, "package"), *manifest]:
        if name not in archive or kind == "css":
            continue  # a manifest entry without its file: nothing to translate, readers skip it too
        member = archive.read(name)
        try:
            if kind == "package":
                parts.append((name, _Labels(member, _TITLE)))
            elif kind == "ncx":
                parts.append((name, _Labels(member, _NCX_TEXT)))
            else:
                parts.append((name, html.read(member, code)))
        except DocumentError as exc:
            raise DocumentError(f"{name} in this book: {exc}") from exc
    return EpubDocument(archive, parts, opf)


# -- package ----------------------------------------------------------------------------------------------------


def _xml(data: bytes, name: str) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(data)
    except (ElementTree.ParseError, ValueError) as exc:
        raise DocumentError(f"{name} in this book is not valid XML ({exc}); the book is damaged") from exc


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _package_path(archive: ZipArchive) -> str:
    """The package (OPF) file that META-INF/container.xml names."""
    if "META-INF/container.xml" not in archive:
        raise DocumentError("this zip file is not an EPUB book (it has no META-INF/container.xml)")
    container = _xml(archive.read("META-INF/container.xml"), "META-INF/container.xml")
    for element in container.iter():
        if _local(element.tag) == "rootfile":
            path = element.get("full-path", "")
            if path in archive:
                return path
    raise DocumentError("this EPUB's container.xml names no package file that the book contains; it is damaged")


def _manifest(package: bytes, opf: str) -> list[tuple[str, str]]:
    """(archive name, "xhtml", "ncx" or "css") of the manifest's content documents (the navigation document
    included), EPUB 2 tables of contents and stylesheets, in manifest order."""
    root = _xml(package, opf)
    base = posixpath.dirname(opf)
    found: list[tuple[str, str]] = []
    for element in root.iter():
        media_type = element.get("media-type", "").lower()
        kind = {NCX_TYPE: "ncx", "text/css": "css"}.get(media_type, "xhtml" if media_type in CONTENT_TYPES else None)
        if _local(element.tag) != "item" or kind is None:
            continue
        href = unquote(element.get("href", "").split("#", 1)[0])
        if href:
            name = posixpath.normpath(posixpath.join(base, href))
            if name not in (seen for seen, _ in found):
                found.append((name, kind))
    return found


def _code_classes(archive: ZipArchive, manifest: list[tuple[str, str]]) -> frozenset[str]:
    """The classes the book's stylesheets set in a monospace font (engine.documents.formats._code)."""
    found: set[str] = set()
    for name, kind in manifest:
        if kind == "css" and name in archive:
            found |= _code.code_classes(archive.read(name).decode("utf-8", "replace"))
    return frozenset(found)


def _refuse_drm(archive: ZipArchive) -> None:
    """DocumentError when the book's content is encrypted (Adobe/Readium/Apple DRM), not merely its fonts
    obfuscated."""
    if "META-INF/rights.xml" in archive:
        raise DocumentError("this book is protected by DRM (it has a rights file); Qiao translates DRM-free books only")
    if "META-INF/encryption.xml" not in archive:
        return
    encryption = _xml(archive.read("META-INF/encryption.xml"), "META-INF/encryption.xml")
    for element in encryption.iter():
        if _local(element.tag) == "EncryptionMethod" and element.get("Algorithm", "") not in FONT_OBFUSCATION:
            raise DocumentError(_DRM)


def _set_language(package: bytes, target: str) -> bytes:
    """The package with its first dc:language set to `target`, every other byte unchanged."""
    decoded = html.decode(package)
    match = _LANGUAGE.search(decoded.text)
    if match is None or match.group(2).strip() == target:
        return package
    return html.splice(package, decoded, [(match.start(2), match.end(2), target)])


FORMAT = DocumentFormat(name="epub", label="EPUB book", extensions=(".epub",), read=read)
