"""A Firefox Translations model folder as Mozilla publishes it → a Qiao bundle of family `bergamot`.

The folder (engine.families.bergamot.converter.reader.find_model_folder): one model (`model.<pair>.intgemm.alphas.bin`,
`.intgemm8.bin`, a float32 `.bin` or a float `.npz`), its SentencePiece vocabularies (`vocab.<pair>.spm`, or
`srcvocab.<pair>.spm` + `trgvocab.<pair>.spm`), optionally the lexical shortlist `lex.50.50.<pair>.s2t.bin` and
`metadata.json`; any file may be gzipped. What the bundle holds:

* `fp32/` and `int8/`: the encoder and SSRU decoder-step graphs (engine.families.bergamot.converter.graphs), weights
  inside. FP32 from the float weights (an int8 model's dequantised exactly as Marian does); INT8 from the model's
  own int8 weights and activation alphas (a float model or one without alphas: Marian's own quantisation, each
  product's activations scaled at run time as `int8shiftAll` does).
* `vocab.spm.json` or `source.spm.json` + `target.spm.json` (engine.families.bergamot.converter.tokenizer), read at run
  time without sentencepiece.
* `lex.s2t.bin`: the shortlist as published, gunzipped, its checksum and bounds checked here.
* `MODEL_LICENSE.txt`: MPL-2.0 (mozilla/firefox-translations-models' licence), with the source files named and
  hashed; `validation.json`: what the build checked.

The manifest is format 5 with `family: bergamot`, every file listed with its size and sha256 and the manifest
sealed, as engine.convert.pipeline writes Marian bundles. Marian silently fills a misnamed parameter with random
values: the reader refuses any parameter set other than the exact one the model's config implies, and the build
then refuses a bundle whose FP32 greedy output differs, token for token, from the numpy reference
(engine.families.bergamot.converter.reference) on the built-in check sentences, or whose tokenizer segments them
differently from SentencePiece itself.
"""

from __future__ import annotations

import hashlib
import json
import platform
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from engine import __version__
from engine.bundle.manifest import FORMAT_VERSION, MANIFEST, load_manifest, sha256_file
from engine.bundle.writing import check_out_dir, install_staged, staging_dir, write_manifest
from engine.config import EngineConfig
from engine.errors import BuildError, CheckpointError
from engine.families.bergamot import shortlist as shortlist_io
from engine.families.bergamot.architecture import Architecture, embed_scale
from engine.families.bergamot.converter import graphs, int8_kernel, marian_io, reader
from engine.families.bergamot.converter.reader import (
    MODEL_FILE,
    VOCAB_FILE,
    Checkpoint,
    Int8Matrix,
    ModelFolder,
    find_model_folder,
    is_gemm_weight,
    read_metadata,
    read_model,
)
from engine.families.bergamot.generation import MAX_LENGTH_FACTOR
from engine.families.bergamot.model import DEFAULT_MAX_POSITIONS, OnnxBergamot
from engine.languages import FACTS, code_of, default_pair

FAMILY = "bergamot"  # engine.families.BERGAMOT (the registry is the ground floor; this name is the bundle's)
LICENSE = "MPL-2.0"
REPOSITORY = "https://github.com/mozilla/firefox-translations-models"
SHORTLIST_FILE = "lex.s2t.bin"
CHECK_DATA = Path(__file__).resolve().parents[3] / "convert" / "data"  # engine/convert/data
CHECK_FILES = {"en": "builtin_sentences.txt", "zh": "builtin_sentences_zh.txt"}
INT8_MIN_AGREEMENT = 0.9  # INT8 vs the reference's int8 imitation: ORT and numpy round near-ties differently
_QUANTIZATION = {
    "int8shiftAlphaAll": "the model's own int8 weights; activations quantised with its stored alphas (Marian's "
    "int8shiftAlphaAll), clamped to ±127; u8×s8 MatMulIntegerToFloat",
    "int8shiftAll": "the model's own int8 weights; activations scaled by 127/max|A| per product (Marian's "
    "int8shiftAll); u8×s8 MatMulIntegerToFloat",
    "float32": "weights quantised as Marian does (127/max|W|); activations scaled by 127/max|A| per product "
    "(Marian's int8shiftAll); u8×s8 MatMulIntegerToFloat",
}


def recognises(source: Path) -> bool:
    """Whether `source` is meant as a Firefox Translations model folder (or a folder holding exactly one, as an
    unpacked archive does): names only, nothing decoded. A folder whose names say so but which is incomplete (no
    vocabulary, two models) is recognised too, so that its build names what is wrong with it."""
    return model_folder_in(source) is not None


def claims(folder: Path) -> bool:
    """Whether `folder` holds a file named as in a Firefox Translations model folder (a model, a vocabulary or a
    shortlist), complete or not."""
    patterns = (MODEL_FILE, VOCAB_FILE, reader.SHORTLIST_FILE)
    try:
        names = [entry.name for entry in Path(folder).iterdir()]
    except OSError:
        return False
    return any(pattern.fullmatch(name) for name in names for pattern in patterns)


NESTING = 4  # folders a model folder may sit in, each the only entry of the one above (an archive of models/base/enzh)


def model_folder_in(source: Path) -> Path | None:
    """`source` itself when it is a model folder, else the folder found by going down single subfolders (at most
    NESTING: an archive's top folder, or models/base-memory/enzh); failing that, the first of these whose names claim
    to be one (its build then says what it lacks); None otherwise."""
    source = Path(source)
    candidates = [source]
    while len(candidates) <= NESTING:
        try:
            entries = [e for e in candidates[-1].iterdir() if e.name not in ("__MACOSX", ".DS_Store")]
        except OSError:
            break
        if len(entries) != 1 or not entries[0].is_dir():
            break
        candidates.append(entries[0])
    claimed = None
    for folder in candidates:
        if (folder / MANIFEST).exists():
            return None  # a Qiao bundle, not a model to convert
        try:
            find_model_folder(folder)
        except CheckpointError:
            if claimed is None and claims(folder):
                claimed = folder
            continue
        return folder
    return claimed


@dataclass(frozen=True)
class Check:
    """What validation found: the check sentences, FP32 and INT8 agreement with the reference."""

    sentences: int
    fp32_same: int
    int8_same: int
    tokenizer_same: int
    problems: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "sentences": self.sentences,
            "fp32_identical_to_reference": self.fp32_same,
            "int8_identical_to_reference_int8": self.int8_same,
            "tokenizer_identical_to_sentencepiece": self.tokenizer_same,
            "problems": self.problems,
            "passed": not self.problems,
        }


# The build's steps besides validation, counted in check sentences' time (~0.5 s each on a full-shape model), so
# that build_bundle's progress moves as the time does (reading the model ~1 s, each of the four graphs ~0.5 s).
STEP_WEIGHTS = {"read": 2, "vocabularies": 1, "graph": 1, "manifest": 1, "install": 1}
STEPS = sum(STEP_WEIGHTS.values()) + (2 * len(graphs.PRECISIONS) - 1) * STEP_WEIGHTS["graph"]  # 2 graphs a precision


def _stepper(progress: Callable[[int, int], None] | None, total: int) -> Callable[[int], None]:
    """step(n): n more of the build's `total` steps done, told to `progress`."""
    done = 0

    def step(n: int) -> None:
        nonlocal done
        done = min(total, done + n)
        if progress is not None:
            progress(done, total)

    return step


def _say(quiet: bool, t0: float, message: str) -> None:
    if not quiet:
        print(f"[bergamot] {message} (+{time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)


def named_languages(folder: ModelFolder, metadata: dict | None) -> tuple[str, str] | None:
    """The pair the folder itself names: its files' pair (`enzh` → en, zh), else metadata.json's languages; None
    when neither says. BuildError when both say and disagree (a folder of mixed-up files)."""
    pair = folder.pair
    named = (code_of(pair[:2]), code_of(pair[2:])) if len(pair) == 4 else None
    meta = None
    if metadata and metadata.get("sourceLanguage") and metadata.get("targetLanguage"):
        meta = (code_of(str(metadata["sourceLanguage"])), code_of(str(metadata["targetLanguage"])))
    if named and meta and named != meta:
        raise BuildError(
            f"the files are named {pair} ({named[0]} → {named[1]}) but metadata.json says {meta[0]} → {meta[1]}: "
            "a mixed-up folder? give --source and --target to say which it is"
        )
    return named or meta


def languages_of(folder: ModelFolder, metadata: dict | None, source: str | None, target: str | None) -> tuple[str, str]:
    """The pair's codes: --source/--target, else the folder's pair (`enzh` → en, zh), else metadata.json's."""
    pair = folder.pair
    try:
        named = named_languages(folder, metadata)
    except BuildError:
        if not (source and target):
            raise
        named = None
    src, trg = source or (named[0] if named else None), target or (named[1] if named else None)
    if not src or not trg:
        raise BuildError(f"cannot tell the languages of pair {pair!r}: give --source and --target")
    src, trg = code_of(str(src)), code_of(str(trg))
    for code in (src, trg):
        if code not in FACTS:
            raise BuildError(f"Qiao knows no language {code!r} (pair {pair!r}); it knows {', '.join(sorted(FACTS))}")
    if src == trg:
        raise BuildError(f"the source and target language are both {src!r}")
    return src, trg


def _check_metadata(checkpoint_blob: bytes, metadata: dict | None, name: str) -> None:
    """metadata.json's `byteSize` and `hash` (the model's uncompressed size and sha256): a model of that size with
    another hash is damaged."""
    if not metadata:
        return
    size, digest = metadata.get("byteSize"), metadata.get("hash")
    if isinstance(size, int) and isinstance(digest, str) and size == len(checkpoint_blob):
        actual = hashlib.sha256(checkpoint_blob).hexdigest()
        if actual != digest.lower():
            raise BuildError(f"{name}: sha256 {actual[:16]}… differs from metadata.json's {digest[:16]}… (damaged?)")


def _shortlist(folder: ModelFolder, arch: Architecture, staging: Path) -> shortlist_io.Shortlist | None:
    if folder.shortlist is None:
        return None
    name = folder.shortlist.name
    try:
        blob = marian_io.read_bytes(folder.shortlist)
        short = shortlist_io.parse(blob, target_vocab_size=arch.target_vocab)
    except (marian_io.ContainerError, shortlist_io.ShortlistError) as exc:
        raise BuildError(f"{name}: {exc}") from exc
    if short.source_vocab_size != arch.source_vocab:
        raise BuildError(f"{name} covers {short.source_vocab_size} source ids; the model has {arch.source_vocab}")
    (staging / SHORTLIST_FILE).write_bytes(blob)
    return short


def metadata_record(metadata: dict | None) -> dict[str, Any]:
    """What the manifest keeps of metadata.json: its plain top-level facts (architecture, byteSize, hash, languages,
    version), not modelConfig (the model's own model.yml is recorded) nor any nested or outsized value."""
    kept: dict[str, Any] = {}
    for key, value in (metadata or {}).items():
        if key == "modelConfig" or len(key) > 100:
            continue
        if (isinstance(value, str) and len(value) <= 1000) or isinstance(value, (bool, int, float)):
            kept[key] = value
    return kept


def _versions() -> dict[str, str]:
    import onnx
    import onnxruntime

    return {
        "qiao": __version__,
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
        "numpy": np.__version__,
        "python": platform.python_version(),
    }


def _model_id(folder: ModelFolder, metadata: dict | None, relabelled: tuple[str, str] | None = None) -> str:
    """`mozilla/firefox-translations-<pair>[-<architecture>]` (metadata.json's architecture: base, base-memory), the
    id Mozilla's published scores are known by (engine.store.quality). A model built as another pair than its files
    name (`relabelled`: --source/--target) is not that published model: `…-<pair>-as-<source><target>`."""
    if relabelled is not None:
        return f"mozilla/firefox-translations-{folder.pair}-as-{''.join(relabelled)}"
    kind = str((metadata or {}).get("architecture") or "").strip()
    suffix = f"-{kind}" if kind and kind.replace("-", "").isalnum() else ""
    return f"mozilla/firefox-translations-{folder.pair}{suffix}"


def planned_model_id(source: Path) -> str | None:
    """The model id build_bundle(source) gives (no model_id, source_lang or target_lang), from the folder's file
    names and metadata.json alone, nothing decoded: an importer knows the bundle's name before converting. None
    when the folder does not say (its build then fails, saying why)."""
    where = model_folder_in(Path(source))
    try:
        folder = find_model_folder(where if where is not None else Path(source))
        metadata = read_metadata(folder.metadata)
        languages_of(folder, metadata, None, None)
    except (BuildError, CheckpointError, OSError):
        return None
    return _model_id(folder, metadata)


def _source_files(folder: ModelFolder) -> dict[str, str]:
    names = [folder.model, folder.src_vocab, folder.trg_vocab, folder.shortlist, folder.metadata]
    return {p.name: sha256_file(p) for p in dict.fromkeys(n for n in names if n is not None)}


def _attribution(model_id: str, source_name: str) -> str:
    """Who made the model and what it was converted from: `source_name` is the model file's published name
    (`model.enzh.intgemm.alphas.bin`); the folder holding it is a download or work folder's name ("enzh", a cache
    hash) that says nothing to a reader of the About box or the licence file."""
    return (
        f"Firefox Translations model by Mozilla ({REPOSITORY}), converted by Qiao from {source_name}; "
        "licensed under the Mozilla Public License 2.0"
    )


def _license_text(model_id: str, attribution: str, sources: dict[str, str], revision: str) -> str:
    lines = [
        attribution,
        "",
        f"Model: {model_id} (revision {revision})",
        f"License: {LICENSE} (Mozilla Public License Version 2.0, https://mozilla.org/MPL/2.0/), the licence of",
        f"{REPOSITORY}, where Mozilla publishes these models.",
        "",
        "Converted from these files (sha256):",
        *(f"  {name}  {digest}" for name, digest in sources.items()),
        "",
    ]
    return "\n".join(lines)


def build_bundle(
    source: str | Path,
    out_dir: Path,
    *,
    model_id: str | None = None,
    source_lang: str | None = None,
    target_lang: str | None = None,
    quiet: bool = False,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """Convert the model folder `source` (or the single folder inside it) into a verified bundle in `out_dir`;
    returns the manifest. CheckpointError for a folder or model that is not one Qiao reads, BuildError when the
    bundle fails its checks (nothing is written then). `progress(done, total)` counts the build's steps (STEPS,
    then one per check sentence); an exception it raises (a cancel) stops the build, nothing written."""
    import onnx

    from engine.families.bergamot.converter.tokenizer import build_tokenizer

    t0 = time.perf_counter()
    out_dir = Path(out_dir)
    check_out_dir(out_dir, overwrite, source)
    where = model_folder_in(Path(source))
    folder = find_model_folder(where if where is not None else Path(source))
    metadata = read_metadata(folder.metadata)
    src_code, trg_code = languages_of(folder, metadata, source_lang, target_lang)
    try:
        named = named_languages(folder, metadata)
    except BuildError:  # mixed up, and --source/--target said which it is
        named = None
    relabelled = None
    if named is not None and named != (src_code, trg_code):
        relabelled = (src_code, trg_code)
        print(
            f"note: {folder.model.name} is named as {named[0]} → {named[1]}; building it as {src_code} → {trg_code}, "
            "as --source/--target say (it is then not Mozilla's published model, nor scored as one)",
            file=sys.stderr,
        )
    _say(quiet, t0, f"Reading {folder.model.name}")
    step = _stepper(progress, STEPS + len(check_sentences(src_code)))
    checkpoint = read_model(folder.model, lambda blob: _check_metadata(blob, metadata, folder.model.name))
    arch, weights = graphs.from_checkpoint(checkpoint)
    step(STEP_WEIGHTS["read"])

    staging = staging_dir(out_dir)
    try:
        short = _shortlist(folder, arch, staging)
        _say(quiet, t0, "Converting the vocabularies")
        tok_info = build_tokenizer(folder.src_vocab, None if folder.shared_vocab else folder.trg_vocab, staging)
        sides = (
            (folder.src_vocab, "source", tok_info.source_vocab_size, arch.source_vocab),
            (folder.trg_vocab, "target", tok_info.vocab_size, arch.target_vocab),
        )
        wrong = [
            f"{path.name} has {got} pieces, the model's {side} vocabulary {want}"
            for path, side, got, want in sides
            if got != want
        ]
        if wrong:  # a vocabulary of another model (dim-vocabs in its model.yml)
            raise BuildError("; ".join(wrong) + ": a vocabulary of another model?")
        step(STEP_WEIGHTS["vocabularies"])
        _say(quiet, t0, "Writing the FP32 and INT8 graphs")
        graph_io: dict[str, dict[str, list[str]]] = {}
        for precision in graphs.PRECISIONS:
            (staging / precision).mkdir()
            encoder, enc_in, enc_out = graphs.build_encoder(arch, weights, precision)
            onnx.save(encoder, str(staging / precision / "encoder.onnx"))
            del encoder
            step(STEP_WEIGHTS["graph"])
            decoder, dec_in, dec_out = graphs.build_decoder(arch, weights, precision, shortlisted=short is not None)
            onnx.save(decoder, str(staging / precision / "decoder.onnx"))
            del decoder
            step(STEP_WEIGHTS["graph"])
            graph_io = {
                "encoder": {"inputs": enc_in, "outputs": enc_out},
                "decoder": {"inputs": dec_in, "outputs": dec_out},
            }

        pair = default_pair(src_code, trg_code)
        model_id = model_id or _model_id(folder, metadata, relabelled)
        sources = _source_files(folder)
        revision = sources[folder.model.name][:12]
        attribution = _attribution(model_id, folder.model.name)  # the file Mozilla publishes, not a work folder
        (staging / "MODEL_LICENSE.txt").write_text(
            _license_text(model_id, attribution, sources, revision), encoding="utf-8"
        )
        separate = not folder.shared_vocab
        manifest: dict[str, Any] = {
            "format_version": FORMAT_VERSION,
            "family": FAMILY,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "model": {
                "id": model_id,
                "revision": revision,
                "architecture": "transformer encoder, SSRU decoder (Marian)",
                "license": LICENSE,
                "attribution": attribution,
            },
            "source": {
                "files": sources,
                "gemm_precision": checkpoint.gemm_precision,
                "metadata": metadata_record(metadata),
                "model_yml": checkpoint.yaml_text,
            },
            "tools": _versions(),
            "config": {
                "d_model": arch.dim,
                "encoder_layers": arch.encoder_layers,
                "decoder_layers": arch.decoder_layers,
                "encoder_attention_heads": arch.heads,
                "decoder_attention_heads": arch.heads,
                "ffn_dim": arch.ffn,
                "vocab_size": arch.target_vocab,
                **({"source_vocab_size": arch.source_vocab} if separate else {}),
                "max_position_embeddings": DEFAULT_MAX_POSITIONS,
                "activation": "relu",
                "embed_scale": float(embed_scale(arch.dim)),
            },
            "architecture": arch.to_dict(),
            "generation": {
                "decoder_start_token_id": tok_info.eos_id,  # unused: the first input is a zero embedding
                "eos_token_id": tok_info.eos_id,
                "pad_token_id": tok_info.pad_id,
                "num_beams": 1,  # Firefox decodes greedily
                "max_length": DEFAULT_MAX_POSITIONS,
                "length_penalty": 1.0,  # Marian's normalize: 1.0
                "max_length_factor": MAX_LENGTH_FACTOR,
            },
            "tokenizer": tok_info.as_dict(),
            "languages": pair.as_dict(),
            "graphs": graph_io,
            "precisions": {
                "fp32": {"encoder": "fp32/encoder.onnx", "decoder": "fp32/decoder.onnx"},
                "int8": {
                    "encoder": "int8/encoder.onnx",
                    "decoder": "int8/decoder.onnx",
                    "quantization": _QUANTIZATION[checkpoint.gemm_precision],
                },
            },
        }
        if short is not None:
            manifest["shortlist"] = {"file": SHORTLIST_FILE, "first_num": short.first_num, "best_num": short.best_num}
        write_manifest(staging, manifest)
        step(STEP_WEIGHTS["manifest"])

        _say(quiet, t0, "Validating FP32 and INT8 against the numpy reference")
        check = validate(staging, checkpoint, folder, src_code, lambda: step(1))
        (staging / "validation.json").write_text(json.dumps(check.as_dict(), indent=1), encoding="utf-8")
        manifest["validation"] = {"file": "validation.json", "eval_set": "builtin", "passed": not check.problems}
        write_manifest(staging, manifest)
        if check.problems:
            raise BuildError("validation failed: " + "; ".join(check.problems))
        install_staged(staging, out_dir)
        step(STEP_WEIGHTS["install"])
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    _say(quiet, t0, f"Bundle written to {out_dir}")
    return manifest


def check_sentences(language: str) -> list[str]:
    """The built-in check sentences of a source language (English's for a language without its own)."""
    name = CHECK_FILES.get(language, CHECK_FILES["en"])
    lines = (CHECK_DATA / name).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip()]


def greedy(model: OnnxBergamot, ids: list[int], eos: int) -> list[int]:
    """One sentence's greedy tokens as Firefox decodes it (beam 1, at most 2 × the source ids), the final </s>
    included when emitted: the model's own run, no search code (the build sits below engine.search)."""
    enc = model.encode(np.array([ids], dtype=np.int64), np.ones((1, len(ids)), dtype=np.int64))
    limit = int(MAX_LENGTH_FACTOR * len(ids))
    run = model.start(enc, limit + 1)
    tokens: list[int] = []
    previous = np.array([eos], dtype=np.int64)
    while len(tokens) < limit:
        token = int(np.argmax(run.step(previous)[0]))
        tokens.append(token)
        if token == eos:
            break
        previous = np.array([token], dtype=np.int64)
    return tokens


def int8_imitation(checkpoint: Checkpoint) -> Checkpoint:
    """The checkpoint whose int8 arithmetic the INT8 graphs perform: an int8 model's own; a float model's matrices
    quantised as Marian quantises them (127/max|W|; tables stay float for lookups, the output layer is quantised at
    run time), its activations scaled per product (no alphas)."""
    if checkpoint.is_int8:
        return checkpoint
    int8 = {}
    for name, value in checkpoint.params.items():
        if is_gemm_weight(name) and "Wemb" not in name and value.ndim == 2:
            q, qm = graphs.quantize(value)
            int8[name] = Int8Matrix(q, qm)
    return replace(checkpoint, int8=int8, alphas={})


def validate(
    bundle: Path, checkpoint: Checkpoint, folder: ModelFolder, language: str, tick: Callable[[], None] | None = None
) -> Check:
    """The staged bundle, loaded as Qiao loads it, against the numpy reference on the check sentences: FP32 token
    for token (every sentence), INT8 against the reference's int8 imitation (INT8_MIN_AGREEMENT) of the kernel ORT
    takes on this CPU (saturating without VNNI: int8_kernel), the tokenizer's ids and decoding against
    SentencePiece's own."""
    import sentencepiece as spm

    from engine.families.bergamot import load_model, load_tokenizer
    from engine.families.bergamot.converter.reference import decode
    from engine.families.bergamot.converter.tokenizer import read_model_bytes

    manifest = load_manifest(bundle)
    tokenizer = load_tokenizer(manifest)

    def sentencepiece(path: Path) -> Any:
        try:
            return spm.SentencePieceProcessor(model_proto=read_model_bytes(path))
        except RuntimeError as exc:  # its own checks, stricter than the conversion's (a damaged character map)
            raise BuildError(f"{path.name} is damaged: SentencePiece cannot load it ({exc})") from None

    sp_src = sentencepiece(folder.src_vocab)
    sp_trg = sentencepiece(folder.trg_vocab)
    fp32 = load_model(manifest, EngineConfig(precision="fp32", threads=1))
    int8 = load_model(manifest, EngineConfig(precision="int8", threads=1))
    assert isinstance(fp32, OnnxBergamot) and isinstance(int8, OnnxBergamot)
    eos = tokenizer.eos_id
    imitation = int8_imitation(checkpoint)
    saturate = int8_kernel.saturates()
    lines = check_sentences(language)
    problems: list[str] = []
    same = {"fp32": 0, "int8": 0, "tokenizer": 0}
    for line in lines:
        ids = tokenizer.encode(line)
        expected_ids = [*sp_src.encode(line), eos]
        ours = greedy(fp32, ids, eos)
        columns = fp32.shortlist_for(np.array([ids]))
        reference = decode(checkpoint, ids, columns).tokens
        text_ids = [t for t in ours if t != eos]
        if ids == expected_ids and tokenizer.decode(text_ids) == sp_trg.decode(text_ids):
            same["tokenizer"] += 1
        elif len(problems) < 5:
            problems.append(f"the tokenizer differs from SentencePiece on {line!r}")
        if ours == reference:
            same["fp32"] += 1
        elif len(problems) < 5:
            problems.append(f"FP32 output differs from the reference on {line!r}: {ours[:8]} vs {reference[:8]}")
        same["int8"] += greedy(int8, ids, eos) == decode(imitation, ids, columns, int8=True, saturate=saturate).tokens
        if tick is not None:
            tick()
    if same["int8"] < INT8_MIN_AGREEMENT * len(lines):
        problems.append(f"INT8 agrees with the reference's int8 on only {same['int8']} of {len(lines)} sentences")
    return Check(len(lines), same["fp32"], same["int8"], same["tokenizer"], problems)
