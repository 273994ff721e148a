"""Find a Marian checkpoint: a local directory (no network at all) or a Hugging Face model id (downloaded)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from engine.errors import CheckpointError
from engine.languages import FACTS, code_of

REQUIRED = ("config.json", "source.spm", "target.spm", "vocab.json")
WEIGHTS = ("model.safetensors", "pytorch_model.bin")
OPTIONAL = ("generation_config.json", "tokenizer_config.json", "special_tokens_map.json", "README.md", "LICENSE")
# What we know about opus-mt models: CC-BY-4.0, by the Language Technology Research Group at the University of
# Helsinki. Used when the checkpoint's model card does not say otherwise.
OPUS_LICENSE = "CC-BY-4.0"
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


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    model_id: str
    revision: str
    license: str
    attribution: str
    source_lang: str = "en"  # engine.languages codes, from checkpoint_languages()
    target_lang: str = "zh"


def _check_dir(path: Path) -> None:
    missing = [name for name in REQUIRED if not (path / name).is_file()]
    if not any((path / w).is_file() for w in WEIGHTS):
        missing.append(" or ".join(WEIGHTS))
    if missing:
        raise CheckpointError(
            f"{path} is not a complete Marian checkpoint: missing {', '.join(missing)}. "
            "A checkpoint directory needs config.json, the weights, source.spm, target.spm and vocab.json."
        )


def _local_revision(path: Path) -> str:
    weights = next(path / w for w in WEIGHTS if (path / w).is_file())
    digest = hashlib.sha256()
    with open(weights, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return f"local-sha256:{digest.hexdigest()[:16]}"


def _card_license(path: Path) -> str | None:
    card = path / "README.md"
    if not card.is_file():
        return None
    for line in card.read_text(encoding="utf-8", errors="replace").splitlines()[:40]:
        if line.strip().lower().startswith("license:"):
            return line.split(":", 1)[1].strip()
    return None


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
        _check_dir(path)
        license_ = _card_license(path) or OPUS_LICENSE
        name = model_id or path.name
        src, tgt = pick_languages(path, name, source_lang, target_lang)
        return Checkpoint(path.resolve(), name, _local_revision(path), license_, opus_attribution(name), src, tgt)
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
        local = Path(snapshot_download(repo_id, allow_patterns=patterns))
    except LocalEntryNotFoundError as exc:
        raise CheckpointError(
            f"cannot download {repo_id}: no network connection and it is not in the local Hugging Face cache. "
            "Run this on a machine with internet, or pass a local checkpoint directory to --from."
        ) from exc
    except (HfHubHTTPError, OSError) as exc:
        raise CheckpointError(f"cannot download {repo_id}: {exc}") from exc
    _check_dir(local)
    revision = local.name  # snapshot folders are named by commit hash
    license_ = _card_license(local) or OPUS_LICENSE
    src, tgt = pick_languages(local, repo_id, source_lang, target_lang)
    return Checkpoint(local, repo_id, revision, license_, opus_attribution(repo_id), src, tgt)
