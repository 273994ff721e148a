"""Subtitle cues → sentence units and back: what SRT and WebVTT share.

A sentence often runs over several cues ("I was going to" / "the station."). Consecutive cues are grouped until
one ends a sentence (. ! ? … 。！？ ♪, closing quotes allowed), the next starts more than MAX_GAP_S later,
or MAX_GROUP cues are gathered; a group is ONE unit, translated as one sentence, with one run per cue (split
"length", so each cue gets its share of the translation and keeps its timing). A cue's own lines are joined for the
translator (a space between words, nothing between two CJK characters).

Markup stays in place: tags and override codes at a cue's start or end (`{\\an8}<i>` … `</i>`, `<v Roger>`) are kept
around its new text; tags, WebVTT timestamps and override codes inside a cue's text are markup runs
(engine.documents.model.markup): the translator never sees them, as it never sees an HTML tag, so a sentence reads
the same to it in every format; a tag closed at a line's end and opened again on the next (`<i>one</i>` /
`<i>two</i>`) is taken out of the runs altogether. In a one-cue unit the tags are placed by meaning ("align", as in
HTML: the bold word's own translation is found in the sentence's); over several cues by length. WebVTT's character
references are decoded for the translator (it reads "Tom & Jerry") and `&`, `<`, `>` are escaped again in what is
written.

A cue of several lines gets back as many lines, broken at the most even widths after punctuation or a space (or
between CJK characters), each at least MIN_LINE columns. Dialogue (a cue whose later lines start with a dash, one
line per speaker) is not one text: each speaker's line is a unit of its own, never grouped with other cues, and
comes back on its own line after its own dash; a dash at a cue's start is kept as markup is, never translated. A
one-line cue is re-wrapped into at most two lines of about MAX_COLUMNS display columns (a CJK character is two: 16
per line for Chinese), broken after punctuation or a space where both lines still fit. A cue whose text comes
back unchanged is written exactly as it was, so an identity translation gives back the same bytes. No cue is left
empty: when a share comes back blank, the group's text is shared out again by the cues' source lengths (a cue that
still gets none keeps its own text).
"""

from __future__ import annotations

import dataclasses
import html
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from engine.documents.formats import _textcodec
from engine.documents.formats._textdoc import SplicedText, split_lines
from engine.documents.model import Run, Unit, markup

MAX_GROUP = 6
MAX_GAP_S = 2.0
MIN_LINE = 4  # display columns: a multi-line cue is not re-broken into lines narrower than this
# display columns: re-breaking a cue in its line count, a break after punctuation or a space this much further from
# the even width still wins over one between two CJK characters (我喜欢绿茶。/明天见。, not 我喜欢绿/茶。明天见。)
CJK_BREAK_COST = 4
MAX_COLUMNS = {"zh": 32}  # display columns per line, by target language
DEFAULT_COLUMNS = 42

_MARKUP = r"<[^<>\r\n]*>|\{\\[^{}\r\n]*\}"
_TAG = re.compile(_MARKUP)
# What in _TAG is syntax: a tag (<i>, </b>, <font color="red">, <c.yellow>, <v Roger>), a WebVTT timestamp
# (<00:00:13.000>) or an override code ({\\an8})
_SYNTAX = re.compile(r"</?[A-Za-z][^<>\r\n]*>|<(?:\d+:)?\d{2}:\d{2}\.\d{3}>|\{\\[^{}\r\n]*\}")
_LEAD = re.compile(rf"(?:\s*(?:{_MARKUP}))*\s*")
# A speaker's dash (not a minus before a number, not "--"), and the markup and blanks after it
_DASH = re.compile(rf"[-\u2010\u2013\u2014](?![-\u2010\u2013\u2014\d.,])[ \t]*(?:(?:{_MARKUP})[ \t]*)*")
_SPEAKER_LINE = re.compile(rf"[ \t]*(?:(?:{_MARKUP})[ \t]*)*{_DASH.pattern}")
_EMPTY_PAIR = re.compile(r"<([A-Za-z][\w-]*)(?:[ .][^<>\r\n]*)?>(\s*)</\1>|</([A-Za-z][\w-]*)>(\s*)<\3>")
# `<i>one</i>` / `<i>two</i>`: the same tag closed at a line's end and opened again on the next says nothing
_REOPENED = re.compile(r"</([A-Za-z][\w-]*)>(\s*(?:\r\n|\r|\n)\s*)<\1>")
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_SENTENCE_END = re.compile(r"[.!?…。！？♪][\"'”’»)\]」』）】]*\Z")
_NEWLINES = re.compile(r"\s*(?:\r\n|\r|\n)\s*")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_BREAK_AFTER = frozenset("，。、！？；：,.!?;:…)）」』】”’")


@dataclass(frozen=True)
class Cue:
    """A cue's text in the decoded file: [start, end) (its last line ending excluded), the line ending used inside
    it, and its timing in seconds (for the gap rule)."""

    start: int
    end: int
    eol: str
    begin_s: float
    end_s: float
    closes: bool = False  # a sentence stops here (text the reader could not place follows it)
    dialogue: bool = False  # one speaker's line of a dialogue cue: a unit of its own, kept on its own line(s)


def replace_cue(cue: Cue, **changes: object) -> Cue:
    """`cue` with some fields changed."""
    return dataclasses.replace(cue, **changes)  # type: ignore[arg-type]


def dialogue_cues(text: str, cues: Sequence[Cue]) -> list[Cue]:
    """`cues` with each dialogue cue (a later line starts with a speaker's dash) split into one cue per speaker:
    the lines from one dash to the next, with the cue's timing."""
    out: list[Cue] = []
    for cue in cues:
        lines = split_lines(text[cue.start : cue.end])
        starts = [k for k, line in enumerate(lines) if k == 0 or _SPEAKER_LINE.match(line.content)]
        if len(starts) < 2:
            out.append(cue)
            continue
        for a, b in zip(starts, [*starts[1:], len(lines)]):
            first, last = lines[a], lines[b - 1]
            out.append(replace_cue(cue, start=cue.start + first.start, end=cue.start + last.end, dialogue=True))
    return out


@dataclass(frozen=True)
class _Part:
    """One cue of a unit: its markup around the text and which of the unit's runs are its own."""

    cue: Cue
    lead: str
    trail: str
    core: str  # the text between the markup, as written (line breaks and all)
    first_run: int
    run_count: int
    lines: int = 1  # how many lines the cue's text had: it gets as many back


@dataclass(frozen=True)
class Group:
    parts: tuple[_Part, ...]


class SubtitleDocument(SplicedText):
    """A read SRT or WebVTT file (engine.documents.model.Extracted)."""

    def __init__(
        self,
        decoded: _textcodec.Decoded,
        units: list[Unit],
        groups: list[Group],
        escape: bool = False,
        warnings: Sequence[str] = (),
    ) -> None:
        super().__init__(decoded, units)
        self._groups = groups
        self._escape = escape
        self._warnings = tuple(warnings)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the reader kept without translating (a stray line between cues), for the job to report."""
        return self._warnings

    def replacements(self, translations: Sequence[Sequence[str] | None], target: str) -> list[tuple[int, int, str]]:
        """Each translated sentence's cues rewritten (see the module docstring)."""
        replacements = []
        for unit, group, new in zip(self._units, self._groups, translations):
            if new is not None:
                replacements.extend(render_group(group, unit, new, target, self._escape))
        return replacements


def group_units(text: str, cues: Sequence[Cue], entities: bool = False) -> tuple[list[Unit], list[Group]]:
    """The sentence units of `cues` (see the module docstring) and how to write each back. `entities`: the format
    writes character references (WebVTT's &amp;): the translator sees the characters, and rendering escapes."""
    units: list[Unit] = []
    groups: list[Group] = []
    pending: list[tuple[Cue, str, str, str]] = []

    def flush() -> None:
        if not pending:
            return
        runs: list[Run] = []
        parts = []
        for k, (cue, lead, core, trail) in enumerate(pending):
            pieces = _core_runs(_joined(_REOPENED.sub(r"\2", core)), entities)
            if k + 1 < len(pending):
                pieces = _with_separator(pieces, _separator(core, pending[k + 1][2]))
            lines = len(_NEWLINE.findall(core)) + 1
            parts.append(_Part(cue, lead, trail, core, len(runs), len(pieces), lines))
            runs.extend(pieces)
        # One cue: its inline tags are placed by meaning, as HTML's are (<b> stays on the bold word); over several
        # cues each cue gets its share by length, so it keeps about its part of the sentence at its timing.
        units.append(Unit(tuple(runs), split="align" if len(parts) == 1 else "length"))
        groups.append(Group(tuple(parts)))
        pending.clear()

    for index, cue in enumerate(cues):
        payload = text[cue.start : cue.end]
        lead = m.group() if (m := _LEAD.match(payload)) is not None else ""  # it always matches (maybe empty)
        dash = _DASH.match(payload, len(lead))
        if dash is not None:
            lead = payload[: dash.end()]
        rest = payload[len(lead) :]
        trail = _trail(rest)
        core = rest[: len(rest) - len(trail)]
        plain = _ENTITY.sub(" ", _TAG.sub("", core))
        if not any(ch.isalnum() for ch in plain):
            flush()  # nothing to translate (music notes, an empty cue): kept as it is, and it ends a sentence
            continue
        if cue.dialogue:
            flush()  # a speaker's line is a text of its own
        pending.append((cue, lead, core, trail))
        following = cues[index + 1] if index + 1 < len(cues) else None
        if (
            cue.dialogue
            or cue.closes
            or (following is not None and following.dialogue)
            or _SENTENCE_END.search(plain.rstrip())
            or following is None
            or following.begin_s - cue.end_s > MAX_GAP_S
            or len(pending) >= MAX_GROUP
        ):
            flush()
    flush()
    return units, groups


def render_group(
    group: Group, unit: Unit, new: Sequence[str], target: str, escape: bool = False
) -> list[tuple[int, int, str]]:
    """(start, end, text) replacements writing `new` (one string per run of `unit`) into the group's cues."""
    shares = []
    for part in group.parts:
        shares.append(list(new[part.first_run : part.first_run + part.run_count]))
    _fill_blank_cues(group, unit, shares)
    columns = MAX_COLUMNS.get(target.split("-")[0].lower(), DEFAULT_COLUMNS)
    out = []
    for part, cue_new in zip(group.parts, shares):
        runs = unit.runs[part.first_run : part.first_run + part.run_count]
        original = "".join(run.text for run in runs).strip()
        if "".join(cue_new).strip() == original:
            continue  # unchanged: the cue stays byte for byte
        if escape:
            cue_new = [text if run.fixed else _escaped(text) for run, text in zip(runs, cue_new)]
        text = _tidy("".join(cue_new)).strip()
        if not _TAG.sub("", text).strip():
            continue  # never an empty cue: one left without text keeps its own
        body = part.cue.eol.join(_wrap(text, columns, part.lines, fixed=part.cue.dialogue))
        out.append((part.cue.start, part.cue.end, part.lead + body + part.trail))
    return out


def _tidy(text: str) -> str:
    """Markup a translation left empty taken out: `<i></i>`, and `</i><i>` where the text between went elsewhere."""
    previous = None
    while previous != text:
        previous = text
        text = _EMPTY_PAIR.sub(lambda m: m.group(2) or m.group(4) or "", text)
    return text


def _trail(text: str) -> str:
    """The markup (and blanks) at the end of `text`, read backwards so a long line stays linear."""
    end = len(text)
    while True:
        while end and text[end - 1].isspace():
            end -= 1
        if end and text[end - 1] in ">}":
            opener = text.rfind("<" if text[end - 1] == ">" else "{", 0, end)
            if opener >= 0 and _TAG.fullmatch(text, opener, end):
                end = opener
                continue
        return text[end:]


def _joined(core: str) -> str:
    """A cue's lines as one line for the translator."""
    return _NEWLINES.sub(lambda m: _separator_between(core, m.start(), m.end()), core)


def _separator_between(text: str, start: int, end: int) -> str:
    before = text[start - 1] if start > 0 else ""
    after = text[end] if end < len(text) else ""
    return "" if _wide(before) and _wide(after) else " "


def _separator(core: str, following: str) -> str:
    plain, next_plain = _TAG.sub("", core).rstrip(), _TAG.sub("", following).lstrip()
    return "" if plain and next_plain and _wide(plain[-1]) and _wide(next_plain[0]) else " "


def _core_runs(text: str, entities: bool) -> list[Run]:
    """A cue's text: its inner tags and override codes as markup the translator never sees (anything else in angle
    brackets, "a <3 b >", as a fixed run it sees); character references decoded where the format has them."""
    runs = []
    pos = 0
    for match in _TAG.finditer(text):
        if match.start() > pos:
            runs.append(_prose(text[pos : match.start()], entities))
        tag = match.group()
        runs.append(markup(tag) if _SYNTAX.fullmatch(tag) else Run(tag, fixed=True))
        pos = match.end()
    if pos < len(text):
        runs.append(_prose(text[pos:], entities))
    return runs


def _prose(text: str, entities: bool) -> Run:
    return Run(html.unescape(text) if entities else text)


def _with_separator(runs: list[Run], separator: str) -> list[Run]:
    """The separator goes at the end of the cue's last run: appended to it when it is prose, else as a run of its
    own (a fixed run must stay verbatim)."""
    if not separator:
        return runs
    if runs and not runs[-1].fixed:
        return [*runs[:-1], Run(runs[-1].text + separator)]
    return [*runs, Run(separator)]


def _fill_blank_cues(group: Group, unit: Unit, shares: list[list[str]]) -> None:
    """When a cue's share came back blank, share the group's whole text out again among its cues by their source
    lengths (each gets at least one character where there are enough), cutting at spaces or punctuation nearby."""
    prose = [[i for i in range(part.run_count) if not unit.runs[part.first_run + i].fixed] for part in group.parts]
    cues = [k for k in range(len(shares)) if prose[k]]
    if all(any(shares[k][i].strip() for i in prose[k]) for k in cues):
        return
    text = _NEWLINES.sub(" ", "".join(shares[k][i] for k in cues for i in prose[k])).strip()
    weights = [
        max(1, len("".join(unit.runs[group.parts[k].first_run + i].text for i in prose[k]).strip())) for k in cues
    ]
    total = sum(weights)
    bounds = [0]
    acc = 0
    for j, weight in enumerate(weights[:-1], start=1):
        acc += weight
        ideal = round(len(text) * acc / total)
        lo, hi = bounds[-1] + 1, len(text) - (len(cues) - j)
        bounds.append(_cut_near(text, ideal, lo, hi) if lo <= hi else min(len(text), bounds[-1] + 1))
    bounds.append(len(text))
    for j, k in enumerate(cues):
        piece = text[bounds[j] : bounds[j + 1]].strip()
        for n, i in enumerate(prose[k]):
            shares[k][i] = piece if n == 0 else ""


def _cut_near(text: str, ideal: int, lo: int, hi: int) -> int:
    """A cut in [lo, hi] near `ideal`: after a space or punctuation where one is close, else between two CJK
    characters, else at `ideal` itself."""
    ideal = min(max(ideal, lo), hi)
    window = 3 if any(_wide(ch) for ch in text) else 10
    best, best_score = ideal, None
    for i in range(max(lo, ideal - window), min(hi, ideal + window) + 1):
        before, after = text[i - 1], text[i] if i < len(text) else " "
        if (before.isspace() or before in _BREAK_AFTER) and after not in _BREAK_AFTER:
            penalty = 0
        elif _wide(before) and _wide(after) and after not in _BREAK_AFTER:
            penalty = 2
        else:
            penalty = 20
        score = abs(i - ideal) + penalty
        if best_score is None or score < best_score:
            best, best_score = i, score
    return best


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _wide(ch: str) -> bool:
    return bool(ch) and unicodedata.east_asian_width(ch) in ("W", "F")


def _width(text: str) -> int:
    """Display columns, markup not counted and a character reference counted as the one character it is."""
    text = _ENTITY.sub("x", _TAG.sub("", text))
    return sum(2 if _wide(ch) else 1 for ch in text)


def _wrap(text: str, columns: int, lines: int = 1, fixed: bool = False) -> list[str]:
    """The cue's new text as lines: `lines` of them at the most even widths when the cue had several; one line for
    `fixed` (a speaker's line) or when it fits `columns`, else at most two lines of about `columns` columns."""
    text = _NEWLINES.sub(lambda m: _separator_between(text, m.start(), m.end()), text)
    if lines > 1 and not fixed:
        return _even_lines(text, lines)
    if fixed or _width(text) <= columns:
        return [text]
    cut = _best_cut(text, columns)
    if cut is None:
        return [text]
    first, second = text[:cut].rstrip(), text[cut:].lstrip()
    return [first, second] if first and second else [text]


def _even_lines(text: str, lines: int) -> list[str]:
    """`text` in `lines` lines (fewer when it is too short for each to have MIN_LINE columns), cut at allowed
    breaks (see _best_cut) nearest the even widths, after punctuation or a space rather than inside a CJK run
    (CJK_BREAK_COST)."""
    total = _width(text)
    lines = max(1, min(lines, total // MIN_LINE))
    breaks = _breaks(text)
    out = []
    start = 0
    for k in range(1, lines):
        ideal = total * k / lines
        choices = [(abs(width - ideal) + _break_cost(text, i), i) for i, width in breaks if i > start]
        if not choices:
            break
        _, cut = min(choices)
        piece = text[start:cut].strip()
        if piece:
            out.append(piece)
        start = cut
    last = text[start:].strip()
    if last:
        out.append(last)
    return out or [text]


def _break_cost(text: str, i: int) -> int:
    """0 for a break after a space or a punctuation mark, CJK_BREAK_COST for one between two CJK characters."""
    before = text[i - 1]
    return 0 if before.isspace() or before in _BREAK_AFTER else CJK_BREAK_COST


def _breaks(text: str) -> list[tuple[int, int]]:
    """(index, display columns before it) of the places a line may break: after a space or a punctuation mark,
    or between two CJK characters; never inside markup or a word."""
    inside = _tag_positions(text)
    references = {match.end() - 1 for match in _ENTITY.finditer(text)}
    found = []
    width = 0
    for i in range(1, len(text)):
        ch = text[i - 1]
        if (i - 1) in references:
            width += 1
        elif (i - 1) not in inside:
            width += 2 if _wide(ch) else 1
        if (i - 1) in inside and i in inside and text[i - 1] != ">":
            continue
        before, after = text[i - 1], text[i]
        if after in _BREAK_AFTER or (before.isspace() and after.isspace()):
            continue
        if before.isspace() or before in _BREAK_AFTER or (_wide(before) and _wide(after)):
            found.append((i, width))
    return found


def _best_cut(text: str, columns: int) -> int | None:
    """Where to break `text` in two: among the allowed breaks (`_breaks`), one that leaves both lines within
    `columns`, preferring punctuation and spaces over a break between two CJK characters, then the most even halves.
    None when there is no allowed break."""
    total = _width(text)
    best, best_score = None, None
    for i, width in _breaks(text):
        before = text[i - 1]
        penalty = 0 if before.isspace() or before in _BREAK_AFTER else 24  # else: between two CJK characters
        fits = max(width, total - width) <= columns
        score = (0 if fits else 1000) + penalty + abs(total - 2 * width)
        if best_score is None or score < best_score:
            best, best_score = i, score
    return best


def _tag_positions(text: str) -> set[int]:
    """Indices of the characters inside markup (the `<` through the `>`) and character references."""
    inside: set[int] = set()
    for match in re.finditer(f"{_MARKUP}|{_ENTITY.pattern}", text):
        inside.update(range(match.start(), match.end()))
    return inside
