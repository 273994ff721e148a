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

from engine.segment import Segment

CHUNK_TOKENS = 200  # a longer sentence is split into pieces of at most this many source tokens

# Where an over-long sentence may be split, best first: clause punctuation, then word gaps. A spaced source splits
# at the whitespace after a mark (the pieces join with one space); an unspaced one right after the mark.
_SPACED_SPLITS = (re.compile(r"(?<=[;:,])\s+"), re.compile(r"\s+"))
_UNSPACED_SPLITS = (re.compile(r"(?<=[，；：、,;:])"), re.compile(r"(?<=\s)"))


class Encoder(Protocol):
    """The part of engine.tokenizer.MarianTokenizer planning needs."""

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
    glue = " " if spaced else ""
    for pattern in _SPACED_SPLITS if spaced else _UNSPACED_SPLITS:
        parts = [p for p in pattern.split(text) if p]
        if len(parts) > 1:
            break
    else:  # no gap at all: halves of characters, glued without a space
        glue = ""
        size = max(1, (len(text) + 1) // 2)
        parts = [text[i : i + size] for i in range(0, len(text), size)]
    chunks: list[str] = []
    current = ""
    for part in parts:
        candidate = f"{current}{glue}{part}" if current else part
        if fits(candidate):
            current = candidate
            continue
        if current:
            chunks.append(current)
        if fits(part) or len(part) <= 1:
            current = part
        else:  # one clause still too long: split it further
            sub = split_long(part, fits, spaced=spaced)
            chunks.extend(sub[:-1])
            current = sub[-1]
    if current:
        chunks.append(current)
    return chunks
