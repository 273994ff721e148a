"""Which line breaks of pasted text are hard wraps inside a sentence (join them) and which are structure (keep).

A break is joined when the line before it does not end a sentence and the line after it continues one: it starts
lower-case, or the line before ends in a hyphenated word ("trans-" / "lation"), or — for a line after it that starts
upper-case or with a digit — the line before ends in a comma or a word that cannot end a sentence ("to", "the")
and is a full-width line of its paragraph (not a short salutation such as "Dear John,").

Never joined: across blank lines, list items (-, *, •, 1., a), (i)), headings (# Title, ALL CAPS, underlined),
quoted (>) or table (|) lines, code (fenced, indented by four or more, or code-like), and poetry-like paragraphs
(three or more short lines of similar length, each starting capitalised).

An unspaced source (Chinese: `join_decisions(lines, spaced=False)`) has no case and no spaces, so there a break is
joined, with nothing between the lines (a space only between two Latin words) and no dehyphenation, when the line
before it does not end a sentence (。！？…： and friends) and is a full-width line of its paragraph: a short line (a
heading such as "第一章 总则", the last line of a paragraph) keeps its break. Chinese list markers (一、 （一） 1． ①)
start items.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

JOIN_SPACE = " "  # "wraps over" + "two lines" → "wraps over two lines"
JOIN_DEHYPHEN = "-"  # "trans-" + "lation" → "translation" (the hyphen was the wrap's, not the word's)
JOIN_TIGHT = ""  # "pre-" + "2000" → "pre-2000" (the hyphen stays, no space)

_ITEM = re.compile(r"^\s*(?:[-*+•·‣◦▪–—]|\(?(?:\d{1,3}|[A-Za-z]|[ivxlcdmIVXLCDM]{1,6})[.)])\s+\S")
_CJK_ITEM = re.compile(
    r"^\s*(?:[一二三四五六七八九十百]+、|[（(][一二三四五六七八九十\d]{1,3}[）)]|\d{1,3}[、．]|[①-⑳])"
)
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|[=\-~^]{3,}\s*$)")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_CODE = re.compile(
    r"[{]\s*$|^\s*[}\]]|==|!=|=>|->|&&|\|\||::|\(\);"
    r"|^\s*(?:def|class|import|return|#include|#define|#!)\b|^\s*from\s+\S+\s+import\b"
    r"|^\s*(?:\$|>>>|//|/\*|\*/)\s|^\s*<[A-Za-z/!][^>]*>|^\s*[\w.\[\]]+\s*[-+*/]?=\s*\S"
)
_STATEMENT = re.compile(r"[=(){}\[\]].*;\s*$")  # "x = f(y);" (a prose semicolon has none of these before it)
_SENTENCE_END = re.compile(r"[.!?…。！？:：][\"'”’»)\]」』）】]*$")
_OPENERS = "\"'“‘«([¿¡"
_WORDS_BEFORE_A_BREAK = (
    "a an the and or but nor so yet of to in on at by for from with without into onto over under about "
    "as than that which who whom whose where when while if because although though whether between "
    "through during before after since until upon within among against toward towards via per is are was "
    "were be been being has have had do does did will would shall should can could may might must not "
    "very more most such this these those its their our your his her my"
)
_CONTINUING_WORDS = frozenset(_WORDS_BEFORE_A_BREAK.split())
_POEM_MAX_LINE = 60


@dataclass(frozen=True)
class Line:
    """One line of the source: where it starts, its text, and the line break that ends it ("" at the end)."""

    start: int
    content: str
    newline: str


def _indent(content: str) -> int:
    expanded = content.expandtabs(4)
    return len(expanded) - len(expanded.lstrip(" "))


def _first_letter(text: str) -> str:
    stripped = text.lstrip(_OPENERS + " \t")
    return stripped[:1]


def _kind(content: str, in_fence: bool) -> str:
    """blank | code | heading | item | quote | table | indented | text."""
    stripped = content.strip()
    if in_fence or _FENCE.match(content):
        return "code"
    if not stripped:
        return "blank"
    if _HEADING.match(content):
        return "heading"
    if _ITEM.match(content) or _CJK_ITEM.match(content):
        return "item"
    if stripped[0] == ">":
        return "quote"
    if stripped[0] == "|":
        return "table"
    if _CODE.search(content) or _STATEMENT.search(content):
        return "code"
    # Chinese has no case: its lines are never "ALL CAPS". Upper-case letters are counted only on a short line
    # that has no lower-case ones (a paragraph's line is long: counting cost ~20 µs for nothing).
    if len(stripped) <= _POEM_MAX_LINE and stripped == stripped.upper() and sum(map(str.isupper, stripped)) > 1:
        return "heading"  # a short line in ALL CAPS
    if _indent(content) >= 4:
        return "indented"  # code, unless it continues a list item
    return "text"


def _is_poem(lines: list[Line]) -> bool:
    """Three or more short lines of similar length, each starting capitalised: keep every line."""
    if len(lines) < 3:
        return False
    lengths = [len(line.content.strip()) for line in lines]
    if max(lengths) > _POEM_MAX_LINE or min(lengths) < 0.35 * max(lengths):
        return False
    return all(_first_letter(line.content).isupper() for line in lines)


def _join_unspaced(left: str, right: str, width: int) -> str | None:
    """Chinese: a line that does not end a sentence and runs (nearly) the paragraph's width continues. Nothing goes
    between the lines, except a space where the break fell between two Latin words ("Python\nscript")."""
    if not left or _SENTENCE_END.search(left) or len(left) < max(0.8 * width, 8):
        return None
    first = right.lstrip()[:1]
    latin = left[-1].isascii() and left[-1].isalnum() and first.isascii() and first.isalnum()
    return JOIN_SPACE if latin else JOIN_TIGHT


def _join(a: Line, b: Line, kind_b: str, width: int, in_item: bool, spaced: bool = True) -> str | None:
    """How line `a` continues into line `b` (a JOIN_* separator), or None to keep the break."""
    if kind_b == "indented" and in_item:
        kind_b = "text"  # an indented continuation of a list item
    if kind_b != "text":
        return None
    left = a.content.rstrip()
    if not spaced:
        return _join_unspaced(left.lstrip(), b.content, width)
    first = _first_letter(b.content)
    if re.search(r"[A-Za-z]-$", left) and not left.endswith("--"):
        if first.islower() and left[-2].islower():
            return JOIN_DEHYPHEN
        return JOIN_TIGHT if first.isalnum() else None
    if _SENTENCE_END.search(left):
        # "e.g." / "etc." / "..." before a lower-case word is not a sentence end
        return JOIN_SPACE if left.endswith(".") and first.islower() else None
    if first.islower():
        return JOIN_SPACE
    words = left.split()
    last_word = words[-1].lower() if words else ""
    continuing = left.endswith(",") or last_word in _CONTINUING_WORDS
    full_width = len(left) >= max(0.6 * width, 30)
    if continuing and full_width and (first.isalnum() or first in "\"'“‘("):
        return JOIN_SPACE
    return None


def join_decisions(lines: list[Line], spaced: bool = True) -> list[str | None]:
    """For each break between line k and k+1: a JOIN_* separator (join them) or None (keep the break).

    `spaced`: the source separates words with spaces (English); False for Chinese (see the module docstring)."""
    result: list[str | None] = [None] * max(len(lines) - 1, 0)
    if not result:  # one line (a typed sentence, a pasted paragraph): no break to decide, no line to classify
        return result
    kinds: list[str] = []
    in_fence = False
    for line in lines:
        kinds.append(_kind(line.content, in_fence))
        if _FENCE.match(line.content):
            in_fence = not in_fence
    k = 0
    while k < len(lines):
        if kinds[k] == "blank":
            k += 1
            continue
        # a paragraph: non-blank lines up to a blank line or a paragraph separator
        end = k
        while end + 1 < len(lines) and kinds[end + 1] != "blank" and lines[end].newline != "\u2029":
            end += 1
        if end > k:
            _paragraph(lines, kinds, k, end, result, spaced)
        k = end + 1
    return result


def _width(block: list[Line]) -> int:
    return max(len(line.content.rstrip()) for line in block)


def _paragraph(
    lines: list[Line], kinds: list[str], first: int, last: int, result: list[str | None], spaced: bool = True
) -> None:
    block = lines[first : last + 1]
    if spaced and _is_poem(block):
        return
    width = max(len(line.content.strip()) for line in block) if not spaced else _width(block)
    in_item = False
    for k in range(first, last):
        if kinds[k] not in ("text", "item") and not (kinds[k] == "indented" and in_item):
            in_item = False
            continue
        if kinds[k] == "item":
            in_item = True
        result[k] = _join(lines[k], lines[k + 1], kinds[k + 1], width, in_item, spaced)
        if result[k] is None:
            in_item = False
