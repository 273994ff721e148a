"""The decode driver: runs planned sentences through the search in batches, reporting every step, cancellable.

One run decodes a list of sentences batch by batch (engine.batching), in order, and yields (sentence, committed
tokens, finished) after every decoder step, so a caller can stream partial text or wait for whole sentences. A set
`cancel` event stops it within one decoder step; `Clock` records the decoding time, the tokens decoded and whether
the run stopped early.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from engine.batching import batches, length_limit
from engine.decoding import GenerationParams, StepUpdate
from engine.planning import Sentence
from engine.repetition import repeating_tail

# (source id rows, params, per-row length limits) → the search's step updates (Translator._search)
Search = Callable[[Sequence[Sequence[int]], GenerationParams, np.ndarray], Generator[StepUpdate, None, None]]


@dataclass
class Clock:
    """Decoding time and tokens of one run of `decode`, and whether it stopped early."""

    decode_s: float = 0.0  # batches done
    since: float | None = None  # when the batch being decoded started
    tokens: int = 0
    cancelled: bool = False

    def seconds(self) -> float:
        return self.decode_s + (time.perf_counter() - self.since if self.since is not None else 0.0)


def decode(
    sentences: Sequence[Sentence],
    params: GenerationParams,
    search: Search,
    model_max: int,
    cancel: threading.Event | None,
    clock: Clock,
) -> Iterator[tuple[int, list[int], bool]]:
    """Decode `sentences` in batches, in order: yields (index, committed tokens, finished) after every step.

    Greedy decoding also finishes a sentence caught repeating itself (engine.repetition). Stops early
    (`clock.cancelled`) when `cancel` is set, within one decoder step."""
    for batch_idx in batches([len(s.ids) for s in sentences], params.num_beams, model_max):
        if cancel is not None and cancel.is_set():
            clock.cancelled = True
            return
        batch = [sentences[i] for i in batch_idx]
        limits = np.array([length_limit(len(s.ids), model_max) for s in batch], dtype=np.int64)
        clock.since = time.perf_counter()
        steps = search([s.ids for s in batch], params.replace(max_length=int(limits.max())), limits)
        finished = [False] * len(batch)
        try:
            for update in steps:
                for j, i in enumerate(batch_idx):
                    if finished[j]:
                        continue
                    toks = update.committed[j]
                    finished[j] = update.done[j] or (params.num_beams == 1 and repeating_tail(toks))
                    if finished[j]:
                        clock.tokens += len(toks)
                    yield i, list(toks), finished[j]
                if all(finished) or (cancel is not None and cancel.is_set()):
                    break
        finally:
            steps.close()
            clock.decode_s, clock.since = clock.seconds(), None
        if not all(finished):
            clock.cancelled = True
            return
