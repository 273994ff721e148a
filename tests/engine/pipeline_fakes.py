"""A model-free stand-in for the tokenizer and the search, so the pipeline's text work is tested on its own.

Ids are code points (eos 0); the "model" translates each source sentence by looking it up in a dictionary and
writes the translation one character per decoder step.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from engine.decoding import GenerationParams, StepUpdate
from engine.pipeline import Decoding
from engine.sentence_cache import SentenceCache

PARAMS = GenerationParams(eos_id=0, pad_id=0, decoder_start_id=0, num_beams=1)


class CharTokenizer:
    eos_id = 0
    cleans_up = False

    def encode(self, text: str, add_eos: bool = True) -> list[int]:
        ids = [ord(ch) for ch in text]
        return [*ids, 0] if add_eos else ids

    def encode_batch(self, texts: Sequence[str], add_eos: bool = True) -> list[list[int]]:
        return [self.encode(t, add_eos) for t in texts]

    def token_to_id(self, piece: str) -> int:
        return 1

    def pieces_text(self, ids: Iterable[int]) -> str:
        return "".join(chr(i) for i in ids if i > 1)

    def decode(self, ids: Iterable[int]) -> str:
        return self.pieces_text(ids).strip()


class DictionaryModel:
    """The search: each row's source text → `table[source]` (or the source upper-cased), a character a step."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.rows: list[str] = []  # every source sentence decoded, in order

    def search(self, batch: Sequence[Sequence[int]], params: GenerationParams, limits: np.ndarray):
        sources = ["".join(chr(i) for i in row if i > 1) for row in batch]
        self.rows.extend(sources)
        targets = [[ord(ch) for ch in self.table.get(s, s.upper())] for s in sources]
        for step in range(1, max(len(t) for t in targets) + 2):
            yield StepUpdate(committed=[t[:step] for t in targets], done=[step > len(t) for t in targets])

    def decoding(self, cache: SentenceCache | None = None, scope: str = "") -> Decoding:
        return Decoding(self.search, 512, "fp32", cache if cache is not None else SentenceCache(), scope)
