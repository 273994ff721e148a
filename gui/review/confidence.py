"""Which words of a sentence the model was unsure of: the parts the window underlines with a quiet wavy line.

A token is unsure when its probability, exp(logprob), is below the threshold (percent, Key.CONFIDENCE_THRESHOLD).
Unsure tokens that touch are one underline; a piece of a spaced-language word marks the whole word (the reader
sees words, not SentencePiece pieces); punctuation alone is never underlined.
"""

from __future__ import annotations

import math

from engine.results import SentenceResult


def is_unsure(logprob: float, threshold_percent: float) -> bool:
    return math.exp(logprob) * 100.0 < threshold_percent


def _wordish(ch: str) -> bool:
    """A character of a spaced-language word (Han, kana and Hangul characters are words on their own)."""
    return ch.isalnum() and ord(ch) < 0x2E80


def whole_words(text: str, a: int, b: int) -> tuple[int, int]:
    """Characters a..b of `text` widened to the spaced-language words they cut into (a piece of "tomorrow" is
    "tomorrow"); a Han character is a word on its own."""
    a, b = max(0, a), min(len(text), b)
    while 0 < a < len(text) and _wordish(text[a - 1]) and _wordish(text[a]):
        a -= 1
    while 0 < b < len(text) and _wordish(text[b]) and _wordish(text[b - 1]):
        b += 1
    return a, b


def unsure_spans(result: SentenceResult, text: str, threshold_percent: float) -> list[tuple[int, int]]:
    """(start, end) within `text` (the sentence's own text) of each unsure word; [] when the sentence carries
    no scores (the user's memory, an old result)."""
    spans: list[tuple[int, int]] = []
    for logprob, (a, b) in zip(result.logprobs, result.token_spans, strict=False):
        a, b = max(0, a), min(len(text), b)
        if a >= b or not is_unsure(logprob, threshold_percent):
            continue
        if not any(ch.isalnum() for ch in text[a:b]):
            continue
        a, b = whole_words(text, a, b)
        if spans and spans[-1][1] >= a:
            spans[-1] = (spans[-1][0], max(b, spans[-1][1]))
        else:
            spans.append((a, b))
    return spans


def token_index(result: SentenceResult, offset: int) -> int | None:
    """The token whose characters hold `offset` (relative to the sentence), else the one just before it (a cursor
    right after a word); None for a sentence without token spans."""
    last = None
    for i, (a, b) in enumerate(result.token_spans):
        if a <= offset < b:
            return i
        if b > a and b <= offset:
            last = i
    if last is not None and result.token_spans[last][1] == offset:
        return last
    return None
