"""Sentence planning: segments of a text → the token-id rows the model decodes, long sentences split into pieces.

A sentence longer than CHUNK_TOKENS would be cut off by the model's length limit (or cost quadratic time), so it is
split at clause punctuation first, then at spaces, then anywhere, never losing a character. How the pieces glue
back depends on the source: an English sentence splits at ", " and spaces, a Chinese one at ，；：、 with nothing
between the pieces (Chinese has no spaces to split at).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from engine.text.segment import Segment

CHUNK_TOKENS = 200  # a longer sentence is split into pieces of at most this many source tokens

# Where an over-long sentence may be split, best first: clause punctuation, then word gaps. A spaced source splits
# at the whitespace after a mark (the pieces join with one space); an unspaced one right after the mark.
_SPACED_SPLITS = (re.compile(r"(?<=[;:,])\s+"), re.compile(r"\s+"))
_UNSPACED_SPLITS = (re.compile(r"(?<=[，；：、,;:])"), re.compile(r"(?<=\s)"))


class Encoder(Protocol):
    """The part of engine.families.marian.tokenizer.MarianTokenizer planning needs."""

    eos_id: int

    def encode(self, text: str, add_eos: bool = True) -> list[int]: ...
    def encode_batch(self, texts: Sequence[str], add_eos: bool = True) -> list[list[int]]: ...


@dataclass(frozen=True)
class Sentence:
    """One row for the decoder: which segment it translates (a long sentence gives several rows) and its ids."""

    index: int  # position in the segment list
    ids: list[int]  # language token (if any) + source ids + eos
    source: str = ""  # the text these ids encode (the sentence, or its piece when a long one was split)


def plan_sentences(
    tokenizer: Encoder,
    segments: Sequence[Segment],
    lang_id: int | None,
    *,
    spaced: bool = True,
    chunk_tokens: int = CHUNK_TOKENS,
) -> list[Sentence]:
    """Token ids of every sentence to translate, in reading order; over-long ones split (see `split_long`)."""
    eos = tokenizer.eos_id
    prefix = [lang_id] if lang_id is not None else []
    texts = [(i, s.sentence) for i, s in enumerate(segments) if s.translate]
    encoded = tokenizer.encode_batch([t for _, t in texts], add_eos=False)
    budget = chunk_tokens - len(prefix) - 1
    out: list[Sentence] = []
    for (index, text), ids in zip(texts, encoded):
        if len(ids) <= budget:
            out.append(Sentence(index, [*prefix, *ids, eos], text))
            continue

        def fits(s: str) -> bool:
            return len(tokenizer.encode(s, add_eos=False)) <= budget

        for chunk in split_long(text, fits, spaced=spaced):
            out.append(Sentence(index, [*prefix, *tokenizer.encode(chunk, add_eos=False), eos], chunk))
    return out


def split_long(text: str, fits: Callable[[str], bool], *, spaced: bool = True) -> list[str]:
    """Split `text` into pieces that each `fits`, at clause punctuation, else word gaps, else anywhere.

    Spaced: the pieces joined with " " give `text` back when it split at single spaces. Unspaced: "".join gives
    `text` back exactly. A single character that does not fit is kept as it is (it cannot be split).
    """
    parts, glue = split_parts(text, spaced=spaced)
    chunks: list[str] = []
    current = ""
    i, guess = 0, 1
    while i < len(parts):
        take = _most_that_fit(current, parts, i, glue, fits, guess)
        if take:
            body = glue.join(parts[i : i + take])
            current = f"{current}{glue}{body}" if current else body
            i, guess = i + take, take
            if i == len(parts):
                break
        if current:  # parts[i] does not fit after it: it starts the next chunk
            chunks.append(current)
            current = ""
            continue
        part = parts[i]
        i += 1
        if len(part) <= 1:
            current = part
        else:  # one clause still too long: split it further
            sub = split_long(part, fits, spaced=spaced)
            chunks.extend(sub[:-1])
            current = sub[-1]
    if current:
        chunks.append(current)
    return chunks


def split_parts(text: str, *, spaced: bool = True) -> tuple[list[str], str]:
    """The parts `split_long` packs into chunks, and the glue that rejoins them: clauses, else words (else, in
    Chinese, runs after spaces), else two halves of characters glued without a space."""
    for pattern in _SPACED_SPLITS if spaced else _UNSPACED_SPLITS:
        parts = [p for p in pattern.split(text) if p]
        if len(parts) > 1:
            return parts, " " if spaced else ""
    size = max(1, (len(text) + 1) // 2)
    return [text[i : i + size] for i in range(0, len(text), size)], ""


def _most_that_fit(head: str, parts: list[str], start: int, glue: str, fits: Callable[[str], bool], guess: int) -> int:
    """How many of `parts[start:]`, joined after `head`, still fit (0: not even the first).

    An exponential search outward from `guess` (the previous chunk's count), then bisection: chunks of similar size
    take two or three `fits` calls, instead of one per part, which re-tokenised every prefix of every chunk (100,000
    characters without punctuation: 6.7 s of planning). A longer join has at least as many tokens, so the count is
    the one such a scan finds; in the rare join where characters merge into fewer pieces it may differ, and every
    chunk still fits. Unless every part was taken, one more would not fit.
    """
    left = len(parts) - start

    def ok(count: int) -> bool:
        body = glue.join(parts[start : start + count])
        return fits(f"{head}{glue}{body}" if head else body)

    count, step = max(1, min(guess, left)), 1
    if ok(count):
        good = count
        while True:
            if good == left:
                return good
            count = min(left, good + step)
            if not ok(count):
                bad = count
                break
            good, step = count, step * 2
    else:
        bad, good = count, 0
        while bad - step > 0:
            count = bad - step
            if ok(count):
                good = count
                break
            bad, step = count, step * 2
    while bad - good > 1:
        mid = (good + bad) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good
