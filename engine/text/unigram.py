"""SentencePiece unigram segmentation of the bundle's `tokenizer.json`, piece for piece what SentencePiece computes.

Why not `tokenizers.Tokenizer`: its Unigram model keeps the pieces in a byte trie with a hash map per node, which
costs ~31 MB resident for a real-scale 32k-piece vocabulary (measured, tokenizers 0.22), a fifth of the loaded
engine. This module keeps the pieces in one Python dict (piece → index) and a list of scores: ~9 MB resident in all,
the normaliser included. The library still does the part that is hard to get right: SentencePiece's normaliser (the
precompiled character map, whitespace rules), built from the same file with the vocabulary left out.

The search is SentencePiece's `Model::EncodeOptimized` (unigram_model.cc), which MarianTokenizer runs: a Viterbi pass
over character positions, each trying the pieces that start there in increasing length; a candidate replaces the best
path ending where it ends only when it scores strictly higher, so ties keep the earlier start (the longer last
piece). Scores and their running sums are float32, as there: segmentations that tie in exact arithmetic ("x" + "xx"
against "xx" + "x" with "xx" scored twice "x") fall as float32 rounding makes them, which is why float64 sums (the
`tokenizers` library's) split 50 × "x" or "555" differently. A position that no one-character piece covers gets an
unknown piece scored `min(score) - 10` (the unknown piece itself left out of the minimum), and runs of unknowns are
fused into one piece, as SentencePieceProcessor does. Cost: ~1.2 µs a character with the CPU caches warm, ~2 µs
right after a model run (the bench paragraph's 448 normalised characters: 0.9 ms in a translation), the big piece
table's lookups missing the caches: the search keeps most of its lookups in two small tables and stops each piece at
the next `▁`.
"""

from __future__ import annotations

import json
import math
from array import array
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from tokenizers import Tokenizer

UNK_PENALTY = 10.0  # tokenizers' K_UNK_PENALTY (SentencePiece's kUnkPenalty)
_NUMBER = (float, int)
SPACE = "\u2581"  # SentencePiece's whitespace, `▁`
_BAD_ENTRY = "tokenizer.json's unigram vocabulary has entries that are not [piece, score]"


class UnigramSegmenter:
    """Normalise text and split it into the unigram model's pieces: `segment(text)` → [(piece, index)]."""

    def __init__(self, path: str | Path) -> None:
        """Reads `path` (a tokenizers JSON file with a Unigram model, no pre-tokenizer, no added tokens, no byte
        fallback: what engine.families.marian.converter.tokenizer_json writes); raises ValueError for anything else."""
        blob, lengths, scores, unk_id, normalizer = _read(Path(path))
        # Built from compact copies once the parsed file is gone, so these long-lived objects fill the freed space
        # rather than sit between the parser's dead ones (about 1 MB less resident at real scale).
        # Later duplicates win, as in the library's piece → id map; its scores are looked up through that id.
        ends = np.cumsum(lengths).tolist()
        index = {blob[a:b]: i for i, (a, b) in enumerate(zip([0, *ends[:-1]], ends))}
        others = np.delete(scores, unk_id) if len(lengths) > 1 else scores  # its minimum skips the unknown piece
        unk_score = float(np.float32(others.astype(np.float32).min()) - np.float32(UNK_PENALTY))
        # SentencePiece keeps scores, and sums them, in float32: ties and near-ties fall as its rounding makes them.
        scores32 = scores.astype(np.float32).astype(np.float64).tolist()
        self._setup(index, scores32, unk_id, unk_score, normalizer.normalize_str if normalizer is not None else None)

    @classmethod
    def from_pieces(
        cls,
        index: dict[str, int],
        scores: list[float],
        unk_id: int,
        unk_score: float,
        normalize: Callable[[str], str] | None = None,
        *,
        unrounded: bool = False,
    ) -> UnigramSegmenter:
        """A segmenter over a vocabulary given directly rather than as a tokenizer.json (a SentencePiece model read
        by another family): `index` holds every piece the search may match (piece → id), `scores[id]` its score as
        SentencePiece adds it, `unk_score` what an uncovered character costs, `normalize` the text's normaliser;
        `unrounded`: compare each piece's float64 path sum before rounding it to float32, as marian-dev's
        SentencePiece (0.1.9x) does, rather than after, as the sentencepiece package (0.2) does."""
        self = cls.__new__(cls)
        self._setup(index, scores, unk_id, unk_score, normalize)
        self._unrounded = unrounded
        return self

    def _setup(
        self,
        index: dict[str, int],
        scores: list[float],
        unk_id: int,
        unk_score: float,
        normalize: Callable[[str], str] | None,
    ) -> None:
        self.unk_id = unk_id
        self.size = len(scores)
        self._index = index
        self._scores = scores
        self._unk_score = unk_score
        self._normalize = normalize
        self._unrounded = False
        # Per two-character prefix: the longest piece it starts, and the id of the two-character piece (-1: none);
        # and the one-character pieces. Most lookups land in these two small tables (~900 entries here, warm),
        # not in the big one, whose probes miss the CPU caches after a model run: most positions then try one or
        # two lengths in the big table, not sixteen.
        pairs: dict[str, tuple[int, int]] = {}
        for piece, k in index.items():
            if len(piece) > 1:
                most, two = pairs.get(piece[:2], (0, -1))
                pairs[piece[:2]] = (max(most, len(piece)), k if len(piece) == 2 else two)
        self._pairs = pairs
        self._singles = {piece: k for piece, k in index.items() if len(piece) == 1}
        # Where no piece holds a `▁` past its first character (SentencePiece splits by whitespace: every trained
        # vocabulary), a piece that starts at i ends by the next `▁` after i: ~a third fewer lookups.
        self._bounded = not any(SPACE in piece[1:] for piece in index)

    def normalize(self, text: str) -> str:
        """The text as the model segments it (SentencePiece's normalisation, spaces as ▁)."""
        return self._normalize(text) if self._normalize is not None else text

    def segment(self, text: str) -> list[tuple[str, int]]:
        """The pieces of `text` after normalisation, with their indices in the file's vocabulary (fused unknown
        runs carry `unk_id`)."""
        text = self.normalize(text)
        n = len(text)
        if n == 0:
            return []
        index, scores, pairs = self._index, self._scores, self._pairs
        unk, unk_score = self.unk_id, self._unk_score
        # Unset ends hold -inf, so `cand > best[end]` settles "a strictly better path" at once; `start[end] < 0`
        # ("no path yet") only matters to a candidate that is itself -inf (a float32 sum past the range).
        best = [-math.inf] * (n + 1)
        best[0] = 0.0
        start = [-1] * (n + 1)
        piece_at = [0] * (n + 1)
        # Storing into it rounds to float32. A float64 sum of two float32 values rounded so is exactly their float32
        # sum (53 ≥ 2 × 24 + 2 bits: the double rounding is harmless), so a stored score is SentencePiece's, bit for
        # bit. The sentencepiece package (0.2) compares candidates so rounded; the SentencePiece Marian builds in
        # (0.1.9x, browsermt's fork) compares a piece's float64 sum before storing it (`unrounded`).
        f32 = array("f", [0.0])
        rounded = not self._unrounded
        bounded = self._bounded
        stop = 0 if bounded else n  # with `bounded`: the next `▁` after i (or n), where pieces from i end
        for i, single in enumerate(map(self._singles.get, text)):
            base = best[i]
            if single is None:  # float32 arithmetic in every version: unk_score and the path are both float
                f32[0] = unk_score + base
                cand, single = f32[0], unk
            else:
                cand = scores[single] + base
                if rounded:
                    f32[0] = cand
                    cand = f32[0]
            if cand > best[i + 1] or start[i + 1] < 0:
                f32[0] = cand
                best[i + 1], start[i + 1], piece_at[i + 1] = f32[0], i, single
            if bounded:
                if stop <= i:
                    stop = text.find(SPACE, i + 1)
                    if stop < 0:
                        stop = n
                if stop == i + 1:
                    continue
            found = pairs.get(text[i : i + 2])  # None too at the end of the text (one character)
            if found is None:
                continue
            most, two = found
            for end in range(i + 2, min(i + most, stop) + 1):
                # the two-character piece from the small table (-1: none), longer ones from the big one
                k = two if end == i + 2 else index.get(text[i:end], -1)
                if k < 0:
                    continue
                cand = scores[k] + base
                if rounded:
                    f32[0] = cand
                    cand = f32[0]
                if cand > best[end] or start[end] < 0:
                    f32[0] = cand
                    best[end], start[end], piece_at[end] = f32[0], i, k
        spans: list[tuple[int, int, int]] = []
        end = n
        while end > 0:
            begin, k = start[end], piece_at[end]
            if k == unk and spans and spans[-1][2] == unk:
                spans[-1] = (begin, spans[-1][1], unk)  # fuse with the unknown run to its right
            else:
                spans.append((begin, end, k))
            end = begin
        spans.reverse()
        return [(text[a:b], k) for a, b, k in spans]


def _read(path: Path) -> tuple[str, np.ndarray, np.ndarray, int, Any]:
    """The pieces (concatenated, and their lengths), scores, unknown piece and normaliser of a tokenizer.json."""
    spec = json.loads(path.read_bytes())
    model = spec.get("model") if isinstance(spec, dict) else None
    if not isinstance(model, dict) or model.get("type") != "Unigram":
        raise ValueError("tokenizer.json has no unigram model")
    if spec.get("pre_tokenizer") is not None or spec.get("added_tokens") or model.get("byte_fallback"):
        raise ValueError("tokenizer.json uses a pre-tokenizer, added tokens or byte fallback (not supported)")
    vocab = model.get("vocab")
    if not isinstance(vocab, list) or not vocab:
        raise ValueError("tokenizer.json's unigram vocabulary is empty or not a list")
    pieces: list[str] = []
    values: list[float] = []
    for entry in vocab:  # json gives exact types: a bool score is not an int here
        if type(entry) is not list or len(entry) != 2 or type(entry[0]) is not str or type(entry[1]) not in _NUMBER:
            raise ValueError(_BAD_ENTRY)
        pieces.append(entry[0])
        values.append(entry[1])
    scores = np.asarray(values, dtype=np.float64)
    if not all(pieces) or not np.isfinite(scores).all() or np.abs(scores).max() > np.finfo(np.float32).max:
        raise ValueError(_BAD_ENTRY)
    unk = model.get("unk_id")
    if not isinstance(unk, int) or isinstance(unk, bool) or not 0 <= unk < len(vocab):
        raise ValueError("tokenizer.json's unigram model has no valid unk_id")
    # The library's normaliser, built from the same file with a one-piece vocabulary (no big trie).
    spec["model"] = {**model, "vocab": [vocab[unk]], "unk_id": 0}
    normalizer = Tokenizer.from_str(json.dumps(spec)).normalizer
    lengths = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    return "".join(pieces), lengths, scores, unk, normalizer
