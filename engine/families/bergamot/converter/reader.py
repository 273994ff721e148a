"""Read a Firefox Translations (Bergamot) model: a Marian transformer encoder with an SSRU decoder, as `.npz`,
float32 `.bin`, or intgemm8 `.bin` with or without activation multipliers (alphas).

Marian fills any parameter it does not find with random values and ignores names it does not know, so a misnamed
weight translates silently into garbage. This reader therefore refuses, before decoding a single weight: an
architecture other than the one the engine computes (checked key by key in the embedded `special:model.yml`), and any
parameter set that differs from the exact allow-list that config implies (a missing, misnamed, extra or misshapen
parameter). What it returns is numpy only: float32 parameters (int8 ones dequantised), the raw int8 weights with
their multipliers, and the alphas.

Orientation: matrices are `[in, out]` as used in `x @ W` (intgemm8 payloads, stored transposed, are turned back);
embedding tables and `decoder_ff_logit_out_Wt` are `[vocab, dim]`; biases, LayerNorm parameters are 1-D.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import CheckpointError
from engine.families.bergamot.converter import marian_io, model_yml
from engine.families.bergamot.converter.marian_io import FLOAT32, INTGEMM8, META_NAME, Item

ALPHA_SUFFIX = "_QuantMultA"
OUTPUT_ALPHA_ALIAS = "none"  # the shortlisted output layer's alpha (scripts/alphas/extract_stats.py writes both)

# Every key Marian (browsermt v1.x and the upstream v1.12 that trained the published models) writes into model.yml.
# A key outside this set is refused: its meaning is unknown, so the engine cannot claim to compute the same thing.
KNOWN_KEYS = frozenset(
    [
        "type",
        "dim-vocabs",
        "dim-emb",
        "dim-rnn",
        "enc-cell",
        "enc-type",
        "enc-cell-depth",
        "enc-depth",
        "dec-depth",
        "dec-cell",
        "dec-cell-base-depth",
        "dec-cell-high-depth",
        "skip",
        "layer-normalization",
        "right-left",
        "input-types",
        "special-vocab",
        "tied-embeddings",
        "tied-embeddings-src",
        "tied-embeddings-all",
        "transformer-heads",
        "transformer-no-projection",
        "transformer-dim-ffn",
        "transformer-ffn-depth",
        "transformer-ffn-activation",
        "transformer-dim-aan",
        "transformer-aan-depth",
        "transformer-aan-activation",
        "transformer-aan-nogate",
        "transformer-preprocess",
        "transformer-postprocess",
        "transformer-postprocess-emb",
        "transformer-postprocess-top",
        "transformer-decoder-autoreg",
        "transformer-tied-layers",
        "transformer-guided-alignment-layer",
        "transformer-train-position-embeddings",
        "transformer-pool",
        "bert-train-type-embeddings",
        "bert-type-vocab-size",
        "ulr",
        "ulr-trainable-transformation",
        "ulr-dim-emb",
        "lemma-dim-emb",
        "output-omit-bias",
        "factors-combine",
        "factors-dim-emb",
        "lemma-dependency",
        "transformer-decoder-dim-ffn",
        "transformer-decoder-ffn-depth",
        "transformer-no-affine",
        "transformer-no-bias",
        "transformer-rnn-projection",
        "transformer-depth-scaling",
        "version",
    ]
)
# key: the values the engine computes (a missing key takes Marian's default, the first value).
REQUIRED_VALUES: dict[str, tuple[Any, ...]] = {
    "type": ("transformer",),
    "transformer-decoder-autoreg": ("rnn",),
    "dec-cell": ("ssru",),
    "transformer-preprocess": ("",),
    "transformer-postprocess": ("dan",),
    "transformer-postprocess-emb": ("d", ""),  # d = dropout: nothing at inference (no embedding LayerNorm)
    "transformer-postprocess-top": ("",),
    "transformer-ffn-depth": (2,),
    "transformer-ffn-activation": ("relu",),
    "transformer-decoder-ffn-depth": (0, 2),
    "transformer-train-position-embeddings": (False,),
    "layer-normalization": (False,),
    "output-omit-bias": (False,),
    "transformer-no-projection": (False,),
    "transformer-tied-layers": ([],),
    "transformer-pool": (False,),
    "transformer-rnn-projection": (False,),
    "transformer-no-affine": (False,),
    "transformer-no-bias": (False,),
    "transformer-depth-scaling": (False,),
    "skip": (False,),
    "right-left": (False,),
    "ulr": (False,),
    "lemma-dim-emb": (0,),
    "factors-dim-emb": (0,),
    "input-types": ([], None),
    "special-vocab": ([], None),
}
# Present in every model Marian writes; required because Marian's defaults for several differ from what the engine
# computes (transformer-decoder-autoreg defaults to self-attention, dec-cell to gru, the activation to swish).
REQUIRED_KEYS = (
    "type",
    "dim-vocabs",
    "dim-emb",
    "enc-depth",
    "dec-depth",
    "dec-cell",
    "transformer-heads",
    "transformer-dim-ffn",
    "transformer-decoder-autoreg",
    "transformer-ffn-activation",
    "transformer-preprocess",
    "transformer-postprocess",
)


@dataclass(frozen=True)
class Architecture:
    """What the engine needs from model.yml, and the parameter names the tying flags imply."""

    dim_emb: int
    dim_ffn: int  # the encoder's; the decoder's is dec_dim_ffn
    dec_dim_ffn: int
    heads: int
    enc_depth: int
    dec_depth: int
    src_vocab_size: int
    trg_vocab_size: int
    tied_embeddings: bool  # output layer = the target embedding table
    tied_embeddings_src: bool  # source and target embeddings are one `Wemb`
    tied_embeddings_all: bool  # one `Wemb` for source, target and output
    alignment_layer: int  # 1-based decoder layer whose cross-attention (head 0) gives the soft alignment

    @property
    def src_embedding(self) -> str:
        return "Wemb" if self.tied_embeddings_src or self.tied_embeddings_all else "encoder_Wemb"

    @property
    def trg_embedding(self) -> str:
        return "Wemb" if self.tied_embeddings_src or self.tied_embeddings_all else "decoder_Wemb"

    @property
    def output_tied(self) -> bool:
        return self.tied_embeddings or self.tied_embeddings_all

    @property
    def output_weight(self) -> str:
        """The [trg vocab, dim] table of the output layer (logits = h @ table.T + decoder_ff_logit_out_b)."""
        return self.trg_embedding if self.output_tied else "decoder_ff_logit_out_Wt"

    @property
    def head_dim(self) -> int:
        return self.dim_emb // self.heads


@dataclass(frozen=True)
class Int8Matrix:
    """An intgemm8 weight as stored: `q` int8 in the `[in, out]` orientation (embedding tables `[vocab, dim]`) and
    its multiplier `qm` (= 127 / max|W|), so W = q / qm (Marian dequantises embedding tables as q * (1/qm))."""

    q: np.ndarray
    qm: np.float32


@dataclass
class Checkpoint:
    """A model as read: the embedded config, the architecture, float32 parameters (every allowed name; int8 ones
    dequantised), the raw int8 weights, the alphas by weight name (`none` for the shortlisted output alias), and
    the gemm precision bergamot would use for the file (float32, int8shiftAll, int8shiftAlphaAll)."""

    config: dict[str, Any]
    arch: Architecture
    params: dict[str, np.ndarray]
    int8: dict[str, Int8Matrix] = field(default_factory=dict)
    alphas: dict[str, float] = field(default_factory=dict)
    gemm_precision: str = "float32"
    yaml_text: str = ""

    @property
    def is_int8(self) -> bool:
        return bool(self.int8)


def _refuse(source: str, problems: list[str]) -> None:
    if problems:
        lines = "\n".join(f"  - {p}" for p in problems)
        raise CheckpointError(f"{source}: not a model this engine can run exactly:\n{lines}")


def _as_int(config: dict[str, Any], key: str, problems: list[str]) -> int:
    value = config.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        problems.append(f"model.yml {key}: {value!r} is not a non-negative integer")
        return 0
    return value


def check_config(config: dict[str, Any], source: str = "model") -> Architecture:
    """The Architecture of a model.yml, or CheckpointError naming every key that differs from what the engine
    computes (architecture, pre/post-processing, activation, tying, vocabulary shape)."""
    problems = [f"model.yml lacks {key}" for key in REQUIRED_KEYS if key not in config]
    problems += [f"model.yml key {key!r} is unknown to this reader" for key in config if key not in KNOWN_KEYS]
    for key, allowed in REQUIRED_VALUES.items():
        if key in config and config[key] not in allowed:
            problems.append(f"model.yml {key}: {config[key]!r} (supported: {', '.join(repr(v) for v in allowed)})")
    _refuse(source, problems)
    dim = _as_int(config, "dim-emb", problems)
    heads = _as_int(config, "transformer-heads", problems)
    ffn = _as_int(config, "transformer-dim-ffn", problems)
    dec_ffn = config.get("transformer-decoder-dim-ffn", 0) or ffn
    enc_depth = _as_int(config, "enc-depth", problems)
    dec_depth = _as_int(config, "dec-depth", problems)
    vocabs = config.get("dim-vocabs")
    if not (isinstance(vocabs, list) and len(vocabs) == 2 and all(isinstance(v, int) and v > 0 for v in vocabs)):
        problems.append(f"model.yml dim-vocabs: {vocabs!r} (expected two sizes: source, target)")
        vocabs = [0, 0]
    if dim and heads and dim % heads:
        problems.append(f"dim-emb {dim} is not a multiple of transformer-heads {heads}")
    if not (dim and heads and ffn and enc_depth and dec_depth):
        problems.append("dim-emb, transformer-heads, transformer-dim-ffn, enc-depth and dec-depth must be positive")
    if not isinstance(dec_ffn, int) or isinstance(dec_ffn, bool) or dec_ffn < 0:
        problems.append(f"model.yml transformer-decoder-dim-ffn: {dec_ffn!r}")
    flags = {}
    for key in ("tied-embeddings", "tied-embeddings-src", "tied-embeddings-all"):
        value = config.get(key, False)
        if not isinstance(value, bool):
            problems.append(f"model.yml {key}: {value!r} is not true/false")
        flags[key] = bool(value)
    shared_table = flags["tied-embeddings-src"] or flags["tied-embeddings-all"]
    if shared_table and vocabs[0] != vocabs[1]:
        problems.append(f"one shared Wemb (tied-embeddings-src/all) needs equal dim-vocabs, not {vocabs}")
    layer = config.get("transformer-guided-alignment-layer", "last")
    if layer == "last" or layer is None:
        alignment_layer = dec_depth
    elif isinstance(layer, int) and not isinstance(layer, bool) and 1 <= layer <= max(dec_depth, 1):
        alignment_layer = layer
    elif isinstance(layer, str) and layer.isdigit() and 1 <= int(layer) <= max(dec_depth, 1):
        alignment_layer = int(layer)
    else:
        problems.append(f"model.yml transformer-guided-alignment-layer: {layer!r}")
        alignment_layer = dec_depth
    _refuse(source, problems)
    return Architecture(
        dim_emb=dim,
        dim_ffn=ffn,
        dec_dim_ffn=int(dec_ffn),
        heads=heads,
        enc_depth=enc_depth,
        dec_depth=dec_depth,
        src_vocab_size=int(vocabs[0]),
        trg_vocab_size=int(vocabs[1]),
        tied_embeddings=flags["tied-embeddings"],
        tied_embeddings_src=flags["tied-embeddings-src"],
        tied_embeddings_all=flags["tied-embeddings-all"],
        alignment_layer=alignment_layer,
    )


def _attention(prefix: str, dim: int) -> dict[str, tuple[int, ...]]:
    shapes: dict[str, tuple[int, ...]] = {}
    for part in "qkvo":
        shapes[f"{prefix}_W{part}"] = (dim, dim)
        shapes[f"{prefix}_b{part}"] = (1, dim)
    shapes[f"{prefix}_Wo_ln_scale"] = (1, dim)
    shapes[f"{prefix}_Wo_ln_bias"] = (1, dim)
    return shapes


def _ffn(prefix: str, dim: int, ffn: int) -> dict[str, tuple[int, ...]]:
    return {
        f"{prefix}_W1": (dim, ffn),
        f"{prefix}_b1": (1, ffn),
        f"{prefix}_W2": (ffn, dim),
        f"{prefix}_b2": (1, dim),
        f"{prefix}_ffn_ln_scale": (1, dim),
        f"{prefix}_ffn_ln_bias": (1, dim),
    }


def expected_parameters(arch: Architecture) -> dict[str, tuple[int, ...]]:
    """The exact parameter names and Marian shapes a model of `arch` has (alphas and model.yml aside)."""
    e = arch.dim_emb
    shapes: dict[str, tuple[int, ...]] = {}
    if arch.src_embedding == "Wemb":
        shapes["Wemb"] = (arch.src_vocab_size, e)
    else:
        shapes["encoder_Wemb"] = (arch.src_vocab_size, e)
        shapes["decoder_Wemb"] = (arch.trg_vocab_size, e)
    for layer in range(1, arch.enc_depth + 1):
        shapes |= _attention(f"encoder_l{layer}_self", e)
        shapes |= _ffn(f"encoder_l{layer}_ffn", e, arch.dim_ffn)
    for layer in range(1, arch.dec_depth + 1):
        rnn = f"decoder_l{layer}_rnn"
        shapes |= {f"{rnn}_W": (e, e), f"{rnn}_Wf": (e, e), f"{rnn}_bf": (1, e)}
        shapes |= {f"{rnn}_ffn_ln_scale": (1, e), f"{rnn}_ffn_ln_bias": (1, e)}
        shapes |= _attention(f"decoder_l{layer}_context", e)
        shapes |= _ffn(f"decoder_l{layer}_ffn", e, arch.dec_dim_ffn)
    if not arch.output_tied:
        shapes["decoder_ff_logit_out_Wt"] = (arch.trg_vocab_size, e)
    shapes["decoder_ff_logit_out_b"] = (1, arch.trg_vocab_size)
    return shapes


def is_gemm_weight(name: str) -> bool:
    """marian-conv's rule for which parameters it stores as intgemm8 (expression_graph_packable.h): the first `_W`
    is the name's last two or three characters, or the name contains `Wemb` (compressWemb is on)."""
    at = name.find("_W")
    return (at != -1 and at in (len(name) - 3, len(name) - 2)) or "Wemb" in name


def alpha_names(arch: Architecture) -> tuple[set[str], set[str]]:
    """(the alphas every int8shiftAlphaAll model must have, the output layer's alternatives of which at least one
    is needed): one per matrix multiplied by activations, named `<weight>_QuantMultA`."""
    layer_weights = {
        n for n in expected_parameters(arch) if is_gemm_weight(n) and "Wemb" not in n and not n.endswith("_Wt")
    }
    required = {n + ALPHA_SUFFIX for n in layer_weights}
    output = {arch.output_weight + ALPHA_SUFFIX, OUTPUT_ALPHA_ALIAS + ALPHA_SUFFIX}
    return required, output


def _vector_or_matrix(name: str, array: np.ndarray, marian_shape: tuple[int, ...]) -> np.ndarray:
    return array.reshape(-1) if marian_shape[0] == 1 and len(marian_shape) == 2 else array


def check_items(items: list[Item], arch: Architecture, source: str = "model") -> None:
    """Refuse any difference between the stored items and the allow-list of `arch`: a missing, unexpected or
    misshapen parameter, a type the engine does not read, or an incomplete set of alphas."""
    expected = expected_parameters(arch)
    required_alphas, output_alphas = alpha_names(arch)
    problems: list[str] = []
    seen: dict[str, Item] = {}
    for item in items:
        if item.name in seen:
            problems.append(f"{item.name}: stored twice")
        seen[item.name] = item
    alphas = {n for n in seen if n.endswith(ALPHA_SUFFIX)}
    for name, item in seen.items():
        if name == META_NAME:
            continue
        if name in alphas:
            if name not in required_alphas | output_alphas:
                problems.append(f"{name}: an alpha for no parameter of this model")
            elif item.elements != 1 or item.type not in (FLOAT32, INTGEMM8):
                problems.append(f"{name}: an alpha must be one float32 (or intgemm8) value, got {item.shape}")
            continue
        if name not in expected:
            problems.append(f"{name}: not a parameter of this architecture (misnamed or extra)")
            continue
        shape = expected[name]
        stored = item.shape if len(item.shape) == 2 else (1, *item.shape) if len(item.shape) == 1 else item.shape
        if stored != shape:
            problems.append(f"{name}: shape {list(item.shape)}, expected {list(shape)}")
        if name == "decoder_ff_logit_out_Wt" and item.type == INTGEMM8:
            problems.append(
                f"{name}: stored as intgemm8; bergamot multiplies such an untied output table with the wrong inner"
                " dimension (Marian's intgemm path ignores its transpose), so it has no reference behaviour"
            )
            continue
        allowed = (FLOAT32, INTGEMM8) if is_gemm_weight(name) else (FLOAT32,)
        if item.type not in allowed:
            type_name = marian_io.TYPE_NAMES.get(item.type, hex(item.type))
            problems.append(
                f"{name}: stored as {type_name}; supported: float32" + (", intgemm8" if len(allowed) > 1 else "")
            )
    problems += [f"{name}: missing" for name in expected if name not in seen]
    if alphas:
        problems += [
            f"{name}: missing (the model has alphas, so every int8 multiply needs one)"
            for name in sorted(required_alphas - alphas)
        ]
        if not alphas & output_alphas:
            problems.append(f"no alpha for the output layer (one of {sorted(output_alphas)})")
        if not any(seen[n].type == INTGEMM8 for n in expected if n in seen):
            problems.append("alphas in a float model (only intgemm8 models use them)")
    _refuse(source, problems)


def _yaml_of(items: list[Item], source: str) -> tuple[str, dict[str, Any]]:
    meta = [item for item in items if item.name == META_NAME]
    if not meta:
        raise CheckpointError(f"{source}: no embedded {META_NAME} (not a Marian model, or stripped)")
    try:
        text = marian_io.meta_text(meta[0])
        return text, model_yml.loads(text)
    except (marian_io.ContainerError, model_yml.YamlSubsetError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{source}: unreadable {META_NAME}: {exc}") from exc


def _decode(item: Item, arch: Architecture) -> tuple[np.ndarray, Int8Matrix | None]:
    """(float32 value in the engine's orientation, the raw int8 matrix when stored as intgemm8)."""
    if item.type == FLOAT32:
        return marian_io.float32_array(item), None
    q, qm = marian_io.intgemm8_payload(item)
    if "Wemb" in item.name:  # stored untransposed; Marian dequantises at load as q * (1/qm)
        q = q.reshape(item.shape)
        return (q.astype(np.float32) * (np.float32(1.0) / qm)).astype(np.float32), Int8Matrix(q, qm)
    rows = item.elements // item.shape[-1]
    q = q.reshape(item.shape[-1], rows).T.copy()  # stored as W^T row-major, the shape records W = [in, out]
    return (q.astype(np.float32) / qm).astype(np.float32), Int8Matrix(q, qm)


def read_items(items: list[Item], source: str = "model") -> Checkpoint:
    """A Checkpoint from a container's items: config and names checked first, then weights decoded."""
    yaml_text, config = _yaml_of(items, source)
    arch = check_config(config, source)
    check_items(items, arch, source)
    params: dict[str, np.ndarray] = {}
    int8: dict[str, Int8Matrix] = {}
    alphas: dict[str, float] = {}
    expected = expected_parameters(arch)
    try:
        for item in items:
            if item.name == META_NAME:
                continue
            value, raw = _decode(item, arch)
            if item.name.endswith(ALPHA_SUFFIX):
                alphas[item.name[: -len(ALPHA_SUFFIX)]] = float(value.reshape(-1)[0])
                continue
            params[item.name] = _vector_or_matrix(item.name, value.reshape(expected[item.name]), expected[item.name])
            if raw is not None:
                int8[item.name] = raw
    except marian_io.ContainerError as exc:
        raise CheckpointError(f"{source}: {exc}") from exc
    bad = [name for name, value in params.items() if not np.isfinite(value).all()]
    bad += [f"{name}_QuantMultA" for name, value in alphas.items() if not (np.isfinite(value) and value > 0)]
    _refuse(source, [f"{name}: holds non-finite or non-positive values" for name in bad])
    if alphas:
        precision = "int8shiftAlphaAll"
    elif int8:
        precision = "int8shiftAll"
    else:
        precision = "float32"
    return Checkpoint(config, arch, params, int8, alphas, precision, yaml_text)


def read_model(path: Path | str, check: Callable[[bytes], None] | None = None) -> Checkpoint:
    """Read a model file (.npz, .bin, either optionally .gz); `check` sees its (unpacked) bytes before they are
    parsed (the build compares them with metadata.json's size and sha256), and the file is read once."""
    path = Path(path)
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    try:
        blob = marian_io.read_bytes(path)
        if check is not None:
            check(blob)
        items = marian_io.npz_items(blob) if name.endswith(".npz") else marian_io.bin_items(blob)
    except marian_io.ContainerError as exc:
        raise CheckpointError(f"{path.name}: {exc}") from exc
    except OSError as exc:
        raise CheckpointError(f"{path}: {exc.strerror or exc}") from exc
    checkpoint = read_items(items, path.name)
    if ".intgemm.alphas." in name and checkpoint.gemm_precision != "int8shiftAlphaAll":
        _refuse(path.name, ["named .intgemm.alphas.bin but holds no alphas (Firefox would abort on it)"])
    return checkpoint


# --- the published folder layout ---

MODEL_FILE = re.compile(r"model\.(?P<pair>[A-Za-z_-]+)\.(?P<kind>intgemm\.alphas\.bin|intgemm8\.bin|bin|npz)(\.gz)?")
SHORTLIST_FILE = re.compile(r"lex(\.(?P<first>\d+)\.(?P<best>\d+))?\.(?P<pair>[A-Za-z_-]+)\.s2t\.bin(\.gz)?")
VOCAB_FILE = re.compile(r"(src|trg)?vocab\.(?P<pair>[A-Za-z_-]+)\.spm(\.gz)?")


@dataclass(frozen=True)
class ModelFolder:
    """The files of a Firefox Translations model folder (see mozilla/firefox-translations-models' README)."""

    pair: str  # e.g. "enzh"
    model: Path
    src_vocab: Path
    trg_vocab: Path
    shared_vocab: bool  # one vocab.<pair>.spm: Marian then shares one vocabulary object (the shortlist's rule 3)
    shortlist: Path | None
    metadata: Path | None


def _label(folder: Path) -> str:
    """The folder's own name for messages (`.` and `..` resolved): an archive's work folder is no one's business."""
    return os.path.basename(os.path.abspath(folder)) or str(folder)


def _one(folder: Path, names: list[str], what: str) -> str | None:
    if len(names) > 1:
        raise CheckpointError(f"{_label(folder)}: more than one {what}: {', '.join(sorted(names))}")
    return names[0] if names else None


def find_model_folder(folder: Path | str) -> ModelFolder:
    """Name the files of a model folder: exactly one model, its vocabulary (one shared or a source/target pair),
    an optional lexical shortlist and metadata.json; each may be gzipped."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder}: not a folder")
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    models = [n for n in files if MODEL_FILE.fullmatch(n)]
    model = _one(folder, models, "model file")
    if model is None:
        raise CheckpointError(f"{_label(folder)}: no model.<pair>.{{intgemm.alphas.bin,intgemm8.bin,bin,npz}}[.gz]")
    match = MODEL_FILE.fullmatch(model)
    assert match is not None
    pair = match["pair"]

    def pick(pattern: str, what: str) -> str | None:
        return _one(folder, [n for n in files if re.fullmatch(pattern, n)], what)

    shared = pick(rf"vocab\.{re.escape(pair)}\.spm(\.gz)?", "shared vocabulary")
    src = pick(rf"srcvocab\.{re.escape(pair)}\.spm(\.gz)?", "source vocabulary")
    trg = pick(rf"trgvocab\.{re.escape(pair)}\.spm(\.gz)?", "target vocabulary")
    if shared and (src or trg):
        raise CheckpointError(f"{_label(folder)}: both a shared vocab.{pair}.spm and srcvocab/trgvocab files")
    if not shared and not (src and trg):
        raise CheckpointError(
            f"{_label(folder)}: no vocab.{pair}.spm, and not both srcvocab.{pair}.spm and trgvocab.{pair}.spm"
        )
    lex = [n for n in files if (m := SHORTLIST_FILE.fullmatch(n)) and m["pair"] == pair]
    short = _one(folder, lex, "shortlist")
    meta = pick(r"metadata\.json(\.gz)?", "metadata.json")
    return ModelFolder(
        pair=pair,
        model=folder / model,
        src_vocab=folder / (shared or src or ""),
        trg_vocab=folder / (shared or trg or ""),
        shared_vocab=bool(shared),
        shortlist=folder / short if short else None,
        metadata=folder / meta if meta else None,
    )


METADATA_MAX_BYTES = 1 << 20  # Mozilla's are ~2 kB


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not a JSON value")


def read_metadata(path: Path | None) -> dict[str, Any] | None:
    """metadata.json's content (a JSON object), or None without one. Strict JSON only: NaN and Infinity (which
    Python's json reads) are refused, as the manifest that records it could not be written."""
    if path is None:
        return None
    try:
        blob = marian_io.read_bytes(path)
    except marian_io.ContainerError as exc:
        raise CheckpointError(f"{path.name}: {exc}") from exc
    if len(blob) > METADATA_MAX_BYTES:
        raise CheckpointError(f"{path.name}: {len(blob):,} bytes, not a model's metadata")
    try:
        value = json.loads(blob.decode("utf-8"), parse_constant=_not_json)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"{path.name}: not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise CheckpointError(f"{path.name}: not a JSON object")
    return value
