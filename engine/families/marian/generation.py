"""Marian's generation rules, read from a bundle's manifest (engine.families.base.GenerationSpec).

MarianMT starts decoding from the pad token (`decoder_start_token_id` = `pad_token_id` in every opus-mt config),
ends on `</s>`, and forces `</s>` at the length limit when its generation config says so (`forced_eos_token_id`).
A multi-target model (opus-mt-en-zh: Simplified, Traditional, Cantonese, ...) chooses the target language by a
`>>xx<<` token put before the source, never by the decoder; a one-target model (opus-mt-zh-en) has none. The
converter writes the ids into the manifest's `generation` section; the variants and their tokens are the manifest's
`languages` (engine.languages).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.families.base import TARGET_BY_SOURCE_TOKEN, TARGET_FIXED, GenerationSpec

if TYPE_CHECKING:
    from engine.bundle.manifest import Manifest


def generation_spec(manifest: Manifest) -> GenerationSpec:
    """The spec of a Marian bundle (its manifest already checked by engine.bundle.schema)."""
    gen = manifest.generation
    eos = gen["eos_token_id"]
    ends = tuple(int(e) for e in eos) if isinstance(eos, list) else (int(eos),)
    forced = gen.get("forced_eos_token_id")
    return GenerationSpec(
        decoder_start_id=int(gen["decoder_start_token_id"]),
        end_ids=ends,
        pad_id=int(gen["pad_token_id"]),
        forced_eos_id=None if forced is None else int(forced),
        target_language=TARGET_BY_SOURCE_TOKEN if any(v.token for v in manifest.pair.variants) else TARGET_FIXED,
    )
