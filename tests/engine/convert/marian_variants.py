"""Tiny random-initialised Marian checkpoints of each variant the build accepts (activations, separate source and
target vocabularies, an untied output layer), made in the test, seeded, in a few seconds.

The tokenizer files are the en→zh fixture's SentencePiece models. A shared-vocabulary variant keeps the fixture's
vocab.json; a separate-vocabulary one numbers each side's own pieces (`</s>` 0, `<unk>` 1, `<pad>` 2 on both sides,
as one pad id serves both embeddings), with the fixture's `>>xx<<` tokens on the source side. Weights follow
bench/full_model.py's RANDOM_INIT, scaled down, so greedy output varies with the source instead of repeating one
token (a parity check on a degenerate model proves little).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import CHECKPOINT

SPECIALS = ("</s>", "<unk>", "<pad>")
LANGUAGE_TOKENS = (">>cmn<<", ">>cmn_Hans<<", ">>cmn_Hant<<", ">>yue_Hans<<", ">>yue_Hant<<", ">>zho_Hans<<")
_NORMAL = 1


def _spm_pieces(path: Path) -> list[str]:
    from sentencepiece import sentencepiece_model_pb2 as model_pb2

    proto = model_pb2.ModelProto()
    proto.ParseFromString(path.read_bytes())
    return [p.piece for p in proto.pieces if p.type == _NORMAL]


def _side_vocab(pieces: list[str], extra: tuple[str, ...] = ()) -> dict[str, int]:
    ordered = list(dict.fromkeys([*SPECIALS, *extra, *pieces]))
    return {piece: i for i, piece in enumerate(ordered)}


def build_variant(
    out: Path,
    *,
    activation: str = "swish",
    separate: bool = False,
    tied: bool = True,
    seed: int = 0,
    readme: str | None = None,
) -> Path:
    """Write a checkpoint folder at `out` and return it."""
    import torch
    from torch import nn
    from transformers import GenerationConfig, MarianConfig, MarianMTModel

    out.mkdir(parents=True)
    for name in ("source.spm", "target.spm"):
        shutil.copyfile(CHECKPOINT / name, out / name)
    tokenizer_config: dict = {"source_lang": "eng", "target_lang": "zho", "model_max_length": 512}
    if separate:
        source = _side_vocab(_spm_pieces(out / "source.spm"), LANGUAGE_TOKENS)
        target = _side_vocab(_spm_pieces(out / "target.spm"))
        (out / "vocab.json").write_text(json.dumps(source, ensure_ascii=False), encoding="utf-8")
        (out / "target_vocab.json").write_text(json.dumps(target, ensure_ascii=False), encoding="utf-8")
        tokenizer_config["separate_vocabs"] = True
        src_size, tgt_size, pad = len(source), len(target), source["<pad>"]
    else:
        shutil.copyfile(CHECKPOINT / "vocab.json", out / "vocab.json")
        vocab = json.loads((out / "vocab.json").read_text(encoding="utf-8"))
        src_size = tgt_size = len(vocab)
        pad = vocab["<pad>"]
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config), encoding="utf-8")
    if readme is not None:
        (out / "README.md").write_text(readme, encoding="utf-8")

    torch.manual_seed(seed)
    config = MarianConfig(
        vocab_size=src_size,
        decoder_vocab_size=tgt_size,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        activation_function=activation,
        max_position_embeddings=128,
        pad_token_id=pad,
        eos_token_id=0,
        decoder_start_token_id=pad,
        forced_eos_token_id=0,
        share_encoder_decoder_embeddings=not separate,
        tie_word_embeddings=tied,
        scale_embedding=True,
    )
    config.architectures = ["MarianMTModel"]
    model = MarianMTModel(config).eval()
    if separate:  # transformers 4.57 sizes the decoder's table by the source vocabulary: give it the target's
        model.model.decoder.embed_tokens = nn.Embedding(tgt_size, config.d_model, pad)
        if tied:
            model.lm_head.weight = model.model.decoder.embed_tokens.weight
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.Linear):
                module.weight.copy_(torch.randn(module.weight.shape, generator=gen) * 0.1)
                if module.bias is not None:
                    module.bias.copy_(torch.randn(module.bias.shape, generator=gen) * 0.02)
            elif isinstance(module, nn.LayerNorm):
                module.weight.copy_(torch.randint(0, 2, module.weight.shape, generator=gen) * 2.0 - 1.0)
                module.bias.copy_(torch.randn(module.bias.shape, generator=gen) * 0.05)
        tables = [model.model.encoder.embed_tokens, model.model.decoder.embed_tokens]
        if not tied:
            tables.append(model.lm_head)
        for table in {id(t.weight): t for t in tables}.values():
            table.weight.copy_(torch.randn(table.weight.shape, generator=gen) * 0.3)
            table.weight[pad].zero_()
        model.final_logits_bias.copy_(torch.randn(model.final_logits_bias.shape, generator=gen) * 0.1)
    if separate and tied:  # the shared head is saved once, under the decoder's name (load_marian ties it back)
        from safetensors.torch import save_file

        state = {k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}
        save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
        config.save_pretrained(out)
    else:
        model.save_pretrained(out, safe_serialization=True)
    generation = {
        "bad_words_ids": [[pad]],
        "decoder_start_token_id": pad,
        "eos_token_id": 0,
        "forced_eos_token_id": 0,
        "max_length": 64,
        "num_beams": 4,
        "pad_token_id": pad,
        "renormalize_logits": True,
    }
    GenerationConfig(**generation).save_pretrained(out)
    return out
