"""A target-side text prefix as decoder tokens, for prefix-forced decoding ("continue after what the user chose").

The bundle carries only the source SentencePiece model; pieces.json holds the target pieces (the decoder's ids; with
separate source and target vocabularies the source ids number other pieces, so only the target side is read here:
`TargetPieces`). So the prefix is segmented over the target vocabulary the way SentencePiece writes text (a word-start
marker `▁` before the text and for each space): the fewest pieces that cover it, longest first, never dropping a
character; the prefix may end inside a word (the last piece is then a part of the piece the model would choose). A
character that appears in no piece is written in its NFKC form when that one does ("，" → ","; the shown text is
punctuation-normalised, the model's pieces often are not); one that still cannot be written is an InputError, not a
silent loss.
"""

from __future__ import annotations

import re
import unicodedata
import weakref
from collections.abc import Iterable
from typing import Protocol

from engine.errors import InputError

_WORD = "▁"
_tables: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class TargetPieces(Protocol):
    """The target side of engine.families.marian.tokenizer.MarianTokenizer: its pieces by target id."""

    vocab_size: int  # the target vocabulary's

    def id_to_piece(self, idx: int) -> str: ...

    def pieces_text(self, ids: Iterable[int]) -> str: ...


def _table(tokenizer: TargetPieces) -> tuple[dict[str, int], int, frozenset[str]]:
    """Piece → id of every piece that decodes to itself (no specials, language tokens or control pieces), the
    longest piece's length and every character the pieces use."""
    cached = _tables.get(tokenizer)
    if cached is None:
        pieces: dict[str, int] = {}
        for i in range(tokenizer.vocab_size):
            piece = tokenizer.id_to_piece(i)
            if piece and piece not in pieces and tokenizer.pieces_text([i]) == piece.replace(_WORD, " "):
                pieces[piece] = i
        cached = (pieces, max(map(len, pieces)), frozenset("".join(pieces)))
        _tables[tokenizer] = cached
    return cached


def encode_target_prefix(tokenizer: TargetPieces, text: str) -> list[int]:
    """Target token ids whose decoding is `text` (leading space dropped, inner and trailing spaces kept as word
    starts)."""
    body = re.sub(r"\s+", " ", text.lstrip())
    if not body:
        return []
    pieces, longest, chars = _table(tokenizer)
    body = "".join(c if c in chars or c == " " else unicodedata.normalize("NFKC", c) for c in body)
    s = _WORD + body.replace(" ", _WORD)
    n = len(s)
    # best[i]: (pieces used, ids) covering s[:i] with the fewest pieces; longer pieces tried first break ties
    best: list[tuple[int, list[int]] | None] = [None] * (n + 1)
    best[0] = (0, [])
    for i in range(n):
        here = best[i]
        if here is None:
            continue
        for length in range(min(longest, n - i), 0, -1):
            idx = pieces.get(s[i : i + length])
            if idx is None:
                continue
            got = best[i + length]
            if got is None or here[0] + 1 < got[0]:
                best[i + length] = (here[0] + 1, [*here[1], idx])
    found = best[n]
    if found is None:
        reached = max(i for i, b in enumerate(best) if b is not None)
        bad = s[reached] if s[reached] != _WORD else s[reached : reached + 2]
        raise InputError(f"the prefix cannot be written with this model's vocabulary (at {bad!r})")
    return found[1]
