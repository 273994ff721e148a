"""The decode driver: runs planned sentences through the search in batches, reporting every step, cancellable.

One run decodes a list of sentences batch by batch (engine.pipeline.batching) and yields (sentence, committed tokens,
output) after every decoder step, so a caller can stream partial text or wait for whole sentences: `output` is the
finished sentence's `SentenceOutput` (engine.search.types), None while it runs. A set `cancel` event stops it within
one decoder step; `Clock` records the decoding time, the tokens decoded and whether the run stopped early.

Sentences may need different bad words (the subtitle-artefact bans depend on each source), and bad words belong to
a whole search call: the sentences are grouped by their bans, each group batched in reading order, and the batches
of every group run in the order of their first sentence, so the usual single group decodes exactly as before and a
rare odd sentence costs one batch of its own, not a wrong ban for its neighbours.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from engine.pipeline.batching import batches
from engine.pipeline.length_limits import LengthRule, length_limit, reached_limit
from engine.pipeline.planning import Sentence
from engine.search.decoding import GenerationParams, StepUpdate
from engine.search.repetition import repeating_tail
from engine.search.types import Hypothesis, RowExtras, SentenceOutput

# (source id rows, params, per-row length limits[, one RowExtras per row]) → the search's step updates
# (Translator._search). `extras` is passed only when a row has some, so a search without the argument still works.
Search = Callable[..., Generator[StepUpdate, None, None]]

Bans = tuple[tuple[int, ...], ...]

# The score of an output the search did not score (a loop cut here, or a search that gives no outputs)
UNSCORED = math.nan


@dataclass
class Clock:
    """Decoding time and tokens of one run of `decode`, and whether it stopped early."""

    decode_s: float = 0.0  # batches done
    since: float | None = None  # when the batch being decoded started
    tokens: int = 0
    cancelled: bool = False

    def seconds(self) -> float:
        return self.decode_s + (time.perf_counter() - self.since if self.since is not None else 0.0)


def unscored(tokens: Sequence[int], repeated: bool = False) -> SentenceOutput:
    """The output of a sentence the search gave no SentenceOutput for: its tokens, no log-probabilities."""
    return SentenceOutput(Hypothesis(tuple(tokens), (), None, UNSCORED), repeated=repeated)


def is_scored(h: Hypothesis) -> bool:
    return len(h.logprobs) == len(h.tokens) and not math.isnan(h.score)


def plan_batches(
    sentences: Sequence[Sentence],
    bans: Sequence[Bans] | None,
    beams: int,
    model_max: int,
    rule: LengthRule | None = None,
) -> list[tuple[Bans, list[int]]]:
    """(bans, sentence indices) per batch: grouped by bans, batched in reading order, batches by first sentence."""
    groups: dict[Bans, list[int]] = {}
    for i in range(len(sentences)):
        groups.setdefault(bans[i] if bans is not None else (), []).append(i)
    out: list[tuple[Bans, list[int]]] = []
    for group_bans, members in groups.items():
        for batch in batches([len(sentences[i].ids) for i in members], beams, model_max, rule=rule):
            out.append((group_bans, [members[k] for k in batch]))
    out.sort(key=lambda item: item[1][0])
    return out


def decode(
    sentences: Sequence[Sentence],
    params: GenerationParams,
    search: Search,
    model_max: int,
    cancel: threading.Event | None,
    clock: Clock,
    *,
    extras: Sequence[RowExtras | None] | None = None,
    bans: Sequence[Bans] | None = None,
    rule: LengthRule | None = None,
) -> Iterator[tuple[int, list[int], SentenceOutput | None]]:
    """Decode `sentences` in batches: yields (index, committed tokens, output or None) after every step.

    `extras` (one per sentence, None for none) go to the search; `bans` (one per sentence) are added to the
    params' bad words for that sentence. A sentence caught repeating itself is finished here with its loop cut
    (`SentenceOutput.repeated`) when `params.stop_repeats` (the guards): with greedy decoding the row itself, in beam
    search its best running hypothesis. Without the guards a loop runs to the length limit, as the reference engines'
    outputs do. Stops early (`clock.cancelled`) when `cancel` is set, within one decoder step. Each sentence's length
    limit follows `rule` (engine.pipeline.length_limits, the direction's); an output that stopped at it has
    `SentenceOutput.cut` set."""
    for batch_bans, batch_idx in plan_batches(sentences, bans, params.num_beams, model_max, rule):
        if cancel is not None and cancel.is_set():
            clock.cancelled = True
            return
        batch = [sentences[i] for i in batch_idx]
        limits = np.array([length_limit(len(s.ids), model_max, rule) for s in batch], dtype=np.int64)
        clock.since = time.perf_counter()
        call = params.replace(max_length=int(limits.max()))
        if batch_bans:
            call = call.replace(bad_words=params.bad_words + batch_bans)
        rows = [s.ids for s in batch]
        row_extras = [extras[i] for i in batch_idx] if extras is not None else []
        if any(e is not None and (e.prefix or e.constraints) for e in row_extras):
            steps = search(rows, call, limits, [e or RowExtras() for e in row_extras])
        else:
            steps = search(rows, call, limits)
        finished = [False] * len(batch)
        try:
            for update in steps:
                for j, i in enumerate(batch_idx):
                    if finished[j]:
                        continue
                    toks, output = _step(update, j, params, int(limits[j]))
                    finished[j] = output is not None
                    if output is not None:
                        clock.tokens += len(toks)
                    yield i, toks, output
                if all(finished) or (cancel is not None and cancel.is_set()):
                    break
        finally:
            steps.close()
            clock.decode_s, clock.since = clock.seconds(), None
        if not all(finished):
            clock.cancelled = True
            return


def _step(update: StepUpdate, j: int, params: GenerationParams, limit: int) -> tuple[list[int], SentenceOutput | None]:
    """Row j after one step: (its tokens now, its output if it finished on this step, `cut` set when it stopped at
    its length `limit`)."""
    toks = list(update.committed[j])
    if update.done[j]:
        output = update.outputs[j] if j < len(update.outputs) else None
        if output is None:  # a search that gives no outputs: the tokens, unscored
            output = unscored(toks)
        forced_eos = params.forced_eos_id is not None
        if not output.repeated and reached_limit(len(output.best.tokens), limit, forced_eos):
            output = replace(output, cut=True)
        return list(output.best.tokens), output
    if not params.stop_repeats:
        return toks, None
    if params.num_beams == 1:
        if repeating_tail(toks):
            return toks, unscored(toks, repeated=True)
    elif j < len(update.best) and repeating_tail(update.best[j]):
        best = list(update.best[j])
        return best, unscored(best, repeated=True)
    return toks, None
