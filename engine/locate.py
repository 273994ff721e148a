"""Where Qiao looks for its model bundle, in order, so the CLI and the app agree."""

from __future__ import annotations

import sys
from pathlib import Path

from engine.errors import ModelNotFoundError
from engine.paths import BUNDLE_NAME, MODEL_DIR, model_dir_override, user_bundle_dir

SOURCE_ROOT = Path(__file__).resolve().parent.parent


def expected_bundle_dir() -> Path:
    """Where a user should put a model: the per-user models folder (engine.paths)."""
    return user_bundle_dir()


def bundle_search_paths(explicit: str | None = None) -> list[Path]:
    paths: list[Path] = []
    if explicit:
        paths.append(Path(explicit).expanduser())
    env = model_dir_override()
    if env:
        paths.append(env)
    if getattr(sys, "frozen", False):
        exe_dir = Path(sys.executable).resolve().parent
        paths += [exe_dir / "models" / BUNDLE_NAME, exe_dir / "_internal" / "models" / BUNDLE_NAME]
        meipass = getattr(sys, "_MEIPASS", None)
        if meipass:
            paths.append(Path(meipass) / "models" / BUNDLE_NAME)
    paths.append(SOURCE_ROOT / "resources" / "models" / BUNDLE_NAME)
    paths.append(expected_bundle_dir())
    unique: list[Path] = []
    for p in paths:
        if p not in unique:
            unique.append(p)
    return unique


def _has_manifest(path: Path) -> bool:
    """Whether `path` looks like a bundle; a folder that cannot be read counts, so loading it says why."""
    try:
        return (path / "manifest.json").is_file()
    except OSError:
        return True


def find_bundle(explicit: str | None = None) -> Path:
    """The first bundle found (a folder with manifest.json). An explicit path or QIAO_MODEL_DIR is final: if it
    has no bundle, that is the error (no silent fallback to another model)."""
    searched = bundle_search_paths(explicit)
    if explicit or model_dir_override():
        chosen = searched[0]
        if _has_manifest(chosen):
            return chosen
        how = "--model" if explicit else MODEL_DIR.name
        raise ModelNotFoundError(f"no model bundle at {chosen} (given by {how})", [str(chosen)])
    for path in searched:
        if _has_manifest(path):
            return path
    raise ModelNotFoundError("no model bundle found", [str(p) for p in searched])
