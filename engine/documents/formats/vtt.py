"""WebVTT (.vtt) subtitles: only cue text is translated; the header, NOTE, STYLE and REGION blocks, cue identifiers,
timings and cue settings stay byte for byte.

A small parser of its own, following the WebVTT spec's block structure (blocks separated by blank lines; a cue is an
optional identifier line, a timing line with `-->`, then its text): webvtt-py would add a dependency yet cannot give
the file back as written (it re-serialises, dropping NOTE blocks' placement, normalising timestamps and line
endings). Cue text is grouped into sentences and written back as SRT's is (engine.documents.formats._subtitles);
character references (&amp;) are decoded for the translator and `&`, `<`, `>` escaped again on the way out.
"""

from __future__ import annotations

import re

from engine.documents.formats import _subtitles, _textcodec
from engine.documents.formats._textdoc import Line, dominant_eol, split_lines
from engine.documents.model import DocumentError, DocumentFormat

_TIME = r"(?:(\d{2,}):)?([0-5]\d):([0-5]\d)\.(\d{3})"
_TIMING = re.compile(rf"\s*{_TIME}[ \t]+-->[ \t]+{_TIME}(?:[ \t].*)?")
_SKIPPED_BLOCK = re.compile(r"(?:NOTE|STYLE|REGION)(?:[ \t].*)?")


def read(data: bytes) -> _subtitles.SubtitleDocument:
    """The sentences of a WebVTT file; DocumentError when it does not start with WEBVTT."""
    decoded = _textcodec.decode(data, "subtitle file")
    text = decoded.text
    lines = split_lines(text)
    if not lines or not re.fullmatch(r"WEBVTT(?:[ \t].*)?", lines[0].content):
        raise DocumentError("this is not a WebVTT subtitle file: its first line must be WEBVTT")
    fallback = dominant_eol(lines)
    cues: list[_subtitles.Cue] = []
    warnings: list[str] = []
    numbers = {line.start: n for n, line in enumerate(lines, start=1)}
    for block in _blocks(lines):
        cue = _cue(block, fallback)
        if cue is not None:
            cues.append(cue)
            continue
        problem = _not_a_cue(block)
        if problem is not None:
            if cues:
                cues[-1] = _subtitles.replace_cue(cues[-1], closes=True)  # no sentence runs over it
            warnings.append(f"line {numbers[block[0].start]}: {problem} was kept as it was, not translated")
    if len(warnings) > 10:
        warnings[10:] = [f"… and {len(warnings) - 10} more blocks that are not cues were kept as they were"]
    units, groups = _subtitles.group_units(text, _subtitles.dialogue_cues(text, cues), entities=True)
    return _subtitles.SubtitleDocument(decoded, units, groups, escape=True, warnings=warnings)


def _blocks(lines: list[Line]) -> list[list[Line]]:
    """The blocks after the header: runs of non-blank lines; a line with "-->" after a block's timing line starts
    another block (a cue without a blank line before it: the spec ends the cue text there)."""
    blocks: list[list[Line]] = []
    current: list[Line] = []
    in_header = True
    for line in lines:
        if line.content.strip():
            current.append(line)
            continue
        if current and not in_header:
            blocks.append(current)
        current = []
        in_header = False
    if current and not in_header:
        blocks.append(current)
    return [piece for block in blocks for piece in _split_at_timings(block)]


def _split_at_timings(block: list[Line]) -> list[list[Line]]:
    if _SKIPPED_BLOCK.fullmatch(block[0].content):
        return [block]
    timing = 0 if "-->" in block[0].content else 1
    for k in range(timing + 1, len(block)):
        if "-->" in block[k].content:
            return [block[:k], *_split_at_timings(block[k:])]
    return [block]


def _not_a_cue(block: list[Line]) -> str | None:
    """What a block that gives no cue is, when it is something a person would miss; None for NOTE, STYLE and
    REGION blocks and cues without text (nothing of them was meant to be shown)."""
    if _SKIPPED_BLOCK.fullmatch(block[0].content):
        return None
    timing = next((line for line in block[:2] if "-->" in line.content), None)
    if timing is None:
        words = " ".join(" ".join(line.content.split()) for line in block)
        return f"text outside any cue ({(words if len(words) <= 60 else words[:59] + '…')!r})"
    if _TIMING.fullmatch(timing.content) is None:
        return f"a cue whose timing cannot be read ({timing.content.strip()[:60]!r})"
    return None


def _cue(block: list[Line], fallback: str) -> _subtitles.Cue | None:
    """A cue block's text range and timing; None for NOTE, STYLE, REGION, a cue without text or a malformed one
    (players skip those; they are kept as they are)."""
    if _SKIPPED_BLOCK.fullmatch(block[0].content):
        return None
    if "-->" in block[0].content:
        timing, payload = block[0], block[1:]
    elif len(block) > 1 and "-->" in block[1].content:
        timing, payload = block[1], block[2:]
    else:
        return None
    match = _TIMING.fullmatch(timing.content)
    if match is None:
        return None
    if not payload:
        return None
    inner = next((line.eol for line in payload[:-1] if line.eol), payload[-1].eol or fallback)
    return _subtitles.Cue(payload[0].start, payload[-1].end, inner, _seconds(match, 1), _seconds(match, 5))


def _seconds(match: re.Match, first: int) -> float:
    hours, minutes, seconds, millis = (match.group(first + i) for i in range(4))
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(millis) / 1000


FORMAT = DocumentFormat(name="vtt", label="WebVTT subtitles", extensions=(".vtt",), read=read)
