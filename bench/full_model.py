"""Build a randomly initialised checkpoint with the exact opus-mt-en-zh shape.

The real weights cannot be downloaded here, but speed and memory depend only on the architecture, so a random model
with the same config is a faithful stand-in for benchmarking. The plain Marian initialisation makes greedy decoding
repeat one token (the tied output projection favours the token just fed in), which would hide bugs in parity checks
and lets some decoders take shortcuts, so the initialisation is reshaped until greedy output is varied; the build
checks that it is.

    python bench/full_model.py [--out .cache/full-random/checkpoint] [--tokenizer-from DIR] [--seed 0]
    python bench/full_model.py --direction zh-en      # opus-mt-zh-en's shape, tokenizer from the zh→en fixture
    python bench/full_model.py --tokenizer real --out .cache/full-random-real/checkpoint

`--tokenizer real` (issue #16) takes the tokenizer from bench/real_tokenizer.py instead of the fixture: two 32k-piece
unigram SentencePiece models trained on English and Chinese text found on this machine and their ~60k-piece joint
vocabulary, as OPUS-MT's are built, so tokenizer memory and speed are measured at the real model's scale. Either
way the vocabulary is filled to 65001 ids (the real model's), so the model's shape does not change.

The checkpoint names its languages as the tokenizer it copies does (tokenizer_config.json's source_lang and
target_lang), so `qiao model build` writes the matching format-4 `languages`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for `engine`
import engine  # noqa: F401 - for its side effect: telemetry off (engine/privacy.py), before any onnxruntime import
from engine.families.marian.converter.opus_mt_config import opus_mt_generation_config

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/, for real_tokenizer
DEFAULT_OUT = REPO_ROOT / ".cache" / "full-random" / "checkpoint"
DEFAULT_TOKENIZER_FROM = REPO_ROOT / "tests" / "fixtures" / "tiny_marian" / "checkpoint"
# opus-mt-zh-en has opus-mt-en-zh's shape (6+6 layers, d_model 512, 65001 ids); only the tokenizer differs.
TOKENIZER_FROM = {
    "en-zh": DEFAULT_TOKENIZER_FROM,
    "zh-en": REPO_ROOT / "tests" / "fixtures" / "tiny_marian_zh_en" / "checkpoint",
}
DEFAULT_LANGUAGES = ("eng", "zho")
TOKENIZERS = ("fixture", "real")  # --tokenizer: the tiny fixture's, or bench/real_tokenizer.py's real-scale one

VOCAB_SIZE = 65001
PAD_ID = 65000
EOS_ID = 0

# Helsinki-NLP/opus-mt-en-zh's config.json, field for field where it matters for shape and decoding.
OPUS_MT_EN_ZH_CONFIG: dict[str, object] = {
    "vocab_size": VOCAB_SIZE,
    "decoder_vocab_size": VOCAB_SIZE,
    "d_model": 512,
    "encoder_layers": 6,
    "decoder_layers": 6,
    "encoder_attention_heads": 8,
    "decoder_attention_heads": 8,
    "encoder_ffn_dim": 2048,
    "decoder_ffn_dim": 2048,
    "activation_function": "swish",
    "scale_embedding": True,
    "static_position_embeddings": True,
    "max_position_embeddings": 512,
    "pad_token_id": PAD_ID,
    "eos_token_id": EOS_ID,
    "bos_token_id": EOS_ID,
    "decoder_start_token_id": PAD_ID,
    "forced_eos_token_id": EOS_ID,
    "share_encoder_decoder_embeddings": True,
    "tie_word_embeddings": True,
    "normalize_before": False,
    "normalize_embedding": False,
    "add_bias_logits": False,
    "add_final_layer_norm": False,
    "dropout": 0.1,
    "attention_dropout": 0.0,
    "activation_dropout": 0.0,
    "init_std": 0.02,
}

GENERATION_CONFIG: dict[str, object] = opus_mt_generation_config(PAD_ID, EOS_ID)  # as opus-mt-en-zh ships it

# Found by measuring greedy output over seeds (see module docstring): a larger embedding makes the source matter,
# random-sign LayerNorm gains break the "copy the previous token" attractor of tied embeddings, and sharper, stronger
# cross-attention makes different sources give different outputs. Larger all-round Linear std collapses attention.
RANDOM_INIT: dict[str, float] = {
    "embedding_std": 0.3,
    "linear_std": 0.02,
    "cross_attention_qk_std": 0.1,
    "cross_attention_vo_std": 0.04,
}

# Build fails unless greedy output on random sources has at least this many distinct tokens per 30 on average.
MIN_DISTINCT_PER_30 = 15.0


def build_vocab(tokenizer_from: Path) -> dict[str, int]:
    """Extend the fixture's vocabulary to 65001 entries so that ids match the real model's layout.

    Real pieces keep their ids, synthetic ``▁zz{id}`` pieces fill the gap, and ``<pad>`` sits at 65000 as in
    opus-mt-en-zh; ``</s>`` must stay 0 because the model's eos id is 0.
    """
    return build_vocab_from(json.loads((tokenizer_from / "vocab.json").read_text(encoding="utf-8")), tokenizer_from)


def build_vocab_from(source: dict[str, int], where: object = "the tokenizer") -> dict[str, int]:
    """`build_vocab` of a vocabulary already read: its pieces keep their ids, fillers up to 65000, ``<pad>`` last."""
    tokenizer_from = where
    pieces = [piece for piece, _ in sorted(source.items(), key=lambda kv: kv[1]) if piece != "<pad>"]
    if not pieces or pieces[0] != "</s>":
        raise ValueError(f"{tokenizer_from}/vocab.json must have '</s>' at id 0 (got {pieces[:1]})")
    if len(pieces) > PAD_ID:
        raise ValueError(f"{tokenizer_from}/vocab.json has {len(pieces)} pieces; at most {PAD_ID} fit")
    vocab = {piece: i for i, piece in enumerate(pieces)}
    for i in range(len(pieces), PAD_ID):
        piece = f"▁zz{i}"
        if piece in vocab:
            raise ValueError(f"synthetic piece {piece!r} collides with a real piece")
        vocab[piece] = i
    vocab["<pad>"] = PAD_ID
    assert len(vocab) == VOCAB_SIZE and vocab["</s>"] == EOS_ID
    return vocab


def _randomise(model: object, seed: int) -> None:
    """Re-initialise every weight from one seeded generator (deterministic across machines)."""
    import torch
    from torch import nn

    gen = torch.Generator().manual_seed(seed)
    linear_std = RANDOM_INIT["linear_std"]
    with torch.no_grad():
        for module in model.modules():  # type: ignore[attr-defined]
            if isinstance(module, nn.Linear):
                module.weight.copy_(torch.randn(module.weight.shape, generator=gen) * linear_std)
                if module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, nn.LayerNorm):
                signs = torch.randint(0, 2, module.weight.shape, generator=gen) * 2.0 - 1.0
                module.weight.copy_(signs)
                module.bias.zero_()
        for layer in model.model.decoder.layers:  # type: ignore[attr-defined]
            attn = layer.encoder_attn
            for proj, key in (
                (attn.q_proj, "cross_attention_qk_std"),
                (attn.k_proj, "cross_attention_qk_std"),
                (attn.v_proj, "cross_attention_vo_std"),
                (attn.out_proj, "cross_attention_vo_std"),
            ):
                proj.weight.mul_(RANDOM_INIT[key] / linear_std)
        shared = model.model.shared.weight  # type: ignore[attr-defined]
        shared.copy_(torch.randn(shared.shape, generator=gen) * RANDOM_INIT["embedding_std"])
        shared[PAD_ID].zero_()


def greedy_diversity(model: object, seed: int = 1, batch: int = 8, src_len: int = 20, new_tokens: int = 30) -> float:
    """Mean number of distinct tokens per greedy output on random sources (1.0 means one repeated token)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(1, PAD_ID, (batch, src_len - 1), generator=gen)
    src = torch.cat([src, torch.full((batch, 1), EOS_ID)], dim=1)
    with torch.no_grad():
        out = model.generate(  # type: ignore[attr-defined]
            src,
            num_beams=1,
            do_sample=False,
            min_new_tokens=new_tokens,
            max_new_tokens=new_tokens,
            forced_eos_token_id=None,
        )
    seqs = out[:, 1:].tolist()
    return sum(len(set(s)) for s in seqs) / len(seqs)


def checkpoint_languages(tokenizer_from: Path) -> tuple[str, str]:
    """(source_lang, target_lang) as the tokenizer's checkpoint names them; eng→zho when it names none."""
    try:
        cfg = json.loads((tokenizer_from / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return DEFAULT_LANGUAGES
    src, tgt = cfg.get("source_lang"), cfg.get("target_lang")
    return (src, tgt) if isinstance(src, str) and isinstance(tgt, str) and src and tgt else DEFAULT_LANGUAGES


def build_full_checkpoint(out_dir: str | Path, tokenizer_from: str | Path, seed: int = 0) -> Path:
    """Write a random opus-mt-shaped checkpoint (safetensors, generation config, Marian tokenizer files) in the
    direction of `tokenizer_from`."""
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    out = Path(out_dir)
    tok_src = Path(tokenizer_from)
    for name in ("source.spm", "target.spm", "vocab.json"):
        if not (tok_src / name).is_file():
            raise FileNotFoundError(f"tokenizer source {tok_src} lacks {name}")
    vocab = build_vocab(tok_src)

    torch.manual_seed(seed)
    config = MarianConfig(**OPUS_MT_EN_ZH_CONFIG, qiao_random_init={**RANDOM_INIT, "seed": seed})
    config.architectures = ["MarianMTModel"]
    model = MarianMTModel(config).eval()
    _randomise(model, seed)
    diversity = greedy_diversity(model)
    if diversity < MIN_DISTINCT_PER_30:
        raise RuntimeError(f"random init too degenerate: {diversity:.1f} distinct tokens per 30 (seed {seed})")

    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp, safe_serialization=True)
    GenerationConfig(**GENERATION_CONFIG).save_pretrained(tmp)
    for name in ("source.spm", "target.spm"):
        shutil.copyfile(tok_src / name, tmp / name)
    (tmp / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False, indent=1), encoding="utf-8")
    source_lang, target_lang = checkpoint_languages(tok_src)
    tokenizer_config = {
        "tokenizer_class": "MarianTokenizer",
        "source_lang": source_lang,
        "target_lang": target_lang,
        "separate_vocabs": False,
        "model_max_length": 512,
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "pad_token": "<pad>",
    }
    (tmp / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=1), encoding="utf-8")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    print(f"wrote {out} (greedy diversity {diversity:.1f} distinct tokens per 30)")
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--direction", choices=sorted(TOKENIZER_FROM), default="en-zh")
    parser.add_argument("--tokenizer-from", type=Path, help="default: the tiny fixture of --direction")
    parser.add_argument(
        "--tokenizer",
        choices=TOKENIZERS,
        default="fixture",
        help="real: build (once) and use bench/real_tokenizer.py's 2 × 32k-piece tokenizer (en-zh only)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.tokenizer == "real" and args.direction != "en-zh":
        parser.error("--tokenizer real is built for en-zh only")
    build_full_checkpoint(
        args.out, args.tokenizer_from or tokenizer_dir(args.tokenizer, args.direction), seed=args.seed
    )
    return 0


def tokenizer_dir(tokenizer: str, direction: str = "en-zh") -> Path:
    """Where the checkpoint's tokenizer files come from: the fixture of `direction`, or the real-scale tokenizer
    (built into .cache/real-tokenizer/ on first use, a few minutes)."""
    if tokenizer == "real":
        from real_tokenizer import build_real_tokenizer

        return build_real_tokenizer()
    return TOKENIZER_FROM[direction]


if __name__ == "__main__":
    sys.exit(main())
