"""Which sentences decode together: consecutive runs bounded in count and in decoder-cache positions.

Decoder rows (sentences × beams) × (source + target length limit) per batch. Each position costs
2·layers·d_model floats of cache (24.6 kB for opus-mt-en-zh), so BATCH_POSITIONS bounds a batch's caches to
~75 MB even when every hypothesis runs to its length limit, whatever the input (the source positions count per row,
though bundles whose beams share their sentence's cross K/V hold them once per sentence: a conservative bound).

That is what a large batch holds however early it stops: numpy asks Linux for transparent huge pages on arrays of
4 MB or more, and the first step writes a position into every (row, head) block of the [rows, heads, positions, 64]
layout, so every huge page. An anonymous mapping in 4 kB pages kept only the filled positions resident, but made the
bench paragraph 3.4 % slower at 2 threads and 7.2 % at 1 (page faults and TLB misses reading the cache; Intel Xeon,
KVM guest): not taken.

3072 rather than 2048: a pasted paragraph of five 22–25-token sentences at beam 4 needs ~2,200 positions. Under
2048 its fifth sentence decoded alone after the other four, ~80 more steps: 2,951 → 2,135 ms as one batch
(full-size random model, real-scale tokenizer, 2 threads, Intel Xeon; 2,926 → 2,102 at 1 thread).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from engine.pipeline.length_limits import LengthRule, length_limit

BATCH_SENTENCES = 8
BATCH_POSITIONS = 3072


def batches(
    lengths: Sequence[int],
    beams: int,
    model_max: int,
    max_sentences: int | None = None,
    max_positions: int | None = None,
    rule: LengthRule | None = None,
) -> Iterator[list[int]]:
    """Indices of consecutive sentences (so streaming stays in reading order), given their source lengths and the
    direction's length rule (engine.pipeline.length_limits).

    The limits default to BATCH_SENTENCES / BATCH_POSITIONS, read at call time (tests lower them)."""
    max_sentences = BATCH_SENTENCES if max_sentences is None else max_sentences
    max_positions = BATCH_POSITIONS if max_positions is None else max_positions
    batch: list[int] = []
    src = limit = 0
    for i, n in enumerate(lengths):
        own_limit = length_limit(n, model_max, rule)
        new_src, new_limit = max(src, n), max(limit, own_limit)
        cost = (len(batch) + 1) * beams * (new_src + new_limit)
        if batch and (len(batch) >= max_sentences or cost > max_positions):
            yield batch
            batch, new_src, new_limit = [], n, own_limit
        batch.append(i)
        src, limit = new_src, new_limit
    if batch:
        yield batch
