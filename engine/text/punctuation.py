"""Punctuation of the model's output, per target script (`rules_for`): each direction leaks the other's marks.

Han target (en→zh). The model mixes half-width ! ? , : ; ( ) with full-width 。.

A half-width mark becomes full-width (！？，：；（）, three or more dots ……) when the nearest non-space character
before or after it on its line is CJK (an ideograph, kana, or CJK/full-width punctuation). Numbers (3,000; 1:2;
12:30), Latin text, URLs and e-mail addresses have no CJK character next to their marks, so they stay as they are.
Spaces between a converted mark and its neighbours are dropped: a full-width mark carries its own spacing.

Every decision looks only at the output so far and the next non-space character, which is what makes streaming
possible: `normalize(stable_prefix(p))` is a prefix of `normalize(t)` for any prefix `p` of a text `t`.

Latin target (zh→en). The model copies stray full-width marks from the Chinese source into English ("Hello，world。").
`to_ascii` makes ，、。！？：；（） and the ideographic space ASCII, with English spacing (", " after a comma, a space
before "(", none before a closing mark; "3，000" stays "3,000"), and a run of two or more … becomes "...". A mark
next to a Chinese character (a name the model left in Chinese) stays full-width: there it is right. The same
streaming property holds with `ascii_stable_prefix`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

FULL_WIDTH = {",": "，", ":": "：", ";": "；", "!": "！", "?": "？", "(": "（", ")": "）"}
ELLIPSIS = "……"
_SPACES = " \t"
# What a later character can still change: marks whose next neighbour is not known yet, dots that may become an
# ellipsis, and spaces that a following mark may absorb.
_VOLATILE = set(FULL_WIDTH) | {"."} | set(_SPACES)


def is_cjk(ch: str | None) -> bool:
    """CJK ideographs, kana, bopomofo, CJK symbols and punctuation, full-width forms (Hangul excluded: Korean
    uses half-width punctuation)."""
    if not ch:
        return False
    o = ord(ch)
    return (
        0x2E80 <= o <= 0x312F  # radicals, CJK symbols and punctuation, kana, bopomofo
        or 0x31A0 <= o <= 0x31FF
        or 0x3400 <= o <= 0x4DBF
        or 0x4E00 <= o <= 0x9FFF
        or 0xF900 <= o <= 0xFAFF
        or 0xFE30 <= o <= 0xFE4F
        or 0xFF00 <= o <= 0xFFEF
        or 0x20000 <= o <= 0x3FFFF
    )


def has_words(text: str) -> bool:
    """A letter or digit anywhere in `text`: a sentence translated as nothing then lost something (punctuation alone
    loses nothing). The one rule the guards, the document job and the API keep empty translations by."""
    return any(ch.isalnum() for ch in text)


def _next_char(text: str, i: int) -> str | None:
    """The first non-space character at or after `i` on the same line (None at a line end)."""
    n = len(text)
    while i < n and text[i] in _SPACES:
        i += 1
    if i >= n or text[i] in "\r\n":
        return None
    return text[i]


def _trailing_spaces(out: list[str]) -> int:
    k = 0
    while k < len(out) and out[-1 - k] in _SPACES:
        k += 1
    return k


def normalize(text: str) -> str:
    """`text` with the half-width marks next to CJK characters made full-width (see the module docstring)."""
    if not any(is_cjk(ch) for ch in text):
        return text
    out: list[str] = []  # one entry per source character (or per converted mark)
    opened: list[bool] = []  # per open "(": whether it was made full-width (then so is its ")")
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        end = i + 1
        if ch == ".":
            while end < n and text[end] == ".":
                end += 1
            if end - i < 3:
                out.append(text[i:end])
                i = end
                continue
        elif ch not in FULL_WIDTH:
            out.append(ch)
            i = end
            continue
        spaces = _trailing_spaces(out)
        prev = out[-1 - spaces][-1] if spaces < len(out) else None
        near_cjk = is_cjk(prev) or is_cjk(_next_char(text, end))
        if ch == "(":
            opened.append(near_cjk)
        elif ch == ")" and opened:
            near_cjk = opened.pop()
        if not near_cjk:
            out.append(text[i:end])
            i = end
            continue
        if spaces:
            del out[-spaces:]
        out.append(ELLIPSIS if ch == "." else FULL_WIDTH[ch])
        i = end
        while i < n and text[i] in _SPACES:
            i += 1  # a full-width mark carries its own spacing
    return "".join(out)


def stable_prefix(text: str) -> str:
    """The longest prefix of `text` whose normalised form no later character can change (streaming)."""
    end = len(text)
    while end and text[end - 1] in _VOLATILE:
        end -= 1
    return text[:end]


# -- latin target -----------------------------------------------------------------------------------------------------
TO_ASCII = {"，": ",", "、": ",", "。": ".", "！": "!", "？": "?", "：": ":", "；": ";", "（": "(", "）": ")"}
_LATIN_SPACES = " \t\u3000"
_NO_SPACE_BEFORE = set(".,!?:;)]}\"'”’…%") | set(TO_ASCII)  # after a converted mark, these follow without a space
_LATIN_VOLATILE = set(TO_ASCII) | set(_LATIN_SPACES) | {"…"}


def _is_cjk_letter(ch: str | None) -> bool:
    """A Chinese/Japanese character (not a punctuation mark): a full-width mark next to one is in Chinese text."""
    return bool(ch) and is_cjk(ch) and unicodedata.category(ch).startswith("L")  # type: ignore[arg-type]


def _next_on_line(text: str, i: int, spaces: str) -> tuple[str | None, int]:
    """The first character at or after `i` that is not in `spaces`, on the same line (None at a line end)."""
    n = len(text)
    while i < n and text[i] in spaces:
        i += 1
    if i >= n or text[i] in "\r\n":
        return None, i
    return text[i], i


def to_ascii(text: str) -> str:
    """`text` with full-width marks outside Chinese made ASCII, spaced the English way (see the module docstring)."""
    if not any(ch in _LATIN_VOLATILE and ch not in " \t" for ch in text):
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "…":
            end = i
            while end < n and text[end] == "…":
                end += 1
            prev = out[-1][-1] if out and out[-1] else None
            nxt, _ = _next_on_line(text, end, " \t")
            keep = end - i < 2 or _is_cjk_letter(prev) or _is_cjk_letter(nxt)
            out.append(text[i:end] if keep else "...")
            i = end
            continue
        if ch not in TO_ASCII and ch != "\u3000":
            out.append(ch)
            i += 1
            continue
        spaces = _trailing_spaces_of(out)
        prev = out[-1 - spaces][-1] if spaces < len(out) and out[-1 - spaces] else None
        nxt, after = _next_on_line(text, i + 1, _LATIN_SPACES)
        if _is_cjk_letter(prev) or _is_cjk_letter(nxt):
            out.append(ch)
            i += 1
            continue
        if ch == "\u3000":
            out.append(" ")
            i += 1
            continue
        mark = TO_ASCII[ch]
        if mark == "(":
            if out and spaces == 0 and prev is not None and not prev.isspace() and prev not in "([{\"'“‘":
                out.append(" ")
            out.append(mark)
            i = after if nxt is not None else i + 1  # "（ word" → "(word"
            continue
        if spaces:
            del out[-spaces:]  # "word ，" → "word,"
        out.append(mark)
        gap = after > i + 1
        digits = mark in ",:" and prev is not None and prev.isdigit() and nxt is not None and nxt.isdigit() and not gap
        if nxt is not None and nxt not in _NO_SPACE_BEFORE and not digits:
            out.append(" ")
            i = after
        else:
            i = after if nxt is not None and nxt in _NO_SPACE_BEFORE else i + 1
    return "".join(out)


def _trailing_spaces_of(out: list[str]) -> int:
    k = 0
    while k < len(out) and out[-1 - k] in (" ", "\t"):
        k += 1
    return k


def ascii_stable_prefix(text: str) -> str:
    """The longest prefix of `text` whose `to_ascii` form no later character can change (streaming)."""
    end = len(text)
    while end and text[end - 1] in _LATIN_VOLATILE:
        end -= 1
    return text[:end]


@dataclass(frozen=True)
class TargetRules:
    """How one target script's output is normalised, and how much of a growing text is safe to show."""

    normalize: Callable[[str], str]
    stable_prefix: Callable[[str], str]


RULES: dict[str, TargetRules] = {
    "han": TargetRules(normalize, stable_prefix),
    "latin": TargetRules(to_ascii, ascii_stable_prefix),
}


def rules_for(script: str) -> TargetRules | None:
    """The normalisation for a target script (a pair's `target.script`); None: leave the output as it is."""
    return RULES.get(script)
