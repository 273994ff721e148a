"""Which characters of a sentence's final text each generated token produced (confidence underlines, clicks).

The final text is the tokenizer's decode (pieces joined, stripped, cleaned up) with the target's punctuation rules
applied, so token boundaries cannot be read off the pieces directly: a space may be absorbed by a full-width mark,
"..." may become "……". Each boundary is where the final text of the tokens before it stops agreeing with the whole
sentence's final text; boundaries only move forward, and a token's span never starts on a space.
"""

from __future__ import annotations

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
