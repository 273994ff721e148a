"""A model-free stand-in for the tokenizer and the search, so the pipeline's text work is tested on its own.

Ids are code points (eos 0); the "model" translates each source sentence by looking it up in a dictionary and
writes the translation one character per decoder step. Like the real searches (engine.search.types) it delivers a
finished sentence's `SentenceOutput` in `StepUpdate.outputs`: each character's log-probability is `logprob(ch)`,
the score follows the contract's formula, a table entry that is a list gives the n-best (best first), and the
constraints of a row's `RowExtras` whose tokens are not in its output are reported unmet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from engine.pipeline.requests import Decoding
from engine.pipeline.sentence_cache import SentenceCache
from engine.search.decoding import GenerationParams, StepUpdate
from engine.search.types import Hypothesis, RowExtras, SentenceOutput

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


def logprob(ch: str) -> float:
    """The fake model's log-probability of writing `ch` (any fixed, checkable function of the character)."""
    return -(ord(ch) % 7) / 10


EOS_LOGPROB = -0.05


def hypothesis(text: str, length_penalty: float = 1.0) -> Hypothesis:
    """The fake's hypothesis for `text`, scored as engine.search.types says (sum with eos / length ** penalty)."""
    logprobs = tuple(logprob(ch) for ch in text)
    score = (sum(logprobs) + EOS_LOGPROB) / (len(text) + 1) ** length_penalty
    return Hypothesis(tuple(ord(ch) for ch in text), logprobs, EOS_LOGPROB, score)


class DictionaryModel:
    """The search: each row's source text → `table[source]` (or the source upper-cased), a character a step.

    A table value that is a list is the n-best (best first). `outputs=False` behaves like a search from before
    the outputs contract (no `StepUpdate.outputs`)."""

    def __init__(self, table: dict[str, str | list[str]], outputs: bool = True) -> None:
        self.table = table
        self.with_outputs = outputs
        self.rows: list[str] = []  # every source sentence decoded, in order
        self.calls: list[tuple[GenerationParams, list[RowExtras] | None]] = []  # per search call

    def search(
        self,
        batch: Sequence[Sequence[int]],
        params: GenerationParams,
        limits: np.ndarray,
        extras: Sequence[RowExtras] | None = None,
    ):
        sources = ["".join(chr(i) for i in row if i > 1) for row in batch]
        self.rows.extend(sources)
        self.calls.append((params, list(extras) if extras is not None else None))
        nbests = []
        for s in sources:
            value = self.table.get(s, s.upper())
            texts = value if isinstance(value, list) else [value]
            nbests.append([hypothesis(t, params.length_penalty) for t in texts[: params.num_return]])
        targets = [list(n[0].tokens) for n in nbests]
        for step in range(1, max(len(t) for t in targets) + 2):
            done = [step > len(t) for t in targets]
            outputs = []
            for b, nbest in enumerate(nbests):
                if not (done[b] and self.with_outputs):
                    outputs.append(None)
                    continue
                constraints = extras[b].constraints if extras is not None else ()
                unmet = tuple(
                    k for k, c in enumerate(constraints) if not any(_contains(targets[b], o) for o in c.options)
                )
                listed = tuple(nbest) if params.num_return > 1 else ()
                outputs.append(SentenceOutput(nbest[0], listed, unmet))
            yield StepUpdate(
                committed=[t[:step] for t in targets],
                done=done,
                outputs=outputs if self.with_outputs else [],
                best=[t[:step] for t in targets],
            )

    def decoding(self, cache: SentenceCache | None = None, scope: str = "") -> Decoding:
        return Decoding(self.search, 512, "fp32", cache if cache is not None else SentenceCache(), scope)


def _contains(seq: Sequence[int], part: Sequence[int]) -> bool:
    n = len(part)
    return any(list(seq[i : i + n]) == list(part) for i in range(len(seq) - n + 1))
