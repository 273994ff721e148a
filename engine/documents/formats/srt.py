"""SubRip (.srt) subtitles: cue numbers, timings and layout kept; each sentence, over however many cues, one unit.

The `srt` library parses (its regular expression also says where each cue's text lies), but it does not write the
file back: `srt.compose` renumbers cues, rewrites timestamps in its own form and normalises line endings. Rendering
therefore splices each cue's new text into the original, so indices and timings stay exactly as written. Grouping
cues into sentences, markup and re-wrapping: engine.documents.formats._subtitles.
"""

from __future__ import annotations

import re

import srt as _srt

from engine.documents.formats import _subtitles, _textcodec
from engine.documents.formats._textdoc import dominant_eol, split_lines
from engine.documents.model import DocumentError, DocumentFormat

_LONE_CR = re.compile(r"\r(?!\n)")
_CONTENT = 5  # the regular expression's group holding a cue's text


def read(data: bytes) -> _subtitles.SubtitleDocument:
    """The sentences of an SRT file; DocumentError for anything that is not one."""
    decoded = _textcodec.decode(data, "subtitle file")
    text = decoded.text
    # The library knows \n and \r\n; an old Mac file's lone \r becomes \n for parsing only (same length, so every
    # position found still points into the original text).
    parse_text = _LONE_CR.sub("\n", text)
    try:
        subtitles = list(_srt.parse(parse_text))
        matches = list(_srt.SRT_REGEX.finditer(parse_text))
    except _srt.SRTParseError as exc:
        where = parse_text.count("\n", 0, exc.expected_start) + 1
        snippet = exc.unmatched_content.strip()[:60]
        raise DocumentError(
            f"this is not a valid SRT subtitle file: line {where} is not a cue number, a timing "
            f"(00:00:01,000 --> 00:00:02,000) or cue text ({snippet!r})"
        ) from None
    except (ValueError, OverflowError) as exc:  # a timestamp out of range
        raise DocumentError(f"this SRT subtitle file has a timing that cannot be read ({exc})") from None
    if len(matches) != len(subtitles):
        raise DocumentError("this SRT subtitle file cannot be read consistently (internal parser mismatch)")
    fallback = dominant_eol(split_lines(text))
    cues = []
    for match, subtitle in zip(matches, subtitles):
        start, end = match.start(_CONTENT), match.end(_CONTENT)
        cues.append(
            _subtitles.Cue(
                start,
                end,
                _cue_eol(text, start, end, fallback),
                subtitle.start.total_seconds(),
                subtitle.end.total_seconds(),
            )
        )
    units, groups = _subtitles.group_units(text, cues)
    return _subtitles.SubtitleDocument(decoded, units, groups)


def _cue_eol(text: str, start: int, end: int, fallback: str) -> str:
    """The line ending a cue's text uses: its own first one, else the one after it, else the file's."""
    inner = re.search(r"\r\n|\r|\n", text[start:end])
    if inner:
        return inner.group()
    after = re.match(r"\r\n|\r|\n", text[end : end + 2])
    return after.group() if after else fallback


FORMAT = DocumentFormat(name="srt", label="SubRip subtitles", extensions=(".srt",), read=read)
