"""Find a Marian checkpoint: a local directory (no network at all) or a Hugging Face model id (downloaded).

The checkpoint is checked against the Marian allow-list (engine.families.marian.converter.checks) before any weights are
loaded, and its licence comes from its own model card: only Helsinki-NLP's opus-mt models are credited to OPUS."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from engine.errors import CheckpointError
from engine.families.marian.converter.checks import MarianConfigFacts, check_checkpoint, check_config, read_config
from engine.languages import FACTS, code_of

REQUIRED = ("config.json", "source.spm", "target.spm", "vocab.json")
TARGET_VOCAB = "target_vocab.json"  # separate vocabularies: the decoder's (MarianTokenizer's target_vocab_file)
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
OPTIONAL = (
    "generation_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "README.md",
    "LICENSE",
    TARGET_VOCAB,
)
# What we know about opus-mt models: CC-BY-4.0, by the Language Technology Research Group at the University of
# Helsinki. Used for Helsinki-NLP's opus-mt ids only, when their model card does not say otherwise.
OPUS_LICENSE = "CC-BY-4.0"
UNKNOWN_LICENSE = "unknown licence: check the model card"
OPUS_ATTRIBUTION = (
    "Translation model: {model} by Helsinki-NLP (Language Technology Research Group, University of Helsinki), "
    "trained on OPUS data, licensed under CC-BY-4.0 (https://creativecommons.org/licenses/by/4.0/). "
    "Converted to ONNX and quantized by Qiao."
)


def opus_attribution(model_id: str) -> str:
    """The CC-BY credit for the model actually built: `Helsinki-NLP/opus-mt-zh-en` is named `opus-mt-zh-en` (the
    owner is in the text already), any other id in full."""
    owner, _, name = model_id.rpartition("/")
    return OPUS_ATTRIBUTION.format(model=name if owner.lower() == "helsinki-nlp" else model_id)


def is_opus_mt(model_id: str) -> bool:
    """Helsinki-NLP's own opus-mt models (opus-mt-XX-YY, opus-mt-tc-big-…): the only ids credited to OPUS."""
    owner, _, name = model_id.rpartition("/")
    return owner.lower() == "helsinki-nlp" and name.lower().startswith("opus-mt")


def checkpoint_attribution(model_id: str, license_: str | None) -> tuple[str, str]:
    """(licence, attribution) of a build. Helsinki-NLP opus-mt ids: the OPUS CC-BY credit (CC-BY-4.0 unless their
    card says otherwise). Any other checkpoint: its card's licence, or UNKNOWN_LICENSE; it is built either way,
    and the bundle says which it is rather than crediting someone who did not make it."""
    if is_opus_mt(model_id):
        return license_ or OPUS_LICENSE, opus_attribution(model_id)
    terms = f"licensed under {license_}" if license_ else "licence unknown: check the model card"
    return (
        license_ or UNKNOWN_LICENSE,
        f"Translation model: {model_id}, {terms}. Converted to ONNX and quantized by Qiao.",
    )


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    model_id: str
    revision: str
    license: str
    attribution: str
    source_lang: str = "en"  # engine.languages codes, from checkpoint_languages()
    target_lang: str = "zh"
    marian: MarianConfigFacts | None = None  # what the allow-list read from config.json


def _check_dir(path: Path, facts: MarianConfigFacts | None = None) -> None:
    required = [*REQUIRED, TARGET_VOCAB] if facts is not None and facts.separate_vocabularies else REQUIRED
    missing = [name for name in required if not (path / name).is_file()]
    if not any((path / w).is_file() for w in WEIGHTS):
        missing.append(" or ".join(WEIGHTS))
    if missing:
        raise CheckpointError(
            f"{path} is not a complete Marian checkpoint: missing {', '.join(missing)}. "
            "A checkpoint directory needs config.json, the weights, source.spm, target.spm and vocab.json "
            f"(and {TARGET_VOCAB} with separate vocabularies)."
        )


def _local_revision(path: Path) -> str:
    weights = next(path / w for w in WEIGHTS if (path / w).is_file())
    digest = hashlib.sha256()
    with open(weights, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return f"local-sha256:{digest.hexdigest()[:16]}"


def card_metadata(path: Path) -> dict[str, str]:
    """The top-level `key: value` lines of README.md's front matter (the block between its first two `---` lines,
    Hugging Face's model-card metadata); {} without a card or front matter. Lists and nested keys are left out."""
    card = path / "README.md"
    try:
        lines = card.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return {}
    if not lines or lines[0].strip() != "---":
        return {}
    meta: dict[str, str] = {}
    for line in lines[1:400]:
        if line.strip() == "---":
            return meta
        key, sep, value = line.partition(":")
        if sep and key and not key[0].isspace() and value.strip():
            meta[key.strip().lower()] = value.strip().strip("'\"")
    return {}  # no closing line: not front matter


def _card_license(path: Path) -> str | None:
    """The card's `license:` (its `license_name:` when that is "other"), or None."""
    meta = card_metadata(path)
    license_ = meta.get("license")
    if license_ and license_.lower() == "other" and meta.get("license_name"):
        return meta["license_name"]
    return license_ or None


def _checked(path: Path, where: str) -> MarianConfigFacts | None:
    """The Marian allow-list, before anything else is read (None without a config.json: _check_dir says so)."""
    if not (path / "config.json").is_file():
        return None
    return check_checkpoint(path, where)


def checkpoint_languages(path: Path, model_id: str) -> tuple[str, str]:
    """(source, target) codes: tokenizer_config.json's source_lang/target_lang ("eng"/"zho"), else the model id's
    `opus-mt-XX-YY`; CheckpointError when neither names them (the user passes --source/--target then)."""
    named = _named_languages(path, model_id)
    if named is None:
        raise CheckpointError(f"{model_id}: the checkpoint does not name its languages; pass --source and --target")
    return named


def _named_languages(path: Path, model_id: str) -> tuple[str, str] | None:
    import json
    import re

    try:
        cfg = json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        cfg = {}
    src, tgt = cfg.get("source_lang"), cfg.get("target_lang")
    if isinstance(src, str) and isinstance(tgt, str) and src and tgt:
        return code_of(src), code_of(tgt)
    match = re.search(r"opus-mt-([a-z]{2,3})-([a-z]{2,3})\b", model_id.lower())
    if match:
        return code_of(match.group(1)), code_of(match.group(2))
    return None


def _known(code: str, what: str) -> str:
    if code not in FACTS:
        known = ", ".join(sorted(FACTS))
        raise CheckpointError(f"unknown {what} language {code!r}: Qiao supports {known}")
    return code


def pick_languages(
    path: Path, model_id: str, source_lang: str | None = None, target_lang: str | None = None
) -> tuple[str, str]:
    """The pair to build: the user's --source/--target where given, the checkpoint's own names otherwise; both must
    be languages Qiao knows (engine.languages.FACTS), and differ. CheckpointError says what to pass."""
    src = code_of(source_lang) if source_lang else None
    tgt = code_of(target_lang) if target_lang else None
    if src is None or tgt is None:
        named = _named_languages(path, model_id)
        if named is None:
            raise CheckpointError(
                f"{model_id}: the checkpoint does not name its languages; pass --source and --target "
                f"(one of {', '.join(sorted(FACTS))})"
            )
        src, tgt = src or named[0], tgt or named[1]
    hint = "" if source_lang and target_lang else " (the checkpoint's own names; override with --source/--target)"
    try:
        _known(src, "source")
        _known(tgt, "target")
    except CheckpointError as exc:
        raise CheckpointError(f"{model_id}: {exc}{hint}") from None
    if src == tgt:
        raise CheckpointError(f"{model_id}: source and target are both {src!r}{hint}")
    return src, tgt


def resolve_checkpoint(
    source: str, model_id: str | None = None, source_lang: str | None = None, target_lang: str | None = None
) -> Checkpoint:
    """A local directory is used as is; anything else is treated as a Hugging Face model id and downloaded.
    `source_lang`/`target_lang` override the languages the checkpoint names (see pick_languages)."""
    path = Path(source).expanduser()
    if path.exists():
        if not path.is_dir():
            raise CheckpointError(f"{path} is a file; pass the checkpoint directory")
        name = model_id or path.name
        facts = _checked(path, name)
        _check_dir(path, facts)
        license_, attribution = checkpoint_attribution(name, _card_license(path))
        src, tgt = pick_languages(path, name, source_lang, target_lang)
        return Checkpoint(path.resolve(), name, _local_revision(path), license_, attribution, src, tgt, facts)
    if source.count("/") != 1 or source.startswith((".", "/", "~")):
        raise CheckpointError(f"{source}: no such directory, and not a Hugging Face model id (owner/name)")
    for given, what in ((source_lang, "source"), (target_lang, "target")):
        if given:  # before a download of hundreds of MB
            _known(code_of(given), what)
    return _download(source, source_lang, target_lang)


def _download(repo_id: str, source_lang: str | None = None, target_lang: str | None = None) -> Checkpoint:
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError as exc:  # pragma: no cover - huggingface_hub comes with transformers
        raise CheckpointError("downloading needs huggingface_hub (pip install 'qiao[build]')") from exc
    patterns = [*REQUIRED, *WEIGHTS, *OPTIONAL]
    try:
        # config.json alone first: a checkpoint of another family is refused before its weights are fetched
        config_dir = Path(snapshot_download(repo_id, allow_patterns=["config.json"]))
        check_config(read_config(config_dir), repo_id)
        local = Path(snapshot_download(repo_id, allow_patterns=patterns))
    except LocalEntryNotFoundError as exc:
        raise CheckpointError(
            f"cannot download {repo_id}: no network connection and it is not in the local Hugging Face cache. "
            "Run this on a machine with internet, or pass a local checkpoint directory to --from."
        ) from exc
    except (HfHubHTTPError, OSError) as exc:
        raise CheckpointError(f"cannot download {repo_id}: {exc}") from exc
    facts = _checked(local, repo_id)
    _check_dir(local, facts)
    revision = local.name  # snapshot folders are named by commit hash
    license_, attribution = checkpoint_attribution(repo_id, _card_license(local))
    src, tgt = pick_languages(local, repo_id, source_lang, target_lang)
    return Checkpoint(local, repo_id, revision, license_, attribution, src, tgt, facts)


def load_marian(path: Path):
    """MarianMTModel.from_pretrained, then made to hold exactly the checkpoint's tensors.

    Why: transformers 4.57 sizes the decoder's embedding by the *source* vocabulary even with
    `share_encoder_decoder_embeddings: false` (a copy of the encoder's table: a checkpoint whose target vocabulary
    is larger does not load, one whose table differs decodes with the wrong one), and ties a missing lm_head to it.
    With separate vocabularies the embeddings and head are put back from model.safetensors as saved, and a tied head
    follows the decoder's table."""
    import torch
    from torch import nn
    from transformers import MarianConfig, MarianMTModel

    config = MarianConfig.from_pretrained(str(path))
    if getattr(config, "share_encoder_decoder_embeddings", True):
        return MarianMTModel.from_pretrained(str(path)).eval().float()
    weights = Path(path) / "model.safetensors"
    if not weights.is_file():
        raise CheckpointError(f"{path}: separate vocabularies are built from model.safetensors only")
    from transformers.utils import logging

    level = logging.get_verbosity()
    logging.set_verbosity_error()  # its "newly initialized … TRAIN this model" warning: put right below
    try:
        model = MarianMTModel.from_pretrained(str(path), ignore_mismatched_sizes=True).eval().float()
    finally:
        logging.set_verbosity(level)
    from safetensors.torch import load_file

    state = load_file(str(weights))
    pad = model.config.pad_token_id
    with torch.no_grad():
        for side in ("encoder", "decoder"):
            saved = state.get(f"model.{side}.embed_tokens.weight")
            part = getattr(model.model, side)
            if saved is not None and not torch.equal(part.embed_tokens.weight, saved.float()):
                part.embed_tokens = nn.Embedding.from_pretrained(saved.float(), freeze=True, padding_idx=pad)
        head = state.get("lm_head.weight")
        if head is not None:
            model.lm_head.weight = nn.Parameter(head.float(), requires_grad=False)
        elif getattr(model.config, "tie_word_embeddings", True):
            model.lm_head.weight = model.model.decoder.embed_tokens.weight
    return model
