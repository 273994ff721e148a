"""Plain text: each paragraph (lines between blank lines) is one unit; everything else is kept as it was.

A hard-wrapped paragraph is ONE unit with its line breaks inside (the engine decides which breaks are wraps and
joins them); only a very long block — a file without blank lines — is cut, after lines that end a sentence or
before indented ones, and a paragraph still over MAX_UNIT_CHARS (a whole book on one line) is cut after its
sentences, the blanks between the pieces kept as they were (else the engine refused it whole and nothing was
translated). Outside the units nothing changes: indentation before a paragraph, trailing whitespace after
it, blank lines, and every line ending (\\n, \\r\\n, \\r, mixed). Line breaks in a translation are written with the
paragraph's own line ending. The encoding is detected and kept (engine.documents.formats._textcodec): a BOM stays, a
GB18030 or UTF-16 file comes back in GB18030 or UTF-16; a translation that the file's encoding cannot hold (Chinese
into a cp1252 file) makes the whole result UTF-8 without a BOM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from engine.documents.formats import _textcodec
from engine.documents.formats._textdoc import Line, SplicedText, dominant_eol, split_lines, with_eol
from engine.documents.model import DocumentFormat, Run, Unit

# A block longer than this is split where a paragraph may end (see _chunks).
MAX_UNIT_LINES = 40
MAX_UNIT_CHARS = 4000
_SENTENCE_END = re.compile(r"[.!?…。！？:：][\"'”’»)\]」』）】]*\Z")
# Inside a long paragraph: after a sentence's end (and its closing quotes), with the blanks that follow it
_INNER_END = re.compile(r"(?:[.!?…][\"'”’»)\]]*\s+|[。！？][”’」』）】]*\s*)")


@dataclass(frozen=True)
class _Paragraph:
    start: int
    end: int
    eol: str  # how a line break inside it is written


class TextDocument(SplicedText):
    """A read text file (engine.documents.model.Extracted)."""

    def __init__(self, decoded: _textcodec.Decoded, paragraphs: list[_Paragraph]) -> None:
        super().__init__(decoded, [Unit((Run(decoded.text[p.start : p.end]),)) for p in paragraphs])
        self._paragraphs = paragraphs

    def replacements(self, translations: Sequence[Sequence[str] | None], target: str) -> list[tuple[int, int, str]]:
        """Each translated paragraph replaced (see the module docstring)."""
        replacements = []
        for unit, paragraph, new in zip(self._units, self._paragraphs, translations):
            if new is None:
                continue
            text = new[0]
            if text != unit.runs[0].text:
                text = with_eol(text, paragraph.eol)
            replacements.append((paragraph.start, paragraph.end, text))
        return replacements


def read(data: bytes) -> TextDocument:
    """The paragraphs of a text file; DocumentError for binary data or an undecodable encoding."""
    decoded = _textcodec.decode(data, "text file")
    lines = split_lines(decoded.text)
    fallback_eol = dominant_eol(lines)
    paragraphs = []
    block: list[Line] = []
    for line in [*lines, None]:
        if line is not None and line.content.strip():
            block.append(line)
            continue
        if block:
            for chunk in _chunks(block):
                paragraphs.extend(_pieces(decoded.text, _paragraph(chunk, fallback_eol)))
            block = []
    return TextDocument(decoded, paragraphs)


def _chunks(block: list[Line]) -> list[list[Line]]:
    """A block, or, when it is very long (a file with no blank lines: one paragraph a line, as many novels are),
    its pieces split after lines that end a sentence or before indented lines — where a paragraph may end — so a
    unit stays a paragraph's size and a long file stays resumable unit by unit."""
    if len(block) <= MAX_UNIT_LINES and sum(len(line.content) for line in block) <= MAX_UNIT_CHARS:
        return [block]
    chunks: list[list[Line]] = [[]]
    for i, line in enumerate(block):
        chunks[-1].append(line)
        following = block[i + 1] if i + 1 < len(block) else None
        if following is not None and (_SENTENCE_END.search(line.content.rstrip()) or following.content[:1].isspace()):
            chunks.append([])
    return [chunk for chunk in chunks if chunk]


def _pieces(text: str, paragraph: _Paragraph) -> list[_Paragraph]:
    """`paragraph`, or when it is over MAX_UNIT_CHARS, pieces of it cut after a sentence in the last three quarters
    of each MAX_UNIT_CHARS window (else after a blank, else at the window's end); what lies between two pieces
    (the blanks after a sentence) stays outside both."""
    pieces = []
    start, end = paragraph.start, paragraph.end
    while end - start > MAX_UNIT_CHARS:
        limit = start + MAX_UNIT_CHARS
        cut = None
        for match in _INNER_END.finditer(text, start + MAX_UNIT_CHARS // 4, limit):
            cut = match  # the last sentence end in the window
        if cut is not None:
            stop, after = cut.start() + len(cut.group().rstrip()), cut.end()
        else:
            blank = text.rfind(" ", start + MAX_UNIT_CHARS // 4, limit)
            stop, after = (blank, blank + 1) if blank > start else (limit, limit)
        pieces.append(_Paragraph(start, stop, paragraph.eol))
        start = after
    pieces.append(_Paragraph(start, end, paragraph.eol))
    return pieces


def _paragraph(block: list[Line], fallback_eol: str) -> _Paragraph:
    first, last = block[0], block[-1]
    start = first.start + len(first.content) - len(first.content.lstrip())
    end = last.start + len(last.content.rstrip())
    eol = next((line.eol for line in block[:-1] if line.eol), first.eol or fallback_eol)
    return _Paragraph(start, end, eol)


FORMAT = DocumentFormat(name="txt", label="Plain text", extensions=(".txt", ".text"), read=read)
