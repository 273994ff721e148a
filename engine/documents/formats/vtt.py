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
    cues = []
    for block in _blocks(lines):
        cue = _cue(block, fallback)
        if cue is not None:
            cues.append(cue)
    units, groups = _subtitles.group_units(text, cues, entities=True)
    return _subtitles.SubtitleDocument(decoded, units, groups, escape=True)


def _blocks(lines: list[Line]) -> list[list[Line]]:
    """The blocks after the header: runs of non-blank lines."""
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
    return blocks


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
    # A line with "-->" starts another cue (one without a blank line before it): the text stops there.
    for k, line in enumerate(payload):
        if "-->" in line.content:
            payload = payload[:k]
            break
    if not payload:
        return None
    inner = next((line.eol for line in payload[:-1] if line.eol), payload[-1].eol or fallback)
    return _subtitles.Cue(payload[0].start, payload[-1].end, inner, _seconds(match, 1), _seconds(match, 5))


def _seconds(match: re.Match, first: int) -> float:
    hours, minutes, seconds, millis = (match.group(first + i) for i in range(4))
    return int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds) + int(millis) / 1000


FORMAT = DocumentFormat(name="vtt", label="WebVTT subtitles", extensions=(".vtt",), read=read)
