"""The generation config Helsinki-NLP's opus-mt-en-zh and opus-mt-zh-en ship, for the checkpoints Qiao builds itself.

Every checkpoint the fixtures, the bench and the slow tier make carries it, so what they test and measure is what
users get: `renormalize_logits` (scores normalised again after the bans), the pad token banned as a bad word, EOS
forced at the length limit and 4 beams. A bench on a config nobody ships measures nothing users get: before this,
the multi-token guard bans of a real-config run took beam search off its TopK path, unseen (issue #26).
"""

from __future__ import annotations

import json
from pathlib import Path


def opus_mt_generation_config(pad_id: int, eos_id: int = 0) -> dict[str, object]:
    """generation_config.json of opus-mt-en-zh / -zh-en (their pad id is 65000; a smaller vocabulary passes its own)."""
    return {
        "bad_words_ids": [[pad_id]],
        "bos_token_id": eos_id,
        "decoder_start_token_id": pad_id,
        "eos_token_id": eos_id,
        "forced_eos_token_id": eos_id,
        "max_length": 512,
        "num_beams": 4,
        "pad_token_id": pad_id,
        "renormalize_logits": True,
    }


def carries_opus_mt_config(checkpoint: Path, pad_id: int, eos_id: int = 0) -> bool:
    """The checkpoint's generation_config.json holds every key of opus-mt's with its value (a cached checkpoint made
    before the config changed is refreshed by the caller)."""
    try:
        found = json.loads((Path(checkpoint) / "generation_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return all(found.get(key) == value for key, value in opus_mt_generation_config(pad_id, eos_id).items())
