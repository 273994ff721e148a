"""Which source words each target token of a sentence was written from: the model's soft alignment (Marian's, as
bergamot-translator computes it: head 0 of the last decoder layer's cross-attention, per output token), turned into
source character spans for word-level highlighting.

Asked for on demand, like the alternatives (a sentence the window highlights), not computed with every translation:
the sentence's tokens are decoded again at batch 1, forced, and each step's attention read. At step i the decoder
reads token i-1 (the start token first) and writes token i, so that step's attention is token i's alignment. The
attention on the source's end token (and on a language token before it) is left out: a highlight needs a word.

A model whose decoder runs expose no attention (base.AligningRun; Marian bundles' graphs do not) raises
engine.errors.NotSupported.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.errors import NotSupported
from engine.families.base import AligningRun
from engine.pipeline.alternatives import SentenceRun
from engine.text.token_spans import source_spans

FEATURE = "alignment"


def align(run: SentenceRun, source: str, tokens: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """For each of `tokens` (a translation of `source`, end token excluded), the characters of `source` (start, end)
    the model attended to most writing it; (a, a) where it attended to no word (a source of no pieces)."""
    ids = run.source_ids(source)
    forced = run.prefix_ids(tokens)
    if not forced:
        return ()
    enc = run.encode([ids], forced)
    dec = run.model.start(enc, len(forced) + 1)
    if not isinstance(dec, AligningRun):
        raise NotSupported(FEATURE, "this model gives no word alignment (its decoder exposes no attention)")
    pieces = run.tok.pieces(source)
    first = 1 if run.settings.language_id is not None else 0  # the language token, read but not a word
    words = len(ids) - 1 - first  # without the end token
    spans = source_spans(pieces, source) if len(pieces) == words else ((0, 0),) * words
    out = []
    start_id = run.settings.defaults.decoder_start_id
    for token in (start_id, *forced[:-1]):
        dec.step(np.array([token], dtype=np.int64))
        if words <= 0:
            out.append((0, 0))
            continue
        attention = dec.alignment[0, first : first + words]
        out.append(spans[int(np.argmax(attention))])
    return tuple(out)
