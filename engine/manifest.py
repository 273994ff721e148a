"""The bundle's manifest: what every file must be, and the model facts the engine reads instead of hard-coding."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from engine.errors import BundleError, ModelNotFoundError
from engine.verified_cache import VerifiedFiles

MANIFEST = "manifest.json"
FORMAT_VERSION = 2  # 2: compact source tokenizer (tokenizer.json + source_ids.json)
_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


@dataclass
class Manifest:
    """Parsed manifest.json. Fields the engine and GUI use are attributes; the rest stays in `raw`."""

    bundle_dir: Path
    raw: dict = field(repr=False)

    @property
    def model_id(self) -> str:
        return self.raw["model"]["id"]

    @property
    def license(self) -> str:
        return self.raw["model"]["license"]

    @property
    def attribution(self) -> str:
        return self.raw["model"]["attribution"]

    @property
    def languages(self) -> list[str]:
        return list(self.raw["tokenizer"]["language_tokens"])

    @property
    def scripts(self) -> dict[str, str]:
        """{"hans": ">>cmn_Hans<<", "hant": ">>cmn_Hant<<"} where the model has them."""
        return dict(self.raw.get("scripts", {}))

    @property
    def generation(self) -> dict:
        return dict(self.raw["generation"])

    @property
    def config(self) -> dict:
        return dict(self.raw["config"])

    @property
    def precisions(self) -> dict[str, dict]:
        return self.raw["precisions"]

    @property
    def graphs(self) -> dict[str, dict]:
        return self.raw["graphs"]

    @property
    def tokenizer(self) -> dict:
        return self.raw["tokenizer"]

    def path(self, relative: str) -> Path:
        return self.bundle_dir / relative

    def files_for(self, precision: str | None) -> list[str]:
        """Files one precision needs (shared files included); all files when precision is None."""
        files = list(self.raw["files"])
        if precision is None:
            return files
        others = [p for p in self.precisions if p != precision]
        return [f for f in files if not any(f.startswith(f"{o}/") for o in others)]


def load_manifest(bundle_dir: str | Path) -> Manifest:
    """Read a bundle's manifest, with a clear error when there is no bundle or the manifest is unreadable."""
    bundle = Path(bundle_dir)
    path = bundle / MANIFEST
    if not bundle.is_dir():
        raise ModelNotFoundError(f"no model bundle at {bundle}", [str(bundle)])
    if not path.is_file():
        raise ModelNotFoundError(f"{bundle} is not a Qiao model bundle (no {MANIFEST})", [str(bundle)])
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(str(bundle), [f"{MANIFEST} is unreadable: {exc}"]) from exc
    if not isinstance(raw, dict) or raw.get("format_version") != FORMAT_VERSION:
        version = raw.get("format_version") if isinstance(raw, dict) else None
        message = f"{MANIFEST} has format version {version!r}; this Qiao reads {FORMAT_VERSION}"
        if isinstance(version, int) and version < FORMAT_VERSION:
            message += " (the bundle was made by an older Qiao: build or download the model again)"
        elif isinstance(version, int):
            message += " (the bundle was made by a newer Qiao: update Qiao)"
        raise BundleError(str(bundle), [message])
    required = ("model", "files", "precisions", "graphs", "tokenizer", "generation", "config")
    missing = [k for k in required if k not in raw]
    if missing:
        raise BundleError(str(bundle), [f"{MANIFEST} lacks {', '.join(missing)}"])
    return Manifest(bundle, raw)


def verify_files(
    manifest: Manifest, precision: str | None = None, hashes: bool = True, cache: VerifiedFiles | None = None
) -> list[str]:
    """Every problem with the bundle's files, precisely; an empty list means the bundle is intact.

    `hashes=False` checks presence and sizes only (catches truncation). With a `cache`, files whose sha256 was
    already confirmed, and that have not changed on disk since, are not hashed again.
    """
    problems: list[str] = []
    for rel in manifest.files_for(precision):
        expected = manifest.raw["files"][rel]
        path = manifest.path(rel)
        if not path.is_file():
            problems.append(f"{rel}: missing")
            continue
        size = path.stat().st_size
        if size != expected["size"]:
            problems.append(f"{rel}: size {size} bytes, manifest says {expected['size']} (truncated or replaced)")
            continue
        if not hashes or (cache is not None and cache.is_verified(path, expected["sha256"])):
            continue
        try:
            digest = sha256_file(path)
        except OSError as exc:
            problems.append(f"{rel}: unreadable ({exc})")
            continue
        if digest != expected["sha256"]:
            problems.append(f"{rel}: sha256 {digest[:16]}… differs from the manifest's {expected['sha256'][:16]}…")
        elif cache is not None:
            cache.remember(path, digest)
    if cache is not None:
        cache.save()
    return problems


def verify_bundle(
    bundle_dir: str | Path, precision: str | None = None, hashes: bool = True, cache: VerifiedFiles | None = None
) -> Manifest:
    """Load and check a bundle; raise BundleError listing everything wrong."""
    manifest = load_manifest(bundle_dir)
    if precision is not None and precision not in manifest.precisions:
        available = ", ".join(manifest.precisions)
        raise BundleError(str(bundle_dir), [f"precision {precision} is not in this bundle (it has {available})"])
    problems = verify_files(manifest, precision, hashes=hashes, cache=cache)
    if problems:
        raise BundleError(str(bundle_dir), problems)
    return manifest
