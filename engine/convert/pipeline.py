"""`qiao model build`: checkpoint → ONNX graphs → FP32 + INT8 files → tokenizer.json → manifest → validation."""

from __future__ import annotations

import json
import platform
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from engine import __version__, families
from engine.bundle.manifest import FORMAT_VERSION, MANIFEST, sha256_file
from engine.bundle.schema import DERIVED_METHODS, SEAL
from engine.bundle.writing import check_out_dir, install_staged, staging_dir, write_manifest
from engine.errors import BuildError, CheckpointError
from engine.families.marian.converter.checkpoint import load_marian, resolve_checkpoint
from engine.languages import default_pair

SUPPORTED_GENERATION = {
    "repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
    "encoder_no_repeat_ngram_size": 0,
    "num_beam_groups": 1,
    "diversity_penalty": 0.0,
    "do_sample": False,
}


class Progress:
    """Numbered steps on stderr, so a long build says what it is doing."""

    def __init__(self, steps: int, quiet: bool = False) -> None:
        self.steps, self.n, self.quiet = steps, 0, quiet
        self.t0 = time.perf_counter()

    def step(self, message: str) -> None:
        self.n += 1
        if not self.quiet:
            elapsed = time.perf_counter() - self.t0
            print(f"[{self.n}/{self.steps}] {message} (+{elapsed:.0f} s)", file=sys.stderr, flush=True)

    def bar(self, total: int, desc: str):
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit="sent", disable=self.quiet, file=sys.stderr, leave=False)


def _generation_defaults(model) -> dict:
    gen = model.generation_config
    cfg = gen.to_dict()
    for key, neutral in SUPPORTED_GENERATION.items():
        value = cfg.get(key)
        if value is not None and value != neutral:
            raise BuildError(f"the checkpoint's generation config sets {key}={value!r}, which Qiao does not implement")
    eos = gen.eos_token_id
    return {
        "num_beams": int(gen.num_beams or 1),
        "max_length": int(gen.max_length or 512),
        "min_length": int(gen.min_length or 0),
        "bad_words_ids": [list(map(int, w)) for w in (gen.bad_words_ids or [])],
        "decoder_start_token_id": int(
            gen.decoder_start_token_id
            if gen.decoder_start_token_id is not None
            else model.config.decoder_start_token_id
        ),
        "eos_token_id": eos if isinstance(eos, list) else int(eos if eos is not None else model.config.eos_token_id),
        "pad_token_id": int(gen.pad_token_id if gen.pad_token_id is not None else model.config.pad_token_id),
        "forced_eos_token_id": gen.forced_eos_token_id,
        "length_penalty": float(gen.length_penalty),
        "early_stopping": gen.early_stopping,
        "renormalize_logits": bool(gen.renormalize_logits),
    }


def _lookup_tables(model):
    """The embedding tables the bundle must store besides the output layer's matrix (engine.convert.quantize.Tables).

    A shared, tied checkpoint stores one table (encoder, decoder and head are the same matrix). With an untied
    output layer (`tie_word_embeddings: false`) the decoder's table is stored too; with separate vocabularies
    (`share_encoder_decoder_embeddings: false`) the encoder's as well, whenever it differs from the decoder's."""
    import torch

    from engine.convert.quantize import Tables

    enc = model.model.encoder.embed_tokens.weight
    dec = model.model.decoder.embed_tokens.weight
    head = model.get_output_embeddings().weight
    if dec.shape != head.shape:
        raise BuildError(f"the output layer is {list(head.shape)}, the decoder's embedding {list(dec.shape)}")
    same_source = enc.shape == dec.shape and torch.equal(enc, dec)
    return Tables(
        target=None if torch.equal(dec, head) else dec.detach().float().numpy(),
        source=None if same_source else enc.detach().float().numpy(),
    )


def _versions() -> dict:
    import onnx
    import onnxruntime
    import torch
    import transformers

    return {
        "qiao": __version__,
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
        "python": platform.python_version(),
    }


_HEAD_TEXT = {
    "columns": "lm_head: DynamicQuantizeMatMul, 7-bit weights with one scale per token, u8 activations",
    "blocks": "lm_head: MatMulNBits 8-bit, blocks of 128, int8 compute",
}


def build_bundle(
    source: str,
    out_dir: Path,
    eval_tsv: Path | None = None,
    model_id: str | None = None,
    bleu_margin: float = 1.0,
    eval_limit: int = 500,
    quiet: bool = False,
    overwrite: bool = False,
    source_lang: str | None = None,
    target_lang: str | None = None,
    int8_head: str = "columns",
) -> dict:
    """Build a verified bundle in `out_dir`; returns the manifest. Raises CheckpointError / BuildError.

    `int8_head`: the INT8 output projection's kernel, "columns" (DynamicQuantizeMatMul, per-token int8, its own copy
    in int8/head.bin) or "blocks" (MatMulNBits over the lookup table; see engine/convert/quantize.py for the
    measurements behind the default).

    The pair is the checkpoint's own (tokenizer_config.json, else the `opus-mt-XX-YY` id); `source_lang` and
    `target_lang` override it ("en", "zh", or Marian's "eng", "zho")."""
    import onnx
    import torch

    from engine.convert import quantize, validate
    from engine.families.marian import head_cache
    from engine.families.marian.converter import graphs
    from engine.families.marian.converter.tokenizer_json import build_tokenizer_json
    from engine.families.marian.model import sinusoidal_positions

    if int8_head not in quantize.INT8_HEADS:
        raise BuildError(f"unknown INT8 head {int8_head!r} (choose one of {', '.join(quantize.INT8_HEADS)})")
    out_dir = Path(out_dir)
    check_out_dir(out_dir, overwrite, source)
    progress = Progress(7, quiet)
    progress.step(f"Resolving checkpoint {source}")
    ckpt = resolve_checkpoint(source, model_id, source_lang, target_lang)
    # a wrong or malformed eval file fails now, not after minutes of export
    eval_set = validate.read_eval_tsv(eval_tsv, eval_limit, source=ckpt.source_lang) if eval_tsv else None
    progress.step(f"Loading {ckpt.model_id} ({ckpt.revision})")
    torch.manual_seed(0)
    try:
        model = load_marian(ckpt.path)
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"cannot load the checkpoint at {ckpt.path}: {exc}") from exc
    cfg = model.config
    if cfg.model_type != "marian" or getattr(cfg, "normalize_before", False):  # checked on config.json already
        raise BuildError("only post-norm MarianMT checkpoints are supported")
    tables = _lookup_tables(model)
    target_vocab = graphs.target_vocab_size(cfg)
    table = model.model.encoder.embed_positions.weight.detach().numpy()
    if not (table == sinusoidal_positions(*table.shape)).all():
        raise BuildError("the checkpoint's position table differs from Marian's sinusoidal formula")
    generation = _generation_defaults(model)

    staging = staging_dir(out_dir)
    staged_seal = None
    try:
        progress.step("Building the encoder and decoder-step ONNX graphs")
        encoder, encoder_io = graphs.build_encoder(model)
        decoder, decoder_io = graphs.build_decoder(model)
        progress.step("Writing the FP32 model and quantizing INT8")
        fp32 = quantize.write_fp32(encoder, decoder, staging / "fp32", tables)
        int8 = quantize.write_int8(encoder, decoder, staging / "int8", head=int8_head, tables=tables)
        del encoder, decoder
        scorer, scorer_io = graphs.build_scorer(target_vocab, generation["renormalize_logits"])
        onnx.save(scorer, str(staging / "scorer.onnx"))
        progress.step("Converting the tokenizer")
        tok_info = build_tokenizer_json(ckpt.path, staging / "tokenizer.json")
        pair = default_pair(ckpt.source_lang, ckpt.target_lang, tok_info.language_tokens)
        license_text = (
            f"{ckpt.attribution}\n\nModel: {ckpt.model_id} (revision {ckpt.revision})\nLicense: {ckpt.license}\n"
        )
        (staging / "MODEL_LICENSE.txt").write_text(license_text, encoding="utf-8")
        separate = tables.source is not None
        manifest = {
            # format 5 names the family whose code runs the bundle (engine.families); a Qiao that reads format 4
            # only refuses it, as it must a bundle with separate vocabularies
            "format_version": FORMAT_VERSION,
            "family": families.MARIAN,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "model": {
                "id": ckpt.model_id,
                "revision": ckpt.revision,
                "architecture": "MarianMTModel",
                "license": ckpt.license,
                "attribution": ckpt.attribution,
            },
            "tools": _versions(),
            "config": {
                "d_model": cfg.d_model,
                "encoder_layers": cfg.encoder_layers,
                "decoder_layers": cfg.decoder_layers,
                "encoder_attention_heads": cfg.encoder_attention_heads,
                "decoder_attention_heads": cfg.decoder_attention_heads,
                "ffn_dim": cfg.decoder_ffn_dim,
                "vocab_size": target_vocab,  # the output layer's: logits, scorer, decoder lookups
                **({"source_vocab_size": int(cfg.vocab_size)} if separate else {}),
                "max_position_embeddings": cfg.max_position_embeddings,
                "activation": cfg.activation_function,
                "embed_scale": graphs.embed_scale(cfg),
            },
            "generation": generation,
            "tokenizer": {"file": "tokenizer.json", **tok_info.as_dict()},
            "languages": pair.as_dict(),
            "graphs": {
                "encoder": {"inputs": encoder_io.inputs, "outputs": encoder_io.outputs},
                "decoder": {"inputs": decoder_io.inputs, "outputs": decoder_io.outputs, "beams_share_cross": True},
                "scorer": {
                    "file": "scorer.onnx",
                    "inputs": scorer_io.inputs,
                    "outputs": scorer_io.outputs,
                    "renormalize": generation["renormalize_logits"],
                },
            },
            "precisions": {
                "fp32": {
                    "encoder": "fp32/encoder.onnx",
                    "decoder": "fp32/decoder.onnx",
                    **_tables_entry("fp32", fp32),
                },
                "int8": {
                    "encoder": "int8/encoder.onnx",
                    "decoder": "int8/decoder.onnx",
                    **_tables_entry("int8", int8),
                    "quantization": "layers: dynamic u8s8, per-tensor int8 weights (DynamicQuantizeMatMul); "
                    + _HEAD_TEXT[int8_head],
                },
            },
        }
        manifest.update(_derived_files(staging, {"int8": int8}))
        write_manifest(staging, manifest)
        staged_seal = str(manifest[SEAL])  # validation derives under this seal into the user's cache (removed below)

        progress.step("Validating ONNX FP32 and INT8 against PyTorch")
        if eval_set is None:
            eval_set = validate.tatoeba_or_builtin(pair.key, eval_limit)
        with progress.bar(len(eval_set.sources) * 2, f"validating on {eval_set.name}") as bar:
            report = validate.validate(ckpt.path, staging, eval_set, bleu_margin, progress=bar.update)
        (staging / "validation.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
        manifest["validation"] = {
            "file": "validation.json",
            "eval_set": report["eval_set"],
            "bleu_tokenize": report.get("bleu_tokenize"),
            "passed": report["passed"],
            "scores": report.get("scores"),
        }
        write_manifest(staging, manifest)
        if not report["passed"]:
            raise BuildError("validation failed: " + "; ".join(report["problems"]))
        install_staged(staging, out_dir)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
        if staged_seal is not None:
            head_cache.discard(staged_seal)
    progress.step(f"Bundle written to {out_dir}")
    return manifest


def _tables_entry(precision: str, written) -> dict:
    """A precision's `embedding` (the decoder's lookup table), `source_embedding` (separate vocabularies) and
    `head` (the output layer's own file) entries, paths relative to the bundle."""
    entry: dict = {"embedding": {**written.embedding.as_dict(), "file": f"{precision}/{written.embedding.file}"}}
    if written.source is not None:
        entry["source_embedding"] = {**written.source.as_dict(), "file": f"{precision}/{written.source.file}"}
    if written.head:
        entry["head"] = f"{precision}/{written.head}"
    return entry


def _derived_files(staging: Path, written: dict) -> dict:
    """The manifest's `derived` entry for each precision whose head is computed from its embedding table rather than
    shipped (engine.families.marian.head_cache): its size and sha256, then the staged copy is removed, so the bundle
    (and the validation that loads it) is what users get."""
    derived = {}
    for precision, files in written.items():
        if files.head_from is None:
            continue
        path = staging / precision / files.head
        derived[f"{precision}/{files.head}"] = {
            "from": f"{precision}/{files.head_from}",
            "method": DERIVED_METHODS[0],
            "size": path.stat().st_size,
            "sha256": sha256_file(path),
        }
        path.unlink()
    return {"derived": derived} if derived else {}


def bundle_sizes(bundle: Path, manifest: dict) -> dict[str, int]:
    """Bytes one precision needs on disk (its graphs and embedding plus the shared files)."""
    sizes = {}
    for precision in manifest["precisions"]:
        others = [p for p in manifest["precisions"] if p != precision]
        sizes[precision] = (
            sum(f["size"] for rel, f in manifest["files"].items() if not any(rel.startswith(o + "/") for o in others))
            + (bundle / MANIFEST).stat().st_size
        )
    return sizes
