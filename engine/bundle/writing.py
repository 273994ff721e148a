"""Writing a bundle, shared by every family's converter: the sealed manifest and the move into place.

The manifest lists every file with its size and sha256 and carries the seal of its canonical content
(engine.bundle.manifest.seal); a bundle is built in a private staging folder and moved whole into place, so a failed
build never leaves a half-written bundle behind.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from engine.bundle.manifest import MANIFEST, dumps, seal, sha256_file
from engine.errors import BuildError


def write_manifest(bundle: Path, manifest: dict) -> None:
    """List every file with its size and sha256, then write the manifest sealed; `manifest` itself gains the files
    and the seal it was written with."""
    files = {}
    for path in sorted(p for p in bundle.rglob("*") if p.is_file() and p.name != MANIFEST):
        files[path.relative_to(bundle).as_posix()] = {"size": path.stat().st_size, "sha256": sha256_file(path)}
    manifest["files"] = files
    manifest.update(seal(manifest))
    (bundle / MANIFEST).write_text(dumps(manifest), encoding="utf-8")


def check_out_dir(out_dir: Path, overwrite: bool, source: Path | str | None = None) -> None:
    """Refuse an output folder before any work: one that is not a folder, a non-empty one without `overwrite`, and
    with it anything but a bundle (--force replaces a bundle, never a folder of other files), or a folder that is or
    holds the model being converted (`source`, when it is a path here)."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise BuildError(f"{out_dir} exists and is not a folder")
    if source is not None and Path(source).exists():
        where, read = out_dir.resolve(), Path(source).resolve()
        if where == read or where in read.parents:
            raise BuildError(f"{out_dir} holds the model being converted ({source}): give another --out folder")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        if not overwrite:
            raise BuildError(f"{out_dir} exists and is not empty (use --force to replace it)")
        if not (out_dir / MANIFEST).is_file():
            raise BuildError(
                f"{out_dir} is not a model bundle (no {MANIFEST}): --force replaces a bundle, never a folder of other "
                "files; give a new or empty folder"
            )


STALE_AFTER_S = 24 * 3600  # where a process cannot be asked whether it runs (Windows), a day-old staging folder


def staging_dir(out_dir: Path) -> Path:
    """A private folder to build `out_dir` in, beside it (`.NAME.build-PID-xxxx`): the move into place is then a
    rename, a folder that cannot be written fails before the work rather than after it, and what a build killed
    outright (kill -9, a power cut) leaves is removed by the next build into `out_dir` once its process is gone,
    instead of staying in the temporary folder for good."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{out_dir.name}.build-"
    for entry in out_dir.parent.glob(glob.escape(prefix) + "*"):
        pid = entry.name[len(prefix) :].split("-", 1)[0]
        if pid.isdigit() and _gone(int(pid), entry):
            shutil.rmtree(entry, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=out_dir.parent))


def _gone(pid: int, entry: Path) -> bool:
    """Whether the build that made `entry` has ended (by its process id; by age where that cannot be asked safely:
    Windows' os.kill(pid, 0) would end the process)."""
    if pid == os.getpid():
        return False
    if sys.platform == "win32":
        try:
            return time.time() - entry.stat().st_mtime > STALE_AFTER_S
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process: it runs
        return False
    return False


def install_staged(staging: Path, out_dir: Path) -> None:
    """Move a finished staging folder to `out_dir` (replacing what is there), readable by every user of the machine:
    the staging folder is 0700 and onnx writes external data 0600, readable by the builder only.

    The staging folder is first moved into a hidden folder beside `out_dir` (a copy when it is on another disk: an
    interruption or a full disk leaves only that, removed here on failure), then swapped in by renames, so
    `out_dir` is never a half-copied bundle and a bundle it held is kept when the move fails."""
    staging.chmod(0o755)
    for path in staging.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    incoming = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.new-", dir=out_dir.parent))
    old = incoming.with_name(incoming.name.replace(".new-", ".old-", 1))
    try:
        incoming.rmdir()  # shutil.move puts a folder inside an existing one
        shutil.move(str(staging), str(incoming))
        if out_dir.exists() or out_dir.is_symlink():
            os.rename(out_dir, old)
        try:
            os.rename(incoming, out_dir)
        except OSError:
            if os.path.lexists(old):
                os.rename(old, out_dir)
            raise
    finally:
        for leftover in (incoming, old):
            if leftover.is_symlink():
                leftover.unlink()
            elif leftover.exists():
                shutil.rmtree(leftover, ignore_errors=True)
