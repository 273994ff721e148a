"""Which characters of a sentence's final text each generated token produced (confidence underlines, clicks).

The final text is the tokenizer's decode (pieces joined, stripped, cleaned up) with the target's punctuation rules
applied, so token boundaries cannot be read off the pieces directly: a space may be absorbed by a full-width mark,
"..." may become "……". Each boundary is where the final text of the tokens before it stops agreeing with the whole
sentence's final text; boundaries only move forward, and a token's span never starts on a space.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import Protocol

from engine.text.punctuation import TargetRules


class Detokenizer(Protocol):
    def decode(self, ids: Sequence[int]) -> str: ...


def final_text(tokenizer: Detokenizer, tokens: Sequence[int], rules: TargetRules | None) -> str:
    """The sentence's text as the request shows it (decoded, then normalised when `rules` are given)."""
    text = tokenizer.decode(tokens)
    return rules.normalize(text) if rules is not None else text


def token_spans(
    tokenizer: Detokenizer, tokens: Sequence[int], rules: TargetRules | None, text: str | None = None
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """(final text, one (start, end) per token within it); `text` is the final text when the caller has it."""
    render: Callable[[Sequence[int]], str] = lambda ids: final_text(tokenizer, ids, rules)  # noqa: E731
    full = render(tokens) if text is None else text
    if not tokens:  # an empty output (a model may end at once): no token, no span
        return full, ()
    bounds = [0]
    for i in range(1, len(tokens)):
        prefix = render(tokens[:i])
        agree = _common(prefix, full)
        bounds.append(max(bounds[-1], agree))
    bounds.append(len(full))
    spans = []
    for a, b in pairwise(bounds):
        while a < b and full[a].isspace():
            a += 1
        spans.append((a, b))
    return full, tuple(spans)


def _common(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def source_spans(pieces: Sequence[str], text: str) -> tuple[tuple[int, int], ...]:
    """Where each source piece of `text` is in it: one (start, end) per piece, in order, never moving back.

    A piece is its text with `▁` as a space, as the tokenizer's normaliser wrote it, so it is looked for in `text`
    normalised character by character (NFKC, then lower case when the piece is not found as it is) and mapped back
    to the characters it came from. A piece that is not found there (a byte piece's name, a normalisation across
    characters) is the empty span where the search stands: the highlight misses it, nothing moves."""
    chars: list[str] = []
    origin: list[int] = []
    for i, ch in enumerate(text):
        for c in unicodedata.normalize("NFKC", ch):
            chars.append(c)
            origin.append(i)
    origin.append(len(text))
    plain = "".join(chars)
    lowered = "".join(c if len(c.lower()) != 1 else c.lower() for c in chars)
    spans = []
    pos = 0
    for piece in pieces:
        surface = piece.replace("▁", " ").strip()
        at = plain.find(surface, pos) if surface else -1
        if at < 0 and surface:
            at = lowered.find(surface.lower(), pos)
        if at < 0:
            spans.append((origin[pos], origin[pos]))
            continue
        end = at + len(surface)
        spans.append((origin[at], origin[end - 1] + 1))
        pos = end
    return tuple(spans)
