"""Full-width punctuation in Chinese output: the model mixes half-width ! ? , : ; ( ) with full-width 。.

A half-width mark becomes full-width (！？，：；（）, three or more dots ……) when the nearest non-space character
before or after it on its line is CJK (an ideograph, kana, or CJK/full-width punctuation). Numbers (3,000; 1:2;
12:30), Latin text, URLs and e-mail addresses have no CJK character next to their marks, so they stay as they are.
Spaces between a converted mark and its neighbours are dropped: a full-width mark carries its own spacing.

Every decision looks only at the output so far and the next non-space character, which is what makes streaming
possible: `normalize(stable_prefix(p))` is a prefix of `normalize(t)` for any prefix `p` of a text `t`.
"""

from __future__ import annotations

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
