"""What the zip-of-XML formats (Word, PowerPoint, OpenDocument) share: where each run's text sits, and rendering.

A format reads its parts with engine.documents.formats._xml and records, for every translatable run, a `Slot`: the
part and the byte range of the run's text. Rendering splices the new texts into those ranges and rewrites only the
parts that changed; the zip's other members are copied byte for byte (engine.documents.formats._zip).
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from engine.documents.formats import _xml
from engine.documents.formats._zip import ZipArchive
from engine.documents.model import DocumentError, Run, Unit

_PRESERVE = b' xml:space="preserve"'
_CT_NS = "http://schemas.openxmlformats.org/package/2006/content-types"
_ATTRIBUTE_ESCAPES = ((b'"', b"&quot;"), (b"'", b"&apos;"), (b"\n", b"&#10;"), (b"\t", b"&#9;"))


@dataclass(frozen=True, slots=True)
class Slot:
    """Where one run's text is: `part`'s bytes [start, end). `space_at` >= 0: the offset of its start tag's `>`,
    where xml:space="preserve" goes when the new text starts or ends with a space (Word drops such spaces
    otherwise); -1 where the format keeps spaces anyway or the tag says so already. `also`: the ranges of further
    text elements merged into this run (identically formatted Word runs), emptied when the new text is written
    here. `attribute`: the range is an attribute's value (an image's description), escaped as one."""

    part: str
    start: int
    end: int
    space_at: int = -1
    also: tuple[tuple[int, int], ...] = ()
    attribute: bool = False


class PackageDocument:
    """A read zip-of-XML document (engine.documents.model.Extracted)."""

    def __init__(
        self,
        archive: ZipArchive,
        units: list[Unit],
        slots: list[tuple[Slot | None, ...]],
        encodings: dict[str, str],
        *,
        stored: Sequence[str] = (),
        first: str | None = None,
    ) -> None:
        self._archive = archive
        self._units = tuple(units)
        self._slots = slots
        self._encodings = encodings
        self._stored = tuple(stored)
        self._first = first

    @property
    def units(self) -> Sequence[Unit]:
        return self._units

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes:
        """The document with the new run texts (see engine.documents.model.Extracted). Languages the document
        declares (w:lang, fo:language) are left as they were: they describe the source's proofing settings."""
        if len(translations) != len(self._units):
            raise DocumentError(f"{len(translations)} translations for {len(self._units)} paragraphs")
        edits: dict[str, list[tuple[int, int, bytes]]] = {}
        for index, texts in enumerate(translations):
            if texts is None:
                continue
            unit, slots = self._units[index], self._slots[index]
            if len(texts) != len(unit.runs):
                raise DocumentError(f"paragraph {index + 1} has {len(unit.runs)} runs but {len(texts)} translations")
            for slot, text in zip(slots, texts, strict=True):
                if slot is None:
                    continue  # a fixed run: its element stays as it was
                part_edits = edits.setdefault(slot.part, [])
                escaped = _xml.escape(text, self._encodings[slot.part])
                if slot.attribute:  # quotes and the white space an attribute value would not keep
                    for raw, reference in _ATTRIBUTE_ESCAPES:
                        escaped = escaped.replace(raw, reference)
                part_edits.append((slot.start, slot.end, escaped))
                part_edits.extend((start, end, b"") for start, end in slot.also)
                if slot.space_at >= 0 and text and (text[0].isspace() or text[-1].isspace()):
                    part_edits.append((slot.space_at, slot.space_at, _PRESERVE))
        if not edits and not self._needs_repair():
            return self._archive.data
        try:
            replacements = {part: _xml.splice(self._archive.read(part), changes) for part, changes in edits.items()}
        except ValueError as exc:  # two texts claim the same bytes: a reader bug, reported rather than written
            raise DocumentError(f"this {self._archive.kind} cannot be written back ({exc})") from exc
        return self._archive.rewrite(replacements, stored=self._stored, first=self._first)

    def _needs_repair(self) -> bool:
        """Whether writing the zip again would change it (ODF's mimetype not first or not stored)."""
        if self._first is None or self._first not in self._archive:
            return False
        info = self._archive.info(self._first)
        return self._archive.names[0] != self._first or info.compress_type != zipfile.ZIP_STORED


class ParagraphCollector(_xml.Handler):
    """An _xml.Handler for Word and PowerPoint parts: a paragraph element is a unit; its runs are the contents of
    text elements (w:t in a w:r) and fixed markers (a tab, a line break). A paragraph nested in another (a text
    box inside a run) is a unit of its own, placed where it starts. Subtrees under `skip` are ignored (deleted
    text of tracked changes)."""

    def __init__(
        self,
        data: bytes,
        part: str,
        *,
        paragraph: set[str],
        text: dict[str, set[str]],
        fixed_text: dict[str, set[str]] | None = None,
        markers: dict[str, tuple[set[str], str]] | None = None,
        skip: set[str] | None = None,
        preserve: bool = False,
    ) -> None:
        self._data = data
        self._part = part
        self._paragraph = paragraph
        self._text = text  # element -> parents under which its content is a translatable run
        self._fixed_text = fixed_text or {}  # element -> parents under which its content is a fixed run
        self._markers = markers or {}  # empty element -> (parents, the fixed text it stands for)
        self._skip = skip or set()
        self._preserve = preserve
        self._wanted = paragraph | set(self._text) | set(self._fixed_text) | set(self._markers) | self._skip
        self._stack: list[str] = []
        self._skipping = 0
        self._open: list[int] = []  # indexes in units of the paragraphs being read, innermost last
        self._current: tuple[int, int, bool, list[str]] | None = None  # (depth, content start, fixed, texts)
        self._space_at = -1
        self.units: list[tuple[list[Run], list[Slot | None]] | None] = []

    def start(self, name: str, attrs: dict[str, str]) -> None:
        stack = self._stack
        parent = stack[-1] if stack else ""
        stack.append(name)
        if self._skipping:
            self._skipping += 1
            return
        if name not in self._wanted:
            return
        if name in self._skip:
            self._skipping = 1
            return
        if name in self._paragraph:
            self._open.append(len(self.units))
            self.units.append(([], []))
            return
        if not self._open:
            return
        fixed = parent in self._fixed_text.get(name, ())
        if fixed or parent in self._text.get(name, ()):
            content, empty = _xml.start_tag_end(self._data, self.at())
            if empty:
                return
            self._current = (len(self._stack), content, fixed, [])
            # Where xml:space="preserve" can go: nowhere when the tag has an xml:space already (a second one would
            # make the part ill-formed; "preserve" is what we want anyway).
            declared = f"{_xml.XML_NS}{_xml.SEP}space" in attrs
            self._space_at = content - 1 if self._preserve and not declared else -1
            return
        marker = self._markers.get(name)
        if marker is not None and parent in marker[0]:
            self._add(Run(marker[1], fixed=True), None)

    def end(self, name: str) -> None:
        depth = len(self._stack)
        self._stack.pop()
        if self._skipping:
            self._skipping -= 1
            return
        current = self._current
        if current is not None and current[0] == depth:
            self._current = None
            text = "".join(current[3])
            if text:
                if current[2]:
                    self._add(Run(text, fixed=True), None)
                else:
                    self._add(Run(text), Slot(self._part, current[1], self.at(), self._space_at))
            return
        if name in self._paragraph and self._open:
            index = self._open.pop()
            entry = self.units[index]
            if entry is not None and not any(slot is not None for slot in entry[1]):
                self.units[index] = None  # nothing to translate or write: not a unit

    def text(self, text: str) -> None:
        if self._current is not None and not self._skipping:
            self._current[3].append(text)

    def _add(self, run: Run, slot: Slot | None) -> None:
        entry = self.units[self._open[-1]]
        if entry is not None:
            entry[0].append(run)
            entry[1].append(slot)


def collect(
    archive: ZipArchive, parts: Sequence[str], *, collector: type[ParagraphCollector] | None = None, **options: object
) -> tuple[list[Unit], list[tuple[Slot | None, ...]], dict[str, str]]:
    """Units, slots and encodings of `parts`, read in order with a ParagraphCollector (or the subclass
    `collector`) built with `options`."""
    make = collector or ParagraphCollector
    units: list[Unit] = []
    slots: list[tuple[Slot | None, ...]] = []
    encodings: dict[str, str] = {}
    for part in parts:
        data = archive.read(part)
        handler = make(data, part, **options)  # type: ignore[arg-type]
        encodings[part] = _xml.scan(data, handler, part)
        for entry in handler.units:
            if entry is not None:
                units.append(Unit(tuple(entry[0])))
                slots.append(tuple(entry[1]))
    return units, slots, encodings


def content_types(archive: ZipArchive) -> dict[str, str]:
    """Each member's OPC content type ([Content_Types].xml: its Overrides, else its extension's Default)."""
    name = "[Content_Types].xml"
    if name not in archive:
        raise DocumentError(f"this {archive.kind} is damaged or not a {archive.kind} ([Content_Types].xml is missing)")
    defaults: dict[str, str] = {}
    overrides: dict[str, str] = {}

    class _Types(_xml.Handler):
        def start(self, tag: str, attrs: dict[str, str]) -> None:
            if tag == f"{_CT_NS}{_xml.SEP}Default":
                defaults[attrs.get("Extension", "").lower()] = attrs.get("ContentType", "")
            elif tag == f"{_CT_NS}{_xml.SEP}Override":
                part = unquote(attrs.get("PartName", "")).lstrip("/").lower()
                overrides[posixpath.normpath(part) if part else part] = attrs.get("ContentType", "")

    _xml.scan(archive.read(name), _Types(), name)
    types = {}
    for member in archive.names:
        lower = member.lower()
        found = overrides.get(lower) or defaults.get(lower.rsplit(".", 1)[-1] if "." in lower else "")
        if found:
            types[member] = found
    return types


def natural_key(name: str) -> list[object]:
    """`slide10.xml` after `slide9.xml`: digit runs compare as numbers."""
    return [int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", name)]
