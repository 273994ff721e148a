"""Bergamot's generation rules (engine.families.base.GenerationSpec), as Marian decodes Firefox's models.

* Start: no start token. Marian's first decoder input is a zero embedding (transformer.h embeddingsFromPrediction),
  which the model's first step feeds whatever id the searches pass (they pass `</s>`, the spec's start id).
* End: `</s>` (id 0 in every Marian SentencePiece vocabulary); nothing is forced at the length limit.
* One target language per model: nothing before the source, no target token.
* Length: Firefox runs `max-length-factor: 2`; Marian's beam search stops once `t + 1 ≥ 2 × source length` (`</s>`
  included), so a sentence of n source ids gets at most 2n target tokens. As engine.pipeline.length_limits counts
  (limit = ceil(ratio × (n − 1)) + slack + 2, the searches stopping at limit − 1 tokens), that is ratio 2, slack 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.families.base import TARGET_FIXED, GenerationSpec

if TYPE_CHECKING:
    from engine.bundle.manifest import Manifest

MAX_LENGTH_FACTOR = 2.0  # Firefox's max-length-factor
LENGTH_RULE = (MAX_LENGTH_FACTOR, 1)  # (ratio, slack): at most 2 × (source ids incl. </s>) target tokens


def generation_spec(manifest: Manifest) -> GenerationSpec:
    """The spec of a Bergamot bundle (its manifest already checked by engine.bundle.schema)."""
    tok = manifest.tokenizer
    eos = int(tok["eos_id"])
    return GenerationSpec(
        decoder_start_id=eos,  # ignored: the first step's input is a zero embedding
        end_ids=(eos,),
        pad_id=int(tok["pad_id"]),
        forced_eos_id=None,
        target_language=TARGET_FIXED,
        length_rule=LENGTH_RULE,
    )
