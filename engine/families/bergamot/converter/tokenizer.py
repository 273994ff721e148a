"""A Bergamot model's SentencePiece vocabularies → the files engine.families.bergamot.tokenizer reads.

Firefox's models ship SentencePiece models as Marian reads them: `vocab.<pair>.spm` (one vocabulary for both sides)
or `srcvocab.<pair>.spm` + `trgvocab.<pair>.spm`, each possibly gzipped. Marian numbers tokens with SentencePiece's
own ids (`</s>` 0, `<unk>` 1, no BOS; no vocab.json remapping as in transformers' MarianTokenizer), so each model
becomes one JSON file holding everything SentencePiece computes with: the pieces in id order, their float32 scores
and types, the special ids, byte fallback, and the normaliser, whose precompiled character map (a Darts double
array) is kept as it is and walked in place at run time, so the runtime needs neither sentencepiece nor protobuf.

Mirrors engine.families.marian.converter.tokenizer_json where they overlap (the protobuf module looked up by name), but
keeps every piece and SentencePiece's ids: the Marian converter rebuilds a `tokenizers` Unigram model around
vocab.json ids, which Bergamot does not have. What it refuses (BuildError), the runtime could not reproduce: a
non-unigram model, whitespace as a suffix, a character map it cannot read, a missing `</s>` or `<unk>`, or two
vocabularies that disagree on them.
"""

from __future__ import annotations

import base64
import importlib
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from engine.errors import BuildError
from engine.families.bergamot.converter import marian_io
from engine.families.bergamot.vocabulary import CharsMap

FORMAT = "qiao-sentencepiece"
VERSION = 1
SHARED_FILE = "vocab.spm.json"
SOURCE_FILE = "source.spm.json"
TARGET_FILE = "target.spm.json"

# SentencePiece's ModelProto.SentencePiece.Type and TrainerSpec.ModelType values
NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
_UNIGRAM = 1


@dataclass(frozen=True)
class TokenizerInfo:
    """The manifest's tokenizer section of a Bergamot bundle: what engine.families.bergamot.tokenizer opens."""

    source_file: str  # the source SentencePiece model as JSON (relative to the bundle)
    target_file: str  # the target one: the same file when the vocabulary is shared
    source_vocab_size: int
    vocab_size: int  # the target's: the width of the output layer
    eos_id: int
    unk_id: int
    pad_id: int  # Marian pads with `</s>`
    shared: bool  # one vocabulary file for both sides (Marian's shortlist then adds the source ids)
    kind: str = "sentencepiece"

    def as_dict(self) -> dict:
        return asdict(self)


def read_model_bytes(path: str | Path) -> bytes:
    """A SentencePiece model file's bytes, gunzipped when it is gzip (by its content, whatever its name), within
    marian_io's bound on a file's size; BuildError for damaged gzip data or an oversized file."""
    path = Path(path)
    try:
        if path.stat().st_size > marian_io.MAX_FILE_BYTES:
            raise marian_io.ContainerError(
                f"over {marian_io.bound_text(marian_io.MAX_FILE_BYTES)}, more than any vocabulary"
            )
        data = path.read_bytes()
        return marian_io.gunzip(data) if data[:2] == marian_io.GZIP_MAGIC else data
    except marian_io.ContainerError as exc:
        raise BuildError(f"{path.name}: {exc}") from None


def parse_model(data: bytes, name: str = "the SentencePiece model") -> Any:
    """`data` as a SentencePiece ModelProto (the build extra's sentencepiece package); BuildError if it is none."""
    # Generated protobuf code (its classes are made at import): looked up by name, so its attributes are Any
    model_pb2 = importlib.import_module("sentencepiece.sentencepiece_model_pb2")
    proto = model_pb2.ModelProto()
    try:
        proto.ParseFromString(data)
    except Exception as exc:  # protobuf's DecodeError, or anything a damaged file raises
        raise BuildError(f"{name} is not a SentencePiece model ({exc})") from exc
    if not proto.pieces:
        raise BuildError(f"{name} is not a SentencePiece model (no pieces)")
    return proto


def _normalizer(spec: Any, name: str) -> dict:
    """The normaliser as the runtime reads it: SentencePiece's precompiled character map as it is (base64),
    checked here by the runtime's own reader, and the whitespace flags."""
    blob = bytes(spec.precompiled_charsmap)
    if not isinstance(spec.name, str):
        raise BuildError(f"{name} is damaged: its normaliser's name is not UTF-8 text")
    try:
        CharsMap(blob)
    except ValueError as exc:
        raise BuildError(f"{name}: {exc}") from exc
    return {
        "name": spec.name,
        "charsmap": base64.b64encode(blob).decode("ascii"),
        "add_dummy_prefix": bool(spec.add_dummy_prefix),
        "remove_extra_whitespaces": bool(spec.remove_extra_whitespaces),
        "escape_whitespaces": bool(spec.escape_whitespaces),
    }


def model_json(proto: Any, name: str = "the SentencePiece model") -> dict:
    """Everything the runtime computes with, from a parsed ModelProto; BuildError for what it cannot reproduce."""
    trainer = proto.trainer_spec
    if trainer.model_type != _UNIGRAM:
        raise BuildError(f"{name} is not a unigram model (type {trainer.model_type}); Marian's Bergamot models are")
    if trainer.treat_whitespace_as_suffix:
        raise BuildError(f"{name} treats whitespace as a suffix (not supported)")
    types = [int(p.type) for p in proto.pieces]
    pieces = [p.piece for p in proto.pieces]
    if any(not p for p in pieces):
        raise BuildError(f"{name} has an empty piece")
    # protobuf hands a string field that is not UTF-8 over as bytes: a damaged file, which JSON cannot carry
    broken = [i for i, p in enumerate(pieces) if not isinstance(p, str)]
    if broken:
        raise BuildError(f"{name} is damaged: piece {broken[0]} is not UTF-8 text ({len(broken)} such pieces)")
    if not isinstance(trainer.unk_surface, str):
        raise BuildError(f"{name} is damaged: its unk_surface is not UTF-8 text")
    scores = [float(np.float32(p.score)) for p in proto.pieces]
    if not all(math.isfinite(x) for x in scores):
        raise BuildError(f"{name} is damaged: a piece's score is not a finite number")
    unknown = [i for i, t in enumerate(types) if t == UNKNOWN]
    if len(unknown) != 1:
        raise BuildError(f"{name} has {len(unknown)} unknown pieces (SentencePiece needs exactly one)")
    if not any(t == NORMAL for t in types):
        raise BuildError(f"{name} has no normal pieces")
    eos = trainer.eos_id
    if not (0 <= eos < len(pieces) and types[eos] == CONTROL):
        raise BuildError(f"{name} has no `</s>` (eos_id {eos}): Marian ends every source with it")
    if trainer.byte_fallback:
        bytes_found = {p for p, t in zip(pieces, types, strict=True) if t == BYTE}
        if bytes_found != {f"<0x{b:02X}>" for b in range(256)}:
            raise BuildError(f"{name} uses byte fallback without its 256 byte pieces")
    normalizer = proto.normalizer_spec  # no character map: SentencePiece normalises whitespace only, as here
    denormalizer = proto.denormalizer_spec if proto.HasField("denormalizer_spec") else None
    return {
        "format": FORMAT,
        "version": VERSION,
        "pieces": pieces,
        "scores": scores,
        "types": types,
        "unk_id": unknown[0],
        "eos_id": int(eos),
        "bos_id": int(trainer.bos_id),
        "pad_id": int(trainer.pad_id),
        "byte_fallback": bool(trainer.byte_fallback),
        "unk_surface": trainer.unk_surface,
        "normalizer": _normalizer(normalizer, name),
        "denormalizer": (
            _normalizer(denormalizer, f"{name}'s denormaliser")
            if denormalizer is not None and denormalizer.precompiled_charsmap
            else None
        ),
    }


def write_model_json(spm_path: str | Path, out_path: str | Path) -> dict:
    """Read one SentencePiece model file (plain or gzip) and write its JSON; returns what was written."""
    spm_path = Path(spm_path)
    data = model_json(parse_model(read_model_bytes(spm_path), spm_path.name), spm_path.name)
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    return data


def build_tokenizer(source_spm: str | Path, target_spm: str | Path | None, out_dir: str | Path) -> TokenizerInfo:
    """Write the tokenizer files of a bundle into `out_dir` and return its manifest section. `target_spm` None:
    one shared vocabulary (`vocab.<pair>.spm`); else the source and target models (`srcvocab`/`trgvocab`)."""
    out_dir = Path(out_dir)
    if target_spm is None:
        data = write_model_json(source_spm, out_dir / SHARED_FILE)
        return _info(SHARED_FILE, data, SHARED_FILE, data, shared=True)
    source = write_model_json(source_spm, out_dir / SOURCE_FILE)
    target = write_model_json(target_spm, out_dir / TARGET_FILE)
    return _info(SOURCE_FILE, source, TARGET_FILE, target, shared=False)


def _info(source_file: str, source: dict, target_file: str, target: dict, *, shared: bool) -> TokenizerInfo:
    for key, what in (("eos_id", "`</s>`"), ("unk_id", "`<unk>`")):
        if source[key] != target[key]:
            raise BuildError(
                f"{what} is id {source[key]} in the source vocabulary but {target[key]} in the target one; "
                "Qiao needs one id for it on both sides"
            )
    return TokenizerInfo(
        source_file=source_file,
        target_file=target_file,
        source_vocab_size=len(source["pieces"]),
        vocab_size=len(target["pieces"]),
        eos_id=target["eos_id"],
        unk_id=target["unk_id"],
        pad_id=target["eos_id"],
        shared=shared,
    )
