"""Where Qiao looks for model bundles, in order, so the CLI, the app and the Models dialog agree.

Search roots, in order: `--model` and `$QIAO_MODEL_DIR` (one bundle each, and final: when given, nothing else is
tried), then folders of bundles (`<name>/manifest.json` each): beside the frozen program (`<exe dir>/models`,
`_internal/models`, `_MEIPASS/models`), the source checkout's `resources/models`, the per-user models folder.
Several bundles live side by side; engine.store.installed lists them and picks one by language pair (`find_bundle`).
This module knows only places, never manifests: the store imports it, never the other way round.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from engine.paths import model_dir_override, models_dir

SOURCE_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_PAIR = "en-zh"  # what Qiao opens when no direction is asked for
LOCATIONS = ("explicit", "env", "program", "source", "user")


@dataclass(frozen=True)
class SearchRoot:
    """One place bundles are looked for: a single bundle (`single`) or a folder with one bundle per sub-folder."""

    path: Path
    location: str  # one of LOCATIONS
    single: bool = False


def search_roots(explicit: str | None = None) -> list[SearchRoot]:
    """Every root in search order, each path once."""
    roots: list[SearchRoot] = []
    if explicit:
        roots.append(SearchRoot(Path(explicit).expanduser(), "explicit", single=True))
    env = model_dir_override()
    if env:
        roots.append(SearchRoot(env, "env", single=True))
    if getattr(sys, "frozen", False):
        exe_dir = Path(sys.executable).resolve().parent
        roots += [SearchRoot(exe_dir / "models", "program"), SearchRoot(exe_dir / "_internal" / "models", "program")]
        meipass = getattr(sys, "_MEIPASS", None)
        if meipass:
            roots.append(SearchRoot(Path(meipass) / "models", "program"))
    roots.append(SearchRoot(SOURCE_ROOT / "resources" / "models", "source"))
    roots.append(SearchRoot(models_dir(), "user"))
    unique: list[SearchRoot] = []
    for root in roots:
        if all(root.path != r.path for r in unique):
            unique.append(root)
    return unique


def bundle_search_paths(explicit: str | None = None) -> list[Path]:
    """The roots' paths, for "searched: …" in an error."""
    return [r.path for r in search_roots(explicit)]


def has_manifest(path: Path) -> bool:
    """Whether `path` looks like a bundle; a folder that cannot be read counts, so loading it says why."""
    try:
        return (path / "manifest.json").is_file()
    except OSError:
        return True


def bundle_folders(root: SearchRoot) -> list[Path]:
    """The bundles of one root: the root itself when single, else its sub-folders with a manifest, by name.

    Names starting with "." are Qiao's own work folders (`.downloads`, `.import-*`) and never bundles."""
    if root.single:
        return [root.path] if has_manifest(root.path) else []
    try:
        children = sorted(root.path.iterdir())
    except OSError:  # missing or unreadable: nothing installed there
        return []
    found = []
    for child in children:
        if child.name.startswith("."):
            continue
        try:
            is_dir = child.is_dir()
        except OSError:
            is_dir = False
        if is_dir and has_manifest(child):
            found.append(child)
    return found
