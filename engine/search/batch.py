"""One batch of source rows through the right search: padded and encoded once, then greedy, beam or constrained beam
search, as lazy step updates (engine.search.decoding.Steps).

The translator (engine.pipeline.translator) and the review window's sentence requests (engine.pipeline.alternatives)
both decode through here, so the choice of search lives in one place: any row with constraints sends the batch to
engine.search.constrained (only glossary requests need it, so it is imported on first use), else one beam means
greedy search.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.families.base import EncoderState, Model
from engine.search.decoding import GenerationParams, Steps, beam_search, greedy_search
from engine.search.types import RowExtras


def encode_rows(model: Model, rows: Sequence[Sequence[int]], pad_id: int) -> EncoderState:
    """Source id rows, padded with `pad_id` to the longest, through the model's encoder."""
    width = max(len(row) for row in rows)
    ids = np.full((len(rows), width), pad_id, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for r, row in enumerate(rows):
        ids[r, : len(row)] = row
        mask[r, : len(row)] = 1
    return model.encode(ids, mask)


def search_encoded(
    model: Model,
    enc: EncoderState,
    params: GenerationParams,
    max_lengths: np.ndarray,
    extras: Sequence[RowExtras | None] | None = None,
) -> Steps:
    """The search for encoded rows: `extras` (one RowExtras per row, or None) force target prefixes; any row with
    constraints sends the batch to the constrained beam search."""
    if extras is not None and any(e is not None and e.constraints for e in extras):
        from engine.search.constrained import constrained_beam_search  # only glossary requests need it

        return constrained_beam_search(model, enc, params, max_lengths, [e or RowExtras() for e in extras])
    search = greedy_search if params.num_beams == 1 else beam_search
    return search(model, enc, params, max_lengths, extras)


def search_batch(
    model: Model,
    batch: Sequence[Sequence[int]],
    params: GenerationParams,
    max_lengths: np.ndarray,
    extras: Sequence[RowExtras | None] | None = None,
) -> Steps:
    """The search for one batch of source id rows (see `search_encoded`), padded with the generation's pad token;
    the rows may emit every id their extras force (base.EncoderState.allowing: a shortlist would otherwise leave
    a prefix or a glossary term out)."""
    enc = encode_rows(model, batch, params.pad_id)
    forced = {t for e in extras or () if e is not None for t in forced_ids(e)}
    enc = enc.allowing(forced) if forced else enc
    # nothing else reads this state: one that can be told so lets its run overwrite it rather than copy it
    sole = getattr(enc, "sole", None)
    return search_encoded(model, sole() if sole is not None else enc, params, max_lengths, extras)


def forced_ids(extras: RowExtras) -> set[int]:
    """A row's forced target ids: its prefix's and every spelling of its constraints'."""
    return {*extras.prefix, *(t for c in extras.constraints for option in c.options for t in option)}
