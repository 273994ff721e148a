"""What the text-based formats share: lines with their own endings, and splicing new texts into the original.

Every text format reads the decoded text into units that each remember a [start, end) range of it, and renders by
replacing exactly those ranges: whatever lies between them (markup, blank lines, timings, line endings of any kind)
is copied as it was.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.documents.formats import _textcodec
from engine.documents.model import DocumentError, Unit

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Line:
    """One line of a text: where it starts, its content (no line ending) and its ending ("" on a last line)."""

    start: int
    content: str
    eol: str

    @property
    def end(self) -> int:
        """Where the content ends (the line ending begins)."""
        return self.start + len(self.content)


def split_lines(text: str) -> list[Line]:
    """The lines of `text`, any of \\n, \\r\\n and \\r ending one (mixed endings are each kept)."""
    lines = []
    for match in _LINE.finditer(text):
        if match.start() == match.end():
            break
        raw = match.group()
        content = raw.rstrip("\r\n")
        lines.append(Line(match.start(), content, raw[len(content) :]))
    return lines


def dominant_eol(lines: Sequence[Line]) -> str:
    """The line ending most lines use ("\\n" for a text without any)."""
    counts: dict[str, int] = {}
    for line in lines:
        if line.eol:
            counts[line.eol] = counts.get(line.eol, 0) + 1
    return max(counts, key=lambda eol: counts[eol]) if counts else "\n"


def with_eol(text: str, eol: str) -> str:
    """`text` with every line break written as `eol`."""
    return _NEWLINE.sub(eol, text)


def splice(text: str, replacements: Sequence[tuple[int, int, str]]) -> str:
    """`text` with each (start, end, new) range replaced; ranges must not overlap (any order)."""
    out = []
    pos = 0
    for start, end, new in sorted(replacements, key=lambda r: (r[0], r[1])):
        if start < pos:
            raise DocumentError("internal error: two translated ranges overlap")
        out.append(text[pos:start])
        out.append(new)
        pos = end
    out.append(text[pos:])
    return "".join(out)


def checked(units: Sequence[Unit], translations: Sequence[Sequence[str] | None]) -> None:
    """DocumentError unless there is one entry per unit, each None or one string per run."""
    if len(translations) != len(units):
        raise DocumentError(f"internal error: {len(translations)} translations for {len(units)} units")
    for i, (unit, new) in enumerate(zip(units, translations)):
        if new is None:
            continue
        if len(new) != len(unit.runs) or not all(isinstance(text, str) for text in new):
            raise DocumentError(f"internal error: unit {i} has {len(unit.runs)} runs but got {len(new)} texts")


class SplicedText:
    """A read text document (engine.documents.model.Extracted) whose render splices new texts into its decoded text
    and encodes the result as the file was read; each format says what replaces what (`replacements`)."""

    def __init__(self, decoded: _textcodec.Decoded, units: Sequence[Unit]) -> None:
        self._decoded = decoded
        self._units = tuple(units)

    @property
    def units(self) -> Sequence[Unit]:
        return self._units

    def render(self, translations: Sequence[Sequence[str] | None], *, target: str) -> bytes:
        checked(self._units, translations)
        edits = self.replacements(translations, target)
        return _textcodec.encode(splice(self._decoded.text, edits), self._decoded)

    def replacements(self, translations: Sequence[Sequence[str] | None], target: str) -> list[tuple[int, int, str]]:
        """(start, end, new text) ranges of the decoded text for these (checked) translations."""
        raise NotImplementedError
