"""Is this checkpoint a Marian model Qiao can build? Decided from config.json and the weights' names alone.

Why before any weights are loaded: transformers loads any BART-like config as `MarianMTModel`, filling the
parameters it does not find with random values, and crashes on others; mBART-50 built a graph without error that
computed the wrong thing (its pre-norm layers, embedding LayerNorm and final LayerNorms were never read). So the
family is an allow-list: the model type, every config key (a key Qiao does not know may change the computation),
the values of the keys that select a computation Qiao's graphs do not implement, and the parameter names in the
safetensors header (read without the tensors). Anything else is refused with one line that says what and why.
"""

from __future__ import annotations

import json
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from engine.errors import CheckpointError

MODEL_TYPE = "marian"
# The feed-forward activations the graphs implement (engine.families.marian.converter.graphs.feed_forward), by
# transformers' names.
ACTIVATIONS = ("swish", "silu", "relu", "gelu")
# Keys of transformers' PretrainedConfig (4.57) and of MarianConfig: known, and either harmless to the computation
# or read by the build (shapes, ids, activation, scale_embedding, the embedding sharing).
GENERIC_KEYS = frozenset(
    [
        "_name_or_path",
        "add_cross_attention",
        "architectures",
        "bad_words_ids",
        "begin_suppress_tokens",
        "bos_token_id",
        "chunk_size_feed_forward",
        "cross_attention_hidden_size",
        "decoder_start_token_id",
        "diversity_penalty",
        "do_sample",
        "dtype",
        "early_stopping",
        "encoder_no_repeat_ngram_size",
        "eos_token_id",
        "exponential_decay_length_penalty",
        "finetuning_task",
        "forced_bos_token_id",
        "forced_eos_token_id",
        "id2label",
        "is_decoder",
        "is_encoder_decoder",
        "label2id",
        "length_penalty",
        "max_length",
        "min_length",
        "model_type",
        "no_repeat_ngram_size",
        "num_beam_groups",
        "num_beams",
        "num_return_sequences",
        "output_attentions",
        "output_hidden_states",
        "output_scores",
        "pad_token_id",
        "prefix",
        "problem_type",
        "pruned_heads",
        "remove_invalid_values",
        "repetition_penalty",
        "return_dict",
        "return_dict_in_generate",
        "sep_token_id",
        "suppress_tokens",
        "task_specific_params",
        "temperature",
        "tf_legacy_loss",
        "tie_encoder_decoder",
        "tie_word_embeddings",
        "tokenizer_class",
        "top_k",
        "top_p",
        "torchscript",
        "torch_dtype",
        "transformers_version",
        "typical_p",
        "use_bfloat16",
        "gradient_checkpointing",
    ]
)
# Keys Qiao's own checkpoint builders add as notes (bench/full_model.py records its random initialisation under
# `qiao_random_init`): transformers ignores them and so does the computation.
OWN_PREFIX = "qiao_"
MARIAN_KEYS = frozenset(
    [
        "activation_dropout",
        "activation_function",
        "attention_dropout",
        "d_model",
        "decoder_attention_heads",
        "decoder_ffn_dim",
        "decoder_layerdrop",
        "decoder_layers",
        "decoder_vocab_size",
        "dropout",
        "encoder_attention_heads",
        "encoder_ffn_dim",
        "encoder_layerdrop",
        "encoder_layers",
        "init_std",
        "max_position_embeddings",
        "num_hidden_layers",
        "scale_embedding",
        "share_encoder_decoder_embeddings",
        "use_cache",
        "vocab_size",
        "classif_dropout",
        "classifier_dropout",
        "extra_pos_embeddings",
    ]
)
# BART-era keys old opus-mt configs still carry: accepted only at the value that means Marian's computation.
MARIAN_VALUES: dict[str, object] = {
    "normalize_before": False,  # post-norm residual blocks
    "add_final_layer_norm": False,  # no LayerNorm after the last encoder/decoder layer
    "normalize_embedding": False,  # no LayerNorm on the embeddings
    "layernorm_embedding": False,  # mBART's name for it
    "add_bias_logits": False,
    "static_position_embeddings": True,  # Marian's sinusoidal table
    "pruned_heads": {},
    "is_decoder": False,
    "add_cross_attention": False,
    "is_encoder_decoder": True,
}
_LAYER_PARTS = {
    "encoder": ("self_attn", "self_attn_layer_norm", "fc1", "fc2", "final_layer_norm"),
    "decoder": (
        "self_attn",
        "self_attn_layer_norm",
        "encoder_attn",
        "encoder_attn_layer_norm",
        "fc1",
        "fc2",
        "final_layer_norm",
    ),
}
_ATTENTION = ("q_proj", "k_proj", "v_proj", "out_proj")
# Tables transformers derives when they are absent (tied to model.shared, or Marian's sinusoidal positions).
_OPTIONAL_NAMES = frozenset(
    {
        "final_logits_bias",
        "lm_head.weight",
        "model.encoder.embed_tokens.weight",
        "model.decoder.embed_tokens.weight",
        "model.encoder.embed_positions.weight",
        "model.decoder.embed_positions.weight",
    }
)
_MAX_HEADER = 100 << 20


@dataclass(frozen=True)
class MarianConfigFacts:
    """What the checks read from config.json that the build needs to know early."""

    activation: str
    separate_vocabularies: bool  # share_encoder_decoder_embeddings: false
    tied_head: bool  # tie_word_embeddings (default true)


def read_config(path: Path) -> dict:
    """config.json as a dict; CheckpointError when it is missing or not a JSON object."""
    try:
        raw = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CheckpointError(f"{path} has no config.json: not a Hugging Face checkpoint") from None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path}/config.json is unreadable: {exc}") from None
    if not isinstance(raw, dict):
        raise CheckpointError(f"{path}/config.json is not a JSON object")
    return raw


def check_config(raw: dict, where: str) -> MarianConfigFacts:
    """Refuse (CheckpointError, one line) a config that is not Marian, or a Marian config whose computation Qiao's
    graphs do not implement. `where` names the checkpoint in the message."""
    model_type = raw.get("model_type")
    if model_type != MODEL_TYPE:
        arch = ", ".join(raw.get("architectures") or []) or "no architecture named"
        raise CheckpointError(
            f"{where} is a {model_type!r} checkpoint ({arch}), not Marian: Qiao builds Marian (opus-mt) models only"
        )
    unknown = sorted(
        k
        for k in raw
        if k not in GENERIC_KEYS and k not in MARIAN_KEYS and k not in MARIAN_VALUES and not k.startswith(OWN_PREFIX)
    )
    if unknown:
        raise CheckpointError(
            f"{where}: config.json sets {', '.join(unknown)}, which Marian does not have; "
            "Qiao cannot tell whether it changes the computation, so it does not build this checkpoint"
        )
    for key, wanted in MARIAN_VALUES.items():
        if key in raw and raw[key] != wanted and not (wanted == {} and raw[key] in (None, {})):
            raise CheckpointError(
                f"{where}: config.json sets {key}={json.dumps(raw[key])}; Qiao's Marian graphs implement only "
                f"{key}={json.dumps(wanted)}"
            )
    activation = raw.get("activation_function", "gelu")
    if activation not in ACTIVATIONS:
        raise CheckpointError(
            f"{where}: activation {activation!r} is not supported (Qiao builds {', '.join(ACTIVATIONS)})"
        )
    if not isinstance(raw.get("scale_embedding", False), bool):
        raise CheckpointError(f"{where}: config.json scale_embedding must be true or false")
    d_model = raw.get("d_model", 1024)
    for key in ("encoder_attention_heads", "decoder_attention_heads"):
        heads = raw.get(key, 16)
        if not isinstance(heads, int) or not isinstance(d_model, int) or heads < 1 or d_model % heads:
            raise CheckpointError(f"{where}: d_model {d_model} is not a multiple of {key} {heads}")
    return MarianConfigFacts(
        activation=activation,
        separate_vocabularies=raw.get("share_encoder_decoder_embeddings", True) is False,
        tied_head=raw.get("tie_word_embeddings", True) is not False,
    )


def expected_names(raw: dict) -> tuple[set[str], set[str]]:
    """(required, allowed) parameter names of a Marian checkpoint with `raw`'s layer counts."""
    required: set[str] = set()
    for side in ("encoder", "decoder"):
        for i in range(int(raw.get(f"{side}_layers", 12))):
            for part in _LAYER_PARTS[side]:
                prefix = f"model.{side}.layers.{i}.{part}"
                subs = _ATTENTION if part.endswith("attn") else ("",)
                for sub in subs:
                    base = f"{prefix}.{sub}" if sub else prefix
                    required |= {f"{base}.weight", f"{base}.bias"}
    allowed = required | _OPTIONAL_NAMES | {"model.shared.weight"}
    return required, allowed


def safetensors_names(path: Path) -> list[str] | None:
    """The tensor names of model.safetensors (its JSON header only) or of a sharded index; None for a
    pytorch_model.bin (its names cannot be listed without unpickling the weights)."""
    index = path / "model.safetensors.index.json"
    if index.is_file():
        try:
            weight_map = json.loads(index.read_text(encoding="utf-8"))["weight_map"]
            return list(weight_map)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"{index} is unreadable: {exc}") from None
    single = path / "model.safetensors"
    if not single.is_file():
        return None
    try:
        with open(single, "rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            if size > _MAX_HEADER:
                raise ValueError(f"a header of {size} bytes")
            header = json.loads(fh.read(size))
    except (OSError, ValueError, struct.error) as exc:
        raise CheckpointError(f"{single} is not a safetensors file: {exc}") from None
    return [name for name in header if name != "__metadata__"]


def check_names(names: list[str], raw: dict, where: str) -> None:
    """Refuse weights with parameters Marian does not have (mBART's layernorm_embedding, final layer norms, …)
    or without the ones every layer needs (transformers would fill them with random values)."""
    required, allowed = expected_names(raw)
    have = set(names)
    extra = sorted(have - allowed)
    if extra:
        shown = ", ".join(_short(extra))
        raise CheckpointError(f"{where}: the weights hold parameters Marian does not have ({shown})")
    missing = sorted(required - have)
    if not missing and not ({"model.shared.weight", "model.encoder.embed_tokens.weight"} & have):
        missing = ["model.shared.weight"]
    if missing:
        raise CheckpointError(f"{where}: the weights lack Marian parameters ({', '.join(_short(missing))})")


def _short(names: list[str], shown: int = 4) -> list[str]:
    """At most `shown` names, layer numbers folded (`layers.N`), then a count of the rest."""
    folded = list(dict.fromkeys(re.sub(r"\.layers\.\d+\.", ".layers.N.", n) for n in names))
    rest = len(folded) - shown
    return folded[:shown] + ([f"{rest} more"] if rest > 0 else [])


def check_checkpoint(path: Path, where: str | None = None) -> MarianConfigFacts:
    """The whole allow-list on a checkpoint folder: config.json, then the weights' names (no tensor is read)."""
    where = where or str(path)
    raw = read_config(path)
    facts = check_config(raw, where)
    names = safetensors_names(path)
    if names is not None:
        check_names(names, raw, where)
    return facts
