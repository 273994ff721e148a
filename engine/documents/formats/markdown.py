"""Markdown: prose blocks are translated in place; code, HTML, front matter and link definitions are not touched.

markdown-it-py (CommonMark, with GFM tables and strike-through) finds the blocks and their source lines; the units
are the inline text of paragraphs, headings (ATX or setext), list items and block quotes (their paragraphs), and
each table cell. Not touched: fenced and indented code, HTML blocks, front matter (`---` YAML or `+++` TOML at the
top), link reference definitions, `$$` math blocks. Inline, engine.documents.formats._mdinline decides what is
fixed (code spans, URLs), what is markup the translator never sees (emphasis delimiters, link brackets and
destinations, HTML tags, a task item's `[x]`…) and what is prose (link text, emphasised words): a unit has one run
per piece, split "align", so `**bold**` markers stay around the right words. An image's alt text is a unit of its
own (after its paragraph's), written back inside its `![…]`, as HTML's alt is translated.

Rendering splices each unit's new text back into its lines: the `#` markers, list markers and indentation, `>`
quote markers, table pipes and everything between the units stay byte for byte (line endings, encoding and BOM
too, engine.documents.formats._textcodec). A translation with line breaks continues on the block's own
continuation lines (quote markers and list indentation repeated); in a heading or a table cell it stays on one
line; a pipe in a cell's translation is escaped. Emphasis markers or link brackets around a word whose share came
back empty are dropped (they would show as `**` or an empty link), and two code spans whose text between came back
empty stay two (`` `a` `b` `` never becomes the one span `` `a``b` ``). A block whose lines markdown-it has rewritten
(tabs expanded inside a list's indentation) cannot be located exactly and is left untranslated rather than damaged.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt

from engine.documents.formats import _textcodec
from engine.documents.formats._mdinline import ALT, FIXED, MARKUP, inline_spans, label_key
from engine.documents.formats._textdoc import Line, SplicedText, dominant_eol, split_lines
from engine.documents.model import DocumentError, DocumentFormat, Run, Unit, markup

_NEWLINES = re.compile(r"\r\n|\r|\n")
_BLANK_LINES = re.compile(r"\n[ \t]*\n[\s]*")
_UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")
_UNESCAPED_BACKTICK = re.compile(r"(?<!\\)`")
_TASK = re.compile(r"\[[ xX]\][ \t]+")  # a task list item's check box (GitHub)
_FOOTNOTE_DEFINITION = re.compile(r"\[\^[^\]\s]{1,100}\]:[ \t]*")  # `[^1]: ` before a footnote's text
_DELIMITERS = re.compile(r"[*_~]+")
_ALT_SPECIAL = re.compile(r"([\\\[\]|])")  # what a new alt text escapes: it must not end its `![…]` or a table cell


@dataclass(frozen=True)
class _Piece:
    """One source line's share of a unit: content from `start` to `end`, then `eol` (the last one's is unused)."""

    start: int
    end: int
    eol: str
    prefix: str  # what precedes the content on its line: quote markers, list marker or indentation


@dataclass(frozen=True)
class _Alt:
    """An image's alt text inside a unit: run `run`'s characters [start, end), translated as unit `unit`."""

    run: int
    start: int
    end: int
    unit: int


@dataclass(frozen=True)
class _Block:
    pieces: tuple[_Piece, ...]
    one_line: bool  # ATX heading or table cell: a translation's line breaks become spaces
    table_cell: bool = False
    alts: tuple[_Alt, ...] = ()


class MarkdownDocument(SplicedText):
    """A read Markdown file (engine.documents.model.Extracted)."""

    def __init__(self, decoded: _textcodec.Decoded, units: list[Unit], blocks: list[_Block | None], eol: str) -> None:
        super().__init__(decoded, units)
        self._blocks = blocks
        self._eol = eol

    def replacements(self, translations: Sequence[Sequence[str] | None], target: str) -> list[tuple[int, int, str]]:
        """Each translated block's text replaced (see the module docstring)."""
        replacements = []
        for unit, block, new in zip(self._units, self._blocks, translations):
            if block is None:
                continue  # an image's alt text: written with its paragraph
            alts = [(alt, found) for alt in block.alts if (found := translations[alt.unit]) is not None]
            if new is None and not alts:
                continue
            new = list(new if new is not None else (run.text for run in unit.runs))
            for alt, alt_new in reversed(alts):
                text = new[alt.run]
                new[alt.run] = (
                    text[: alt.start] + _ALT_SPECIAL.sub(r"\\\1", " ".join(alt_new[0].split())) + text[alt.end :]
                )
            first, last = block.pieces[0], block.pieces[-1]
            replacements.append((first.start, last.end, self._source(unit, block, new)))
        return replacements

    def _source(self, unit: Unit, block: _Block, new: Sequence[str]) -> str:
        """The source text of a block whose runs now read `new`."""
        pieces = block.pieces
        if "".join(new) == unit.written:
            return self._decoded.text[pieces[0].start : pieces[-1].end]
        parts = _code_spans_apart(unit, _prose_escaped(unit, _without_empty_markup(unit, new)))
        if block.table_cell:
            parts = [part if run.fixed else _UNESCAPED_PIPE.sub(r"\\|", part) for run, part in zip(unit.runs, parts)]
        content = "".join(parts)
        content = _NEWLINES.sub("\n", content).strip()
        if block.one_line:
            return " ".join(line.strip() for line in content.split("\n"))
        lines = _BLANK_LINES.sub("\n", content).split("\n")
        out = [lines[0]]
        for k, line in enumerate(lines[1:], start=1):
            if k < len(pieces):
                eol, prefix = pieces[k - 1].eol, pieces[k].prefix
            elif len(pieces) > 1:
                eol, prefix = pieces[-2].eol, pieces[-1].prefix
            else:
                eol, prefix = pieces[0].eol or self._eol, _continuation(pieces[0].prefix)
            out.append(eol + prefix + line)
        return "".join(out)


def read(data: bytes) -> MarkdownDocument:
    """The prose blocks of a Markdown file; DocumentError for binary data or an undecodable encoding."""
    decoded = _textcodec.decode(data, "Markdown file")
    text = decoded.text
    lines = split_lines(text)
    skipped = _front_matter(lines)
    parse_text = "\n".join("" if i < skipped else line.content for i, line in enumerate(lines))
    try:
        env: dict = {}
        tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(parse_text, env)
    except Exception as exc:  # a parser bug on hostile input is reported, never a traceback
        raise DocumentError(f"this Markdown file cannot be parsed ({type(exc).__name__}: {exc})") from None
    references = frozenset(label_key(label) for label in env.get("references", {}))
    units: list[Unit] = []
    blocks: list[_Block | None] = []
    row_cursor: dict[int, int] = {}  # table row line → where the next cell is looked for
    for index, token in enumerate(tokens):
        if token.type != "inline" or token.map is None or not token.content.strip():
            continue
        parent = tokens[index - 1].type if index else ""
        found = _locate(parent, tokens[index - 1], token, lines, row_cursor)
        if found is None:
            continue
        if parent == "paragraph_open" and token.content.lstrip().startswith("$$"):
            continue  # a display-math block
        block = found
        content = "\n".join(text[p.start : p.end] for p in block.pieces)
        in_item = parent == "paragraph_open" and index >= 2 and tokens[index - 2].type == "list_item_open"
        prefix = (_TASK.match(content) if in_item else None) or (
            _FOOTNOTE_DEFINITION.match(content) if parent == "paragraph_open" else None
        )
        spans = inline_spans(content, references, prefix.end() if prefix else 0)
        runs, alts = _runs(content, spans)
        units.append(Unit(tuple(runs)))
        found_alts = []
        for run_index, start, end in alts:
            alt_unit = Unit((Run(" ".join(runs[run_index].text[start:end].split())),))
            if alt_unit.translatable:
                found_alts.append(_Alt(run_index, start, end, len(units)))
                units.append(alt_unit)
        blocks.append(dataclasses.replace(block, alts=tuple(found_alts)) if found_alts else block)
        blocks.extend(None for _ in found_alts)
    return MarkdownDocument(decoded, units, blocks, dominant_eol(lines))


def _runs(content: str, spans: list[tuple[int, int, str]]) -> tuple[list[Run], list[tuple[int, int, int]]]:
    """The runs of a block's inline content (markup and alt texts next to each other make one markup run), and
    where each alt text lies: (run index, start, end in that run's text)."""
    runs: list[Run] = []
    alts: list[tuple[int, int, int]] = []
    glued: list[str] = []  # the markup run being gathered
    for start, end, kind in spans:
        if kind in (MARKUP, ALT):
            if kind == ALT:
                at = sum(len(piece) for piece in glued)
                alts.append((len(runs), at, at + end - start))
            glued.append(content[start:end])
            continue
        if glued:
            runs.append(markup("".join(glued)))
            glued = []
        runs.append(Run(content[start:end], fixed=kind == FIXED))
    if glued:
        runs.append(markup("".join(glued)))
    return runs, alts


def _front_matter(lines: list[Line]) -> int:
    """How many lines at the top are front matter (--- YAML --- or +++ TOML +++); 0 when there is none."""
    if not lines:
        return 0
    fence = lines[0].content.rstrip()
    if fence not in ("---", "+++"):
        return 0
    closers = ("---", "...") if fence == "---" else ("+++",)
    for i in range(1, len(lines)):
        if lines[i].content.rstrip() in closers:
            return i + 1
    return 0


def _locate(parent: str, opener, token, lines: list[Line], row_cursor: dict[int, int]) -> _Block | None:
    """Where an inline token's content lies in the source lines, or None when it cannot be found exactly."""
    first, end = token.map
    if parent == "paragraph_open" or (parent == "heading_open" and opener.markup in ("=", "-")):
        return _locate_lines(lines[first:end], token.content.split("\n"), one_line=False)
    if parent == "heading_open":
        line = lines[first]
        at = line.content.find(token.content, max(0, len(line.content) - len(line.content.lstrip(" #>")) - 1))
        return _single(line, at, token.content, table_cell=False)
    if parent in ("th_open", "td_open"):
        line = lines[first]
        cursor = row_cursor.get(first, 0)
        content = token.content
        at = line.content.find(content, cursor)
        if at < 0:
            content = content.replace("|", "\\|")
            at = line.content.find(content, cursor)
        if at < 0:
            return None
        row_cursor[first] = at + len(content)
        return _single(line, at, content, table_cell=True)
    return None


def _single(line: Line, at: int, content: str, *, table_cell: bool) -> _Block | None:
    if at < 0:
        return None
    start = line.start + at
    return _Block((_Piece(start, start + len(content), line.eol, line.content[:at]),), True, table_cell)


def _locate_lines(lines: list[Line], contents: list[str], *, one_line: bool) -> _Block | None:
    """Each content line is the end of its source line (the last one's trailing blanks aside)."""
    if len(contents) > len(lines):
        return None
    pieces = []
    for k, content in enumerate(contents):
        line = lines[k]
        source = line.content.rstrip() if k == len(contents) - 1 else line.content
        if not source.endswith(content):
            return None
        offset = len(source) - len(content)
        pieces.append(_Piece(line.start + offset, line.start + len(source), line.eol, line.content[:offset]))
    return _Block(tuple(pieces), one_line)


def _without_empty_markup(unit: Unit, new: Sequence[str]) -> list[str]:
    """`new` with the markup made to work around its new words.

    Emphasis: marks and spaces at the edges of its share move outside the delimiters, because CommonMark only
    sees `**` as emphasis when it touches a word on its inner side (`**很好。**我们` shows its asterisks; `**很好**。
    我们` is bold); a share with no letter or digit left loses its delimiters. Links: `[` `](url)` around an empty
    share are taken out (an invisible link)."""
    parts = list(new)
    runs = unit.runs
    for i in range(1, len(runs) - 1):
        before, run, after = runs[i - 1], runs[i], runs[i + 1]
        if run.fixed or not run.text.strip() or not (before.fixed and after.fixed):
            continue
        if _DELIMITERS.fullmatch(before.text) and after.text == before.text:
            share = parts[i]
            start, end = 0, len(share)
            while start < end and _edge(share[start]):
                start += 1
            while end > start and _edge(share[end - 1]):
                end -= 1
            if not any(ch.isalnum() for ch in share[start:end]):
                parts[i - 1] = parts[i + 1] = ""
                continue
            parts[i - 1], parts[i], parts[i + 1] = (
                share[:start] + before.text,
                share[start:end],
                after.text + share[end:],
            )
        elif before.text == "[" and after.text[:2] in ("](", "][") and not parts[i].strip():
            parts[i - 1] = parts[i + 1] = ""
    return parts


def _prose_escaped(unit: Unit, parts: list[str]) -> list[str]:
    """`parts` with each backtick the model wrote in a translated prose run escaped. The model reads the code spans
    (fixed runs, backticks included) as context and may copy a backtick into the prose around them; written as it
    came, it would open or close a code span and change which text is code (a real file: `path`, `'..'` and `'.'`
    became the one span "path``'.'" and a code span of Chinese)."""
    return [
        _UNESCAPED_BACKTICK.sub(r"\\`", part) if not run.fixed and part != run.text else part
        for run, part in zip(unit.runs, parts)
    ]


def _code_spans_apart(unit: Unit, parts: list[str]) -> list[str]:
    """`parts` with a space put back between two code spans (or any two backtick-edged runs) whose text between
    came back empty: `` `a``b` `` would read as one span."""
    last = -1
    for i, part in enumerate(parts):
        if not part:
            continue
        if last >= 0 and i > last + 1 and parts[last].endswith("`") and part.startswith("`"):
            parts[i] = " " + part
        last = i
    return parts


def _edge(ch: str) -> bool:
    """What may not touch an emphasis delimiter's inner side: whitespace and punctuation (ASCII, CJK, full-width)."""
    return ch.isspace() or unicodedata.category(ch).startswith("P")


def _continuation(prefix: str) -> str:
    """The prefix of a further line in a block whose first line began with `prefix`: quote markers kept, list
    markers turned into indentation."""
    return "".join(ch if ch in "> \t" else " " for ch in prefix)


FORMAT = DocumentFormat(name="markdown", label="Markdown", extensions=(".md", ".markdown", ".mdown", ".mkd"), read=read)
