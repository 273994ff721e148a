"""Writing a bundle, shared by every family's converter: the sealed manifest and the move into place.

The manifest lists every file with its size and sha256 and carries the seal of its canonical content
(engine.bundle.manifest.seal); a bundle is built in a private staging folder and moved whole into place, so a failed
build never leaves a half-written bundle behind.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from engine.bundle.manifest import MANIFEST, dumps, seal, sha256_file


def write_manifest(bundle: Path, manifest: dict) -> None:
    """List every file with its size and sha256, then write the manifest sealed; `manifest` itself gains the files
    and the seal it was written with."""
    files = {}
    for path in sorted(p for p in bundle.rglob("*") if p.is_file() and p.name != MANIFEST):
        files[path.relative_to(bundle).as_posix()] = {"size": path.stat().st_size, "sha256": sha256_file(path)}
    manifest["files"] = files
    manifest.update(seal(manifest))
    (bundle / MANIFEST).write_text(dumps(manifest), encoding="utf-8")


def install_staged(staging: Path, out_dir: Path) -> None:
    """Move a finished staging folder to `out_dir` (replacing what is there), readable by every user of the machine:
    the staging folder is 0700 and onnx writes external data 0600, readable by the builder only."""
    staging.chmod(0o755)
    for path in staging.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(staging), str(out_dir))
