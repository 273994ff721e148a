"""EPUB books: the XHTML content documents the package lists are translated with the HTML logic, and so are the
book's title and the labels of an EPUB 2 table of contents (toc.ncx); every other member (images, styles, fonts,
other metadata) is copied unchanged.

An EPUB is a zip whose first member is an uncompressed `mimetype`; META-INF/container.xml names the package (OPF)
file, whose manifest lists the content documents. Books with DRM (encrypted members) are refused, and so are
archives that could exhaust memory (too many members, too much uncompressed data) or that name members outside the
archive (absolute or `..` paths). The zip handling is a handful of small functions so it can share code with the
other zip-based formats later.
"""

from __future__ import annotations

import contextlib
import io
import posixpath
import re
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from html import escape, unescape
from typing import Protocol
from urllib.parse import unquote
from xml.etree import ElementTree

from engine.documents.formats import html
from engine.documents.model import DocumentError, DocumentFormat, Run, Unit

MAX_MEMBERS = 10_000
MAX_UNCOMPRESSED = 1024 * 1024 * 1024  # all members together, as the archive declares them (zipfile enforces it)
MIMETYPE = b"application/epub+zip"
CONTENT_TYPES = frozenset(("application/xhtml+xml", "text/html"))
# Font obfuscation (IDPF, Adobe) is declared in encryption.xml without making the book unreadable; anything else is DRM.
FONT_OBFUSCATION = frozenset(("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC"))
NCX_TYPE = "application/x-dtbncx+xml"
_TITLE = re.compile(r"<(?:[\w.-]+:)?title\b[^>]*>([^<]*)</(?:[\w.-]+:)?title\s*>")
_NCX_TEXT = re.compile(r"<(?:[\w.-]+:)?text\b[^>]*>([^<]*)</(?:[\w.-]+:)?text\s*>")
_LANGUAGE = re.compile(r"(<(?:[\w.-]+:)?language\b[^>]*>)([^<]*)(</)")


class _Part(Protocol):
    """One member's translatable part (a content document, the table of contents, the package's title)."""

    @property
    def units(self) -> Sequence[Unit]: ...

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes: ...


class EpubDocument:
    """A read book: the package's title, then the units of its content documents and EPUB 2 table of contents, in
    manifest order."""

    def __init__(self, data: bytes, members: list[zipfile.ZipInfo], parts: list[tuple[str, _Part]], opf: str) -> None:
        self._data = data
        self._members = members
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
        with _open_zip(self._data) as archive:
            replaced: dict[str, bytes] = {}
            at = 0
            for name, part in self._parts:
                mine = translations[at : at + len(part.units)]
                at += len(part.units)
                if any(item is not None for item in mine):
                    replaced[name] = part.render(mine, target=target)
            if any(item is not None for item in translations):
                package = replaced.get(self._opf) or _read_member(archive, archive.getinfo(self._opf))
                replaced[self._opf] = _set_language(package, target)
            return _write_zip(archive, self._members, replaced)


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
    with _open_zip(data) as archive:
        members = _checked_members(archive)
        _verify_members(archive, members)
        names = {info.filename for info in members}
        _refuse_drm(archive, names)
        if "mimetype" in names and _read_member(archive, archive.getinfo("mimetype")).strip() != MIMETYPE:
            raise DocumentError("this zip file is not an EPUB book (its mimetype member says otherwise)")
        opf = _package_path(archive, names)
        package = _read_member(archive, archive.getinfo(opf))
        parts: list[tuple[str, _Part]] = []
        for name, kind in [(opf, "package"), *_manifest(package, opf)]:
            if name not in names:
                continue  # a manifest entry without its file: nothing to translate, readers skip it too
            try:
                member = _read_member(archive, archive.getinfo(name))
                if kind == "package":
                    parts.append((name, _Labels(member, _TITLE)))
                elif kind == "ncx":
                    parts.append((name, _Labels(member, _NCX_TEXT)))
                else:
                    parts.append((name, html.read(member)))
            except DocumentError as exc:
                raise DocumentError(f"{name} in this book: {exc}") from exc
    return EpubDocument(data, members, parts, opf)


# -- zip --------------------------------------------------------------------------------------------------------


def _open_zip(data: bytes) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        raise DocumentError(f"this is not a readable EPUB (zip) file: it is damaged or truncated ({exc})") from exc


def _checked_members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's members, refusing zip bombs, encrypted members and names that point outside the archive."""
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise DocumentError(f"this book has {len(members)} files inside; Qiao reads books of up to {MAX_MEMBERS}")
    total = sum(info.file_size for info in members)
    if total > MAX_UNCOMPRESSED:
        raise DocumentError(
            f"this book unpacks to {total // (1024 * 1024)} MB; Qiao reads books of up to "
            f"{MAX_UNCOMPRESSED // (1024 * 1024)} MB (it may be a zip bomb)"
        )
    seen = set()
    for info in members:
        name = info.filename
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) or ".." in parts:
            raise DocumentError(f"this book names a file outside itself ({name!r}); it is damaged or malicious")
        if name in seen:
            raise DocumentError(f"this book contains two files named {name!r}; it is damaged")
        seen.add(name)
        if info.flag_bits & 0x1:
            raise DocumentError("this book is encrypted (DRM); Qiao can only translate DRM-free EPUB books")
    return members


def _verify_members(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo]) -> None:
    """Unpack every member once (checking its CRC), so a damaged image fails the read, not the write."""
    for info in members:
        with _member_errors(info), archive.open(info) as stream:
            while stream.read(1024 * 1024):
                pass


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    with _member_errors(info):
        return archive.read(info)


@contextlib.contextmanager
def _member_errors(info: zipfile.ZipInfo) -> Iterator[None]:
    """zipfile's and zlib's many exceptions for a damaged member, as one DocumentError."""
    try:
        yield
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError, RuntimeError, ValueError) as exc:
        raise DocumentError(f"{info.filename} in this book cannot be unpacked: it is damaged ({exc})") from exc


def _write_zip(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], replaced: dict[str, bytes]) -> bytes:
    """A new archive: `mimetype` first and stored (as EPUB requires), then every member in its original order and
    with its original name, time and compression, its data from `replaced` or copied from `archive`."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as writer:
        mimetype = next((info for info in members if info.filename == "mimetype"), None)
        head = zipfile.ZipInfo("mimetype", mimetype.date_time if mimetype else (1980, 1, 1, 0, 0, 0))
        head.compress_type = zipfile.ZIP_STORED
        writer.writestr(head, _read_member(archive, mimetype) if mimetype else MIMETYPE)
        for info in members:
            if info.filename == "mimetype":
                continue
            data = replaced[info.filename] if info.filename in replaced else _read_member(archive, info)
            writer.writestr(_copy_info(info), data)
    return out.getvalue()


def _copy_info(info: zipfile.ZipInfo) -> zipfile.ZipInfo:
    """A header for writing `info` again: same name, time, compression, permissions and comment."""
    copy = zipfile.ZipInfo(info.filename, info.date_time)
    copy.compress_type = info.compress_type
    copy.external_attr = info.external_attr
    copy.create_system = info.create_system
    copy.comment = info.comment
    return copy


# -- package ----------------------------------------------------------------------------------------------------


def _xml(data: bytes, name: str) -> ElementTree.Element:
    try:
        return ElementTree.fromstring(data)
    except (ElementTree.ParseError, ValueError) as exc:
        raise DocumentError(f"{name} in this book is not valid XML ({exc}); the book is damaged") from exc


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _package_path(archive: zipfile.ZipFile, names: set[str]) -> str:
    """The package (OPF) file that META-INF/container.xml names."""
    if "META-INF/container.xml" not in names:
        raise DocumentError("this zip file is not an EPUB book (it has no META-INF/container.xml)")
    container = _xml(_read_member(archive, archive.getinfo("META-INF/container.xml")), "META-INF/container.xml")
    for element in container.iter():
        if _local(element.tag) == "rootfile":
            path = element.get("full-path", "")
            if path in names:
                return path
    raise DocumentError("this EPUB's container.xml names no package file that the book contains; it is damaged")


def _manifest(package: bytes, opf: str) -> list[tuple[str, str]]:
    """(archive name, "xhtml" or "ncx") of the manifest's content documents (the navigation document included) and
    EPUB 2 tables of contents, in manifest order."""
    root = _xml(package, opf)
    base = posixpath.dirname(opf)
    found: list[tuple[str, str]] = []
    for element in root.iter():
        media_type = element.get("media-type", "").lower()
        kind = "xhtml" if media_type in CONTENT_TYPES else "ncx" if media_type == NCX_TYPE else None
        if _local(element.tag) != "item" or kind is None:
            continue
        href = unquote(element.get("href", "").split("#", 1)[0])
        if href:
            name = posixpath.normpath(posixpath.join(base, href))
            if name not in (seen for seen, _ in found):
                found.append((name, kind))
    return found


def _refuse_drm(archive: zipfile.ZipFile, names: set[str]) -> None:
    """DocumentError when the book's content is encrypted (Adobe/Readium/Apple DRM), not merely its fonts
    obfuscated."""
    if "META-INF/rights.xml" in names:
        raise DocumentError("this book is protected by DRM (it has a rights file); Qiao translates DRM-free books only")
    if "META-INF/encryption.xml" not in names:
        return
    encryption = _xml(_read_member(archive, archive.getinfo("META-INF/encryption.xml")), "META-INF/encryption.xml")
    for element in encryption.iter():
        if _local(element.tag) == "EncryptionMethod" and element.get("Algorithm", "") not in FONT_OBFUSCATION:
            raise DocumentError("this book is encrypted (DRM); Qiao can only translate DRM-free EPUB books")


def _set_language(package: bytes, target: str) -> bytes:
    """The package with its first dc:language set to `target`, every other byte unchanged."""
    decoded = html.decode(package)
    match = _LANGUAGE.search(decoded.text)
    if match is None or match.group(2).strip() == target:
        return package
    return html.splice(package, decoded, [(match.start(2), match.end(2), target)])


FORMAT = DocumentFormat(name="epub", label="EPUB book", extensions=(".epub",), read=read)
