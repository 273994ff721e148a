"""Where Qiao looks for model bundles, in order, so the CLI, the app and the Models dialog agree.

Search roots, in order: `--model` and `$QIAO_MODEL_DIR` (one bundle each, and final: when given, nothing else is
tried), then folders of bundles (`<name>/manifest.json` each): beside the frozen program (`<exe dir>/models`,
`_internal/models`, `_MEIPASS/models`), the source checkout's `resources/models`, the per-user models folder.
Several bundles live side by side; `find_bundle(pair=...)` picks one by language pair (engine.model_store).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from engine.errors import ModelNotFoundError
from engine.paths import MODEL_DIR, model_dir_override, models_dir, user_bundle_dir

SOURCE_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PAIR = "en-zh"  # what Qiao opens when no direction is asked for
LOCATIONS = ("explicit", "env", "program", "source", "user")


@dataclass(frozen=True)
class SearchRoot:
    """One place bundles are looked for: a single bundle (`single`) or a folder with one bundle per sub-folder."""

    path: Path
    location: str  # one of LOCATIONS
    single: bool = False


def expected_bundle_dir(pair: str | None = None) -> Path:
    """Where a user should put a model for `pair` ("zh-en"; None: the default en→zh) in the per-user models folder,
    named as importing the Helsinki-NLP model for that pair would name it."""
    if pair is None:
        return user_bundle_dir()
    from engine.model_store import normalise_pair

    return models_dir() / f"opus-mt-{normalise_pair(pair)}"


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


def find_bundle(explicit: str | None = None, pair: str | None = None) -> Path:
    """The bundle to open: the first usable one for `pair` ("en-zh"); pair None prefers en→zh, else the first
    usable one, else the first found (so loading it says what is wrong).

    An explicit path or QIAO_MODEL_DIR is final: if it has no bundle (or, with `pair`, one of another pair), that
    is the error (no silent fallback to another model)."""
    from engine.model_store import find_for_pair, installed_models

    if pair is not None:
        return find_for_pair(pair, explicit)
    roots = search_roots(explicit)
    if explicit or model_dir_override():
        chosen = roots[0].path
        if has_manifest(chosen):
            return chosen
        how = "--model" if explicit else MODEL_DIR.name
        raise ModelNotFoundError(f"no model bundle at {chosen} (given by {how})", [str(chosen)])
    models = installed_models(explicit)
    usable = [m for m in models if m.problem is None]
    preferred = [m for m in usable if m.pair is not None and m.pair.key == DEFAULT_PAIR]
    for group in (preferred, usable, models):
        if group:
            return group[0].path
    raise ModelNotFoundError("no model bundle found", [str(p) for p in bundle_search_paths(explicit)])
