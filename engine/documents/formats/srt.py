"""SubRip (.srt) subtitles: cue numbers, timings and layout kept; each sentence, over however many cues, one unit.

The `srt` library's regular expression says where each cue and its text lie, but its parser refuses a whole file
for one stray line and takes text after a blank line into the cue before it (a player ends the cue at the blank
line), and `srt.compose` renumbers cues and rewrites timestamps. So cues are found with the library's expression
only, and rendering splices each cue's new text into the original: indices and timings stay exactly as written.
Whatever is not a cue (a stray line between cues, a damaged timing, the text after a blank line inside a cue) is
kept verbatim in its place, never translated, never dropped, and reported in `warnings`. Grouping cues into
sentences, dialogue lines, markup and line breaking: engine.documents.formats._subtitles.
"""

from __future__ import annotations

import re

import srt as _srt

from engine.documents.formats import _subtitles, _textcodec
from engine.documents.formats._textdoc import dominant_eol, split_lines
from engine.documents.model import DocumentError, DocumentFormat

_LONE_CR = re.compile(r"\r(?!\n)")
_CONTENT = 5  # the regular expression's group holding a cue's text
_BLANK_LINE = re.compile(r"\n[ \t]*\n")  # in the parse text, where every line ending ends with \n


def read(data: bytes) -> _subtitles.SubtitleDocument:
    """The sentences of an SRT file; DocumentError for a file with no cue at all."""
    decoded = _textcodec.decode(data, "subtitle file")
    text = decoded.text
    # The expression knows \n and \r\n; an old Mac file's lone \r becomes \n for parsing only (same length, so every
    # position found still points into the original text).
    parse_text = _LONE_CR.sub("\n", text)
    fallback = dominant_eol(split_lines(text))
    cues: list[_subtitles.Cue] = []
    stray = _Stray(parse_text)
    pos = 0
    for match in _srt.SRT_REGEX.finditer(parse_text):
        if stray.add(pos, match.start()) and cues:
            cues[-1] = _subtitles.replace_cue(cues[-1], closes=True)  # a sentence does not run over stray text
        pos = match.end()
        try:
            begin = _srt.srt_timestamp_to_timedelta(match.group(2)).total_seconds()
            end_s = _srt.srt_timestamp_to_timedelta(match.group(3)).total_seconds()
        except (ValueError, OverflowError):  # a timing out of range: the cue is kept as it is
            stray.add(match.start(), match.end(), "a cue whose timing cannot be read")
            if cues:
                cues[-1] = _subtitles.replace_cue(cues[-1], closes=True)
            continue
        start, end = match.start(_CONTENT), match.end(_CONTENT)
        blank = _BLANK_LINE.search(parse_text, start, end)
        closes = False
        if blank is not None:  # a blank line ends a cue: what follows is not part of it
            closes = stray.add(blank.end(), end)
            end = blank.start()
        cues.append(_subtitles.Cue(start, end, _cue_eol(text, start, end, fallback), begin, end_s, closes=closes))
    stray.add(pos, len(parse_text))
    if not cues and stray.found:
        raise DocumentError(
            "this is not a valid SRT subtitle file: it has no cue (a number, a timing such as "
            f"00:00:01,000 --> 00:00:02,000, then its text); line {stray.first_line} reads {stray.first_text!r}"
        )
    units, groups = _subtitles.group_units(text, _subtitles.dialogue_cues(text, cues))
    return _subtitles.SubtitleDocument(decoded, units, groups, warnings=stray.warnings())


class _Stray:
    """Text outside every cue: where it is, for the warnings (it stays in the file as it was)."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._found: list[tuple[int, str]] = []  # (line number, what)
        self.first_text = ""

    def add(self, start: int, end: int, what: str = "") -> bool:
        """Note [start, end) when it holds more than blanks; whether it did."""
        piece = self._text[start:end]
        if not piece.strip():
            return False
        lead = len(piece) - len(piece.lstrip())
        line = self._text.count("\n", 0, start + lead) + 1
        if not self._found:
            self.first_text = _snippet(piece)
        self._found.append((line, what or f"text outside any cue ({_snippet(piece)!r})"))
        return True

    @property
    def found(self) -> bool:
        return bool(self._found)

    @property
    def first_line(self) -> int:
        return self._found[0][0]

    def warnings(self) -> tuple[str, ...]:
        named = [f"line {line}: {what} was kept as it was, not translated" for line, what in self._found[:10]]
        if len(self._found) > 10:
            named.append(f"… and {len(self._found) - 10} more places that are not cues were kept as they were")
        return tuple(named)


def _snippet(piece: str) -> str:
    text = " ".join(piece.split())
    return text if len(text) <= 60 else text[:59] + "…"


def _cue_eol(text: str, start: int, end: int, fallback: str) -> str:
    """The line ending a cue's text uses: its own first one, else the one after it, else the file's."""
    inner = re.search(r"\r\n|\r|\n", text[start:end])
    if inner:
        return inner.group()
    after = re.match(r"\r\n|\r|\n", text[end : end + 2])
    return after.group() if after else fallback


FORMAT = DocumentFormat(name="srt", label="SubRip subtitles", extensions=(".srt",), read=read)
