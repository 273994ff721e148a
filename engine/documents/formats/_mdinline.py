"""Markdown inline text → runs: what a translation must not touch and the prose around it.

Three kinds of span. Fixed (shown to the translator as context, kept verbatim): code spans, autolinks
(<https://…>), bare URLs, entities (&nbsp;), shortcut and collapsed reference links whole (their text IS the label:
translating it would break the link). Markup (kept verbatim and never shown to the translator, as an HTML tag is
not): emphasis/strike-through delimiters (`**`, `_`, `~~`), a link's `[` and `](url "title")` or `][ref]`, inline
HTML tags and comments, footnote references ([^1]), images' `![` and `](src)`. Alt (an image's alt text, translated
as a text of its own, as HTML's alt is). Text: the rest, including link text and emphasised words, so each keeps
its markup around the right words, and `The **computer** is on the *desk*.` reads to the model as it does in HTML.

The scanner reads the source as written (escapes and all) and follows CommonMark's rules closely enough to classify
spans; it never rewrites anything, so a misjudged span only means a piece is kept or translated where it might not
have been. Every search is bounded, so hostile input (a line of ten thousand `[`) stays linear.
"""

from __future__ import annotations

import bisect
import re
import unicodedata

TEXT, FIXED, MARKUP, ALT = "text", "fixed", "markup", "alt"
Span = tuple[int, int, str]  # start, end, kind (one of the four above)

_ASCII_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9.+-]{1,31}:[^\s<>]*>")
_EMAIL = re.compile(
    r"<[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*>"
)
_HTML = re.compile(
    r"<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|\"[^\"]*\"))?)*\s*/?>"
    r"|</[A-Za-z][A-Za-z0-9-]*\s*>"
    r"|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<![A-Za-z][^>]*>|<!\[CDATA\[[\s\S]*?\]\]>"
)
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_FOOTNOTE = re.compile(r"\[\^[^\]\s]{1,100}\]")
_URL = re.compile(r"(?:https?://|ftp://|www\.)[^\s<>]*[^\s<>.,:;\"')\]*_~!?]")
_BRACKET_WINDOW = 1000  # longest link text looked for
_PAREN_WINDOW = 2000  # longest `(destination "title")`


def inline_spans(text: str, references: frozenset[str] = frozenset(), fixed_prefix: int = 0) -> list[Span]:
    """Contiguous spans covering `text`, adjacent ones of the same kind merged (alt spans never are). `references`:
    the document's link reference labels, normalised by `label_key`; `fixed_prefix`: characters at the start that
    are markup (a task list item's `[x] `)."""
    scanner = _Scanner(text, references)
    scanner.spans.append((0, fixed_prefix, MARKUP))
    scanner.scan(fixed_prefix, len(text))
    merged: list[Span] = []
    for start, end, kind in scanner.spans:
        if start == end:
            continue
        if merged and merged[-1][2] == kind != ALT and merged[-1][1] == start:
            merged[-1] = (merged[-1][0], end, kind)
        else:
            merged.append((start, end, kind))
    return merged


def label_key(label: str) -> str:
    """A link label as CommonMark compares them: case-folded, inner whitespace collapsed."""
    return " ".join(label.split()).casefold()


class _Scanner:
    def __init__(self, text: str, references: frozenset[str]) -> None:
        self.s = text
        self.refs = references
        self.spans: list[Span] = []
        self._code = _code_spans(text)
        self._brackets = _pairs(text, "[", "]", self._code)
        self._parens = _pairs(text, "(", ")", {})

    def _emit(self, start: int, end: int, kind: str) -> None:
        self.spans.append((start, end, kind))

    def scan(self, lo: int, hi: int) -> None:
        """Classify [lo, hi)."""
        s = self.s
        i = lo
        text_from = lo
        while i < hi:
            c = s[i]
            found = self._construct(i, hi) if c in "\\`<&![*_~hfw" else None
            if found is None:
                i += 1
                continue
            end, inner, kind = found
            if end <= i:  # an escape or a literal run: plain text, skipped over as a whole
                i = -end
                continue
            self._emit(text_from, i, TEXT)
            if inner is None:
                self._emit(i, end, kind)
            elif kind == ALT:  # an image: `![` alt `](src)`
                open_end, close_start = inner
                self._emit(i, open_end, MARKUP)
                self._emit(open_end, close_start, ALT)
                self._emit(close_start, end, MARKUP)
            else:
                open_end, close_start = inner
                self._emit(i, open_end, MARKUP)
                self.scan(open_end, close_start)
                self._emit(close_start, end, MARKUP)
            i = text_from = end
        self._emit(text_from, hi, TEXT)

    def _construct(self, i: int, hi: int) -> tuple[int, tuple[int, int] | None, str] | None:
        """What starts at i: (end, None, kind) for a fixed or markup span; (end, (open_end, close_start), kind) for
        a link whose text is scanned on (kind MARKUP: its brackets) or an image (kind ALT: its alt text); (-next,
        None, TEXT) to skip literal text up to `next`; None for an ordinary character."""
        s = self.s
        c = s[i]
        if c == "\\":
            return (-(i + 2), None, TEXT) if i + 1 < hi and s[i + 1] in _ASCII_PUNCT else None
        if c == "`":
            return self._code_span(i, hi)
        if c == "<":
            for pattern, kind in ((_AUTOLINK, FIXED), (_EMAIL, FIXED), (_HTML, MARKUP)):
                match = pattern.match(s, i, hi)
                if match:
                    return match.end(), None, kind
            return None
        if c == "&":
            match = _ENTITY.match(s, i, hi)
            return (match.end(), None, FIXED) if match else None
        if c == "!":
            if i + 1 < hi and s[i + 1] == "[":
                link = self._link(i + 1, hi)
                if link is not None:
                    end, inner, _kind = link
                    if inner is None:  # `![label]`: the alt text is the reference's label
                        return end, None, MARKUP
                    return end, inner, ALT
            return None
        if c == "[":
            footnote = _FOOTNOTE.match(s, i, hi)
            if footnote:
                return footnote.end(), None, MARKUP
            return self._link(i, hi)
        if c in "*_~":
            return self._delimiters(i, hi)
        if c in "hfw" and (i == 0 or not s[i - 1].isalnum()):
            match = _URL.match(s, i, hi)
            return (match.end(), None, FIXED) if match else None
        return None

    def _code_span(self, i: int, hi: int) -> tuple[int, None, str]:
        end = self._code.get(i)
        if end is not None and end <= hi:
            return end, None, FIXED
        n = 1
        while i + n < hi and self.s[i + n] == "`":
            n += 1
        return -(i + n), None, TEXT  # no closing run: the backticks are literal

    def _link(self, i: int, hi: int) -> tuple[int, tuple[int, int] | None, str] | None:
        """A link starting with the `[` at i: text scanned on, the rest fixed; a reference link without its own
        reference (shortcut, collapsed) is fixed whole."""
        s = self.s
        close = self._closing_bracket(i, hi)
        if close is None:
            return None
        after = close + 1
        if after < hi and s[after] == "(":
            tail = self._paren_tail(after, hi)
            if tail is not None:
                return tail, (i + 1, close), MARKUP
        if after < hi and s[after] == "[":
            label_end = s.find("]", after + 1, min(hi, after + 1 + _BRACKET_WINDOW))
            if label_end >= 0:
                if label_end == after + 1:
                    return label_end + 1, None, FIXED  # [text][]: the text is the label
                return label_end + 1, (i + 1, close), MARKUP
        if label_key(s[i + 1 : close]) in self.refs:
            return after, None, FIXED
        return None

    def _closing_bracket(self, i: int, hi: int) -> int | None:
        close = self._brackets.get(i)
        return close if close is not None and close < hi and close - i <= _BRACKET_WINDOW else None

    def _paren_tail(self, i: int, hi: int) -> int | None:
        """The end of `(destination "title")` starting at i, or None."""
        close = self._parens.get(i)
        return close + 1 if close is not None and close < hi and close - i <= _PAREN_WINDOW else None

    def _delimiters(self, i: int, hi: int) -> tuple[int, None, str] | None:
        """An emphasis or strike-through delimiter run that can open or close (CommonMark's flanking rules)."""
        s = self.s
        c = s[i]
        if i > 0 and s[i - 1] == c:
            return None  # inside a run already judged
        n = 1
        while i + n < hi and s[i + n] == c:
            n += 1
        if c == "~" and n < 2:
            return None
        before = s[i - 1] if i > 0 else " "
        after = s[i + n] if i + n < len(s) else " "
        left = not after.isspace() and (not _punct(after) or before.isspace() or _punct(before))
        right = not before.isspace() and (not _punct(before) or after.isspace() or _punct(after))
        if c == "_":
            opens = left and (not right or _punct(before))
            closes = right and (not left or _punct(after))
        else:
            opens, closes = left, right
        if opens or closes:
            return i + n, None, MARKUP
        return -(i + n), None, TEXT


def _code_spans(text: str) -> dict[int, int]:
    """start → end of every code span: a backtick run closed by the next run of the same length (CommonMark)."""
    runs = [(m.start(), m.end() - m.start()) for m in re.finditer(r"`+", text)]
    by_length: dict[int, list[int]] = {}
    for start, n in runs:
        by_length.setdefault(n, []).append(start)
    spans: dict[int, int] = {}
    covered = 0
    for start, n in runs:
        if start < covered:
            continue
        starts = by_length[n]
        k = bisect.bisect_right(starts, start)
        if k < len(starts):
            spans[start] = covered = starts[k] + n
    return spans


def _pairs(text: str, open_ch: str, close_ch: str, skip: dict[int, int]) -> dict[int, int]:
    """open position → matching close position (nesting counted; escapes and the `skip` ranges passed over)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        end = skip.get(i)
        if end is not None:
            i = end
            continue
        if ch == open_ch:
            stack.append(i)
        elif ch == close_ch and stack:
            pairs[stack.pop()] = i
        i += 1
    return pairs


def _punct(ch: str) -> bool:
    return ch in _ASCII_PUNCT or unicodedata.category(ch)[0] in "PS"
