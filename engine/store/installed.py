"""The installed model bundles: list them by pair, pick one for a direction, verify, import and remove.

Bundles live side by side in engine.store.locate's search roots (places only: the manifests are read here, and
`find_bundle` lives here so that the import goes one way). Only the per-user models folder (engine.paths.models_dir)
is Qiao's to change. Every change there is atomic: an import unpacks and verifies in a `.import-<pid>-*` folder
inside models_dir() (same file system), then renames it into place; a replaced bundle is first renamed aside
(`.old-<pid>-*-<name>`) and restored if the new one cannot take its place; a removed one is renamed to
`.remove-<pid>-*` before it is deleted. After a crash or kill -9 those folders are all that is left, and the next
import or removal cleans them (restoring an `.old-` bundle whose place is empty).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.bundle import strict_json
from engine.bundle.manifest import MANIFEST, MAX_MANIFEST_BYTES, Manifest, load_manifest, verify_files
from engine.bundle.safe_paths import inside
from engine.config import PRECISIONS
from engine.errors import BundleError, ModelNotFoundError, QiaoError
from engine.languages import LanguagePair, code_of
from engine.paths import MODEL_DIR, model_dir_override, models_dir, user_bundle_dir
from engine.store.archive import ArchiveError, extract, kind_of
from engine.store.choice import chosen_for, pick
from engine.store.locate import DEFAULT_PAIR, bundle_folders, bundle_search_paths, has_manifest, search_roots
from engine.store.quality import Quality, Speed, quality_of, speed_of

Progress = Callable[[int, int], None]
_CHUNK = 1 << 20
SPACE_MARGIN = 64 << 20  # free space kept beyond what a bundle needs
STALE_AFTER_S = 24 * 3600  # where a process cannot be asked whether it lives (Windows), a work folder's age
_PAIR = re.compile(r"[a-z][a-z0-9_]{0,15}-[a-z][a-z0-9_]{0,15}")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")  # a bundle name or the last part of a model id
_MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}/[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
_WORK = re.compile(r"\.(import|old|remove)-(\d+)-([A-Za-z0-9_]+)(?:-(.+))?")
_IGNORED_TOP = {"__MACOSX", ".DS_Store"}  # what macOS adds to a zip of a folder


class ModelStoreError(QiaoError):
    """A refusal of the model store, worded for a person; `problems` lists a failed verification's findings."""

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        self.problems = list(problems or [])
        lines = "".join(f"\n  - {p}" for p in self.problems)
        super().__init__(message + lines)


class ModelStoreCancelled(ModelStoreError):
    """The caller's cancel event was set: nothing was changed."""


@dataclass(frozen=True)
class InstalledModel:
    """One bundle found in a search root, as its manifest describes it (no file hashed)."""

    path: Path  # the bundle folder
    name: str  # folder name, e.g. "opus-mt-en-zh"
    pair: LanguagePair | None  # None when the manifest cannot be read (then `problem` says why)
    model_id: str
    license: str
    precisions: tuple[str, ...]
    size_bytes: int  # sum of the manifest's listed file sizes (+ manifest)
    location: str  # "explicit" | "env" | "program" | "source" | "user"
    removable: bool  # True only for bundles in the per-user models folder
    problem: str | None = None  # why it is unusable (unreadable manifest, old format...), None when it loads
    family: str = ""  # the model family that runs it ("marian", "bergamot"); "" when the manifest is unreadable
    quality: Quality | None = None  # published quality (engine.store.quality), None when none is known
    speed: Speed | None = None  # measured speed recorded in the manifest, None when none is

    @property
    def pair_key(self) -> str | None:
        return self.pair.key if self.pair is not None else None


# -- listing and choosing -----------------------------------------------------------------------------------------


def describe(path: Path, location: str) -> InstalledModel:
    """An InstalledModel for the bundle at `path`, from its manifest alone."""
    removable = location == "user" and _in_models_dir(path)
    try:
        manifest = load_manifest(path)
    except BundleError as exc:
        return _broken(path, location, removable, "; ".join(exc.problems))
    except (ModelNotFoundError, OSError) as exc:
        return _broken(path, location, removable, str(exc))
    try:
        own = (path / MANIFEST).stat().st_size
    except OSError:
        own = 0
    listed = tuple(manifest.precisions)
    precisions = tuple(p for p in PRECISIONS if p in listed) + tuple(p for p in listed if p not in PRECISIONS)
    return InstalledModel(
        path=path,
        name=path.name,
        pair=manifest.pair,
        model_id=manifest.model_id,
        license=manifest.license,
        precisions=precisions,
        size_bytes=own + sum(f["size"] for f in manifest.raw["files"].values()),
        location=location,
        removable=removable,
        family=manifest.family,
        quality=quality_of(manifest.raw, manifest.model_id, manifest.pair.key),
        speed=speed_of(manifest.raw),
    )


def _broken(path: Path, location: str, removable: bool, problem: str) -> InstalledModel:
    return InstalledModel(path, path.name, None, "", "", (), 0, location, removable, problem)


def _stated_pair_key(path: Path) -> str | None:
    """The direction a bundle's manifest states even when the manifest fails its checks (a bundle made by an older
    Qiao): None when it states none that can be read."""
    real, problem = inside(path, MANIFEST)
    if real is None or problem is not None:
        return None
    try:
        with open(real, "rb") as fh:
            data = fh.read(MAX_MANIFEST_BYTES + 1)
        if len(data) > MAX_MANIFEST_BYTES:
            return None
        return LanguagePair.from_dict(strict_json.loads(data.decode("utf-8"))["languages"]).key
    except Exception:  # whatever the file holds: it states no direction
        return None


def _in_models_dir(path: Path) -> bool:
    try:
        return not path.is_symlink() and path.parent.resolve() == models_dir().resolve()
    except OSError:
        return False


def installed_models(explicit: str | None = None) -> list[InstalledModel]:
    """Every bundle in every search root, in search order; a broken one is listed with its `problem`. A bundle a
    killed replace had moved aside, with nothing in its place, is put back first (restore_moved_aside)."""
    restore_moved_aside()
    found: list[InstalledModel] = []
    seen: set[Path] = set()
    for root in search_roots(explicit):
        for folder in bundle_folders(root):
            try:
                real = folder.resolve()
            except OSError:
                real = folder
            if real in seen:
                continue
            seen.add(real)
            found.append(describe(folder, root.location))
    return found


def normalise_pair(text: str) -> str:
    """ "en-zh" from "en-zh", "EN-ZH" or "eng-zho"; ModelStoreError for anything else."""
    source, sep, target = text.strip().partition("-")
    key = f"{code_of(source)}-{code_of(target)}" if sep else ""
    if not _PAIR.fullmatch(key):
        raise ModelStoreError(f"{text!r} is not a language pair such as en-zh")
    return key


def looks_like_name(text: str) -> bool:
    """Whether `--model` text may be a bundle name (`firefox-base-memory-en-zh`) or a model id
    (`Helsinki-NLP/opus-mt-en-zh`) rather than only a folder path."""
    return bool(_NAME.fullmatch(text) or _MODEL_ID.fullmatch(text))


def resolve_explicit(explicit: str | None) -> str | None:
    """`--model` as a folder: a path that exists is kept; otherwise a bundle name or model id of an installed
    bundle (as `qiao model list` shows them) gives that bundle's folder. An unknown name is a ModelNotFoundError
    that lists the installed names; a path that does not exist stays as given (its own error follows)."""
    if not explicit:
        return explicit
    path = Path(explicit).expanduser()
    try:
        exists = path.exists()
    except OSError:
        exists = False
    if exists or not looks_like_name(explicit):
        return explicit
    models = installed_models()
    for match in (lambda m: m.name == explicit, lambda m: m.model_id == explicit):
        named = [m for m in models if match(m)]
        usable = [m for m in named if m.problem is None]
        if usable or named:
            return str((usable or named)[0].path)
    names = sorted({m.name for m in models})
    have = f"installed: {', '.join(names)}" if names else "none is installed"
    raise ModelNotFoundError(
        f"--model {explicit}: no such folder, and no installed model is named {explicit} ({have}); give a bundle "
        "folder or one of the names `qiao model list` shows",
        [str(p) for p in bundle_search_paths()],
    )


def chosen_model(models: list[InstalledModel], pair_key: str) -> InstalledModel | None:
    """The model that translates `pair_key` among `models`: the user's choice for that direction (the shared
    settings file, engine.store.choice) when it is usable, else the best published quality, else the first."""
    return pick(models, pair_key, chosen_for(pair_key))


def find_for_pair(pair_key: str, explicit: str | None = None) -> Path:
    """The bundle for `pair_key` ("en-zh"): the user's choice for that direction, else the usable bundle of best
    published quality, else the first usable one in search order. `--model` (a folder or an installed bundle's
    name) / QIAO_MODEL_DIR stay final: given one of another pair, that is the error."""
    key = normalise_pair(pair_key)
    explicit = resolve_explicit(explicit)
    env = model_dir_override()
    if explicit or env:
        chosen = Path(explicit).expanduser() if explicit else env
        assert chosen is not None
        how = "--model" if explicit else MODEL_DIR.name
        if not has_manifest(chosen):
            raise ModelNotFoundError(f"no model bundle at {chosen} (given by {how})", [str(chosen)])
        model = describe(chosen, "explicit" if explicit else "env")
        if model.pair is not None and model.pair.key != key:
            raise ModelNotFoundError(
                f"the model at {chosen} (given by {how}) translates {model.pair.key}, not {key}", [str(chosen)]
            )
        return chosen
    models = installed_models()
    used = chosen_model(models, key)
    if used is not None:
        return used.path
    broken = [m for m in models if m.problem is not None]
    stated = {m.path: _stated_pair_key(m.path) for m in broken}
    for model in broken:  # none usable: one of this direction that fails its checks, so loading it says why
        if stated[model.path] == key:
            return model.path
    for model in broken:  # one whose manifest is too damaged to state a direction may be this one: loading it
        if stated[model.path] is None:  # names the damaged manifest, not "no model installed"
            return model.path
    others = sorted({m.pair_key for m in models if m.pair_key})
    have = f" (installed: {', '.join(others)})" if others else ""
    raise ModelNotFoundError(
        f"no {key} model installed{have}; get one with `qiao model download` or `qiao model import`",
        [str(p) for p in bundle_search_paths()],
        pair=key,
    )


def find_bundle(explicit: str | None = None, pair: str | None = None) -> Path:
    """The bundle to open: the first usable one for `pair` ("en-zh"); pair None prefers en→zh, else the first
    usable one, else the first found (so loading it says what is wrong).

    An explicit path or QIAO_MODEL_DIR is final: if it has no bundle (or, with `pair`, one of another pair), that
    is the error (no silent fallback to another model)."""
    if pair is not None:
        return find_for_pair(pair, explicit)
    explicit = resolve_explicit(explicit)
    roots = search_roots(explicit)
    if explicit or model_dir_override():
        chosen = roots[0].path
        if has_manifest(chosen):
            return chosen
        how = "--model" if explicit else MODEL_DIR.name
        raise ModelNotFoundError(f"no model bundle at {chosen} (given by {how})", [str(chosen)])
    models = installed_models(explicit)
    usable = [m for m in models if m.problem is None]
    preferred = chosen_model(models, DEFAULT_PAIR)
    if preferred is not None:
        return preferred.path
    for group in (usable, models):
        if group:
            return group[0].path
    raise ModelNotFoundError("no model bundle found", [str(p) for p in bundle_search_paths(explicit)])


def expected_bundle_dir(pair: str | None = None) -> Path:
    """Where a user should put a model for `pair` ("zh-en"; None: the default en→zh) in the per-user models folder,
    named as importing the Helsinki-NLP model for that pair would name it."""
    if pair is None:
        return user_bundle_dir()
    return models_dir() / f"opus-mt-{normalise_pair(pair)}"


# -- verification -------------------------------------------------------------------------------------------------


def _check(check_cancel: Callable[[], None] | None, progress: Progress | None, start: int, total: int):
    """A per-chunk callback for hashing: progress from `start`, then the cancel check."""

    def tick(done: int) -> None:
        if progress is not None:
            progress(start + done, total)
        if check_cancel is not None:
            check_cancel()

    return tick


def _hash_problems(manifest: Manifest, tick: Callable[[int], None]) -> tuple[list[str], dict[str, str]]:
    """Every sha256 of the bundle's listed files (those present with the right size); problems and digests."""
    problems, digests = [], {}
    done = 0
    for rel, spec in manifest.raw["files"].items():
        real, problem = inside(manifest.bundle_dir, rel)
        if problem is not None or real is None:
            continue  # verify_files names it
        digest = hashlib.sha256()
        try:
            with open(real, "rb") as fh:
                while chunk := fh.read(_CHUNK):
                    digest.update(chunk)
                    done += len(chunk)
                    tick(done)
        except OSError as exc:
            problems.append(f"{rel}: unreadable ({exc.strerror or exc})")
            continue
        got = digest.hexdigest()
        if got != spec["sha256"]:
            problems.append(f"{rel}: sha256 {got[:16]}… differs from the manifest's {spec['sha256'][:16]}…")
        else:
            digests[rel] = got
    return problems, digests


def _full_check(
    manifest: Manifest, progress: Progress | None, cancel_check: Callable[[], None] | None, start: int = 0
) -> tuple[list[str], dict[str, str]]:
    """Structure (every precision's graphs and weights, sizes) and then every sha256; the problems and digests."""
    structural = [p.detail for p in verify_files(manifest, None, hashes=False)]
    total = start + sum(f["size"] for f in manifest.raw["files"].values())
    hashed, digests = _hash_problems(manifest, _check(cancel_check, progress, start, total))
    if progress is not None:
        progress(total, total)
    return structural + [p for p in hashed if p not in structural], digests


def _canceller(cancel: threading.Event | None, what: str) -> Callable[[], None] | None:
    if cancel is None:
        return None

    def check() -> None:
        if cancel.is_set():
            raise ModelStoreCancelled(f"{what} cancelled: nothing was changed")

    return check


def verify_installed(
    model: InstalledModel, cancel: threading.Event | None = None, progress: Progress | None = None
) -> list[str]:
    """Every problem of the bundle (full sha256 check, no cache); [] when it is intact.

    `progress(done, total)` in bytes hashed; a set `cancel` raises ModelStoreCancelled."""
    if model.problem is not None:
        return [model.problem]
    try:
        manifest = load_manifest(model.path)
    except BundleError as exc:
        return list(exc.problems)
    except ModelNotFoundError as exc:
        return [str(exc)]
    problems, digests = _full_check(manifest, progress, _canceller(cancel, "verification"))
    if not problems:
        _remember(model.path, digests)  # the window's "verified" mark, and the next load skips the hashing
    return problems


def known_verified(model: InstalledModel) -> bool:
    """Whether every file of the bundle passed its sha256 check before and is unchanged since (the verified-files
    cache, stat only: cheap enough for a list of models). False means "not verified yet", not "damaged"."""
    from engine.bundle.verified_cache import VerifiedFiles

    if model.problem is not None:
        return False
    try:
        manifest = load_manifest(model.path)
        cache = VerifiedFiles()
        return all(cache.is_verified(model.path / rel, spec["sha256"]) for rel, spec in manifest.raw["files"].items())
    except (QiaoError, OSError):
        return False


# -- work folders -------------------------------------------------------------------------------------------------


def _alive(pid: int) -> bool | None:
    """Whether process `pid` runs; None where that cannot be asked safely (Windows' os.kill(pid, 0) kills)."""
    if pid == os.getpid():
        return True
    if sys.platform == "win32":
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. PermissionError: it exists, another user's
        return True
    return True


def _stale(entry: Path, pid: int) -> bool:
    alive = _alive(pid)
    if alive is not None:
        return not alive
    try:
        return time.time() - entry.stat().st_mtime > STALE_AFTER_S
    except OSError:
        return False


def restore_moved_aside(root: Path | None = None) -> None:
    """Put back each bundle a replace that was killed between its two renames had moved aside (`.old-<pid>-…-name`
    of a process no longer running) when nothing took its place: without this the user's model would vanish from
    every listing until the next import or removal. Nothing is deleted here; a folder that cannot be renamed stays."""
    root = root or models_dir()
    try:
        entries = [e for e in root.iterdir() if e.name.startswith(".old-")]
    except OSError:
        return
    for entry in entries:
        match = _WORK.fullmatch(entry.name)
        if match is None or not match.group(4) or not _stale(entry, int(match.group(2))):
            continue
        place = root / match.group(4)
        if not os.path.lexists(place) and has_manifest(entry):
            with contextlib.suppress(OSError):
                os.rename(entry, place)


def clean_leftovers(root: Path | None = None) -> None:
    """Remove what a killed import or removal left in the models folder; put back a bundle a killed replace had
    moved aside, when nothing took its place."""
    root = root or models_dir()
    try:
        entries = list(root.iterdir())
    except OSError:
        return
    for entry in entries:
        match = _WORK.fullmatch(entry.name)
        if match is None or not _stale(entry, int(match.group(2))):
            continue
        kind, name = match.group(1), match.group(4)
        if kind == "old" and name and not os.path.lexists(root / name):
            try:
                os.rename(entry, root / name)
                continue
            except OSError:
                pass
        shutil.rmtree(entry, ignore_errors=True)


def _work_name(kind: str, name: str = "") -> str:
    token = os.urandom(6).hex()
    return f".{kind}-{os.getpid()}-{token}" + (f"-{name}" if name else "")


# -- import -------------------------------------------------------------------------------------------------------


def bundle_name(model_id: str) -> str:
    """The folder name for a model id: its last path part, only [A-Za-z0-9._-] ("Helsinki-NLP/opus-mt-en-zh" →
    "opus-mt-en-zh"); never hidden, never empty."""
    last = model_id.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", last).lstrip(".-")[:100].rstrip(".-")
    return name or "model"


def bundle_root(folder: Path) -> Path:
    """The bundle inside an unpacked archive or a chosen folder: manifest.json at the top or in a single top
    folder."""
    try:
        if (folder / MANIFEST).is_file():
            return folder
        entries = [e for e in folder.iterdir() if e.name not in _IGNORED_TOP]
        if len(entries) == 1 and entries[0].is_dir() and (entries[0] / MANIFEST).is_file():
            return entries[0]
    except OSError as exc:
        raise unreadable(folder, exc) from None
    raise no_model(folder.name)


def unreadable(folder: Path, exc: OSError) -> ModelStoreError:
    """The folder (or what is in it) cannot be read: said plainly, with what to do."""
    what = folder if exc.filename in (None, str(folder)) else Path(exc.filename)
    why = "Qiao has no permission to read it" if isinstance(exc, PermissionError) else exc.strerror or str(exc)
    return ModelStoreError(f"cannot read {what} ({why}): check that it is readable, then import it again")


class NoModelError(ModelStoreError):
    """A folder or archive holds no model Qiao imports (a readable one: see `unreadable`)."""


def no_model(what: str) -> NoModelError:
    """`what` (a folder or an archive, by name) holds no model Qiao imports: says which kinds it accepts."""
    from engine import families

    firefox = "a Firefox Translations model folder (its model.*.bin, vocabulary .spm and lex.*.s2t.bin files)"
    try:
        families.get(families.BERGAMOT).build()
    except (ImportError, KeyError):
        firefox += ", which needs Qiao's build tools to convert (pip install 'qiao[build]')"
    return NoModelError(
        f"no model in {what}: expected a Qiao model bundle ({MANIFEST} at the top or in a single top folder) or "
        f"{firefox}"
    )


def _load(bundle: Path, what: str) -> Manifest:
    try:
        return load_manifest(bundle)
    except BundleError as exc:
        raise ModelStoreError(f"{what} is not a usable model bundle: nothing was changed", exc.problems) from None
    except ModelNotFoundError as exc:
        raise ModelStoreError(f"{what}: {exc}") from None


def _space_check(root: Path, needed: int) -> None:
    try:
        free = shutil.disk_usage(root).free
    except OSError:
        return
    if needed + SPACE_MARGIN > free:
        raise ModelStoreError(
            f"not enough space in {root}: the model needs {needed / 1e6:,.0f} MB, {free / 1e6:,.0f} MB are free"
        )


def _copy_listed(source: Path, manifest: Manifest, dest: Path, tick: Callable[[int], None]) -> None:
    """Copy manifest.json and the files it lists (only those: nothing unlisted is installed) from a folder."""
    checked = {rel: inside(source, rel) for rel in [MANIFEST, *manifest.raw["files"]]}
    problems = [str(problem) for _, problem in checked.values() if problem is not None]
    if problems:
        raise ModelStoreError(f"{source} is not a usable model bundle: nothing was changed", problems)
    done = 0
    for rel, (real, _) in checked.items():
        assert real is not None
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(real, "rb") as src, open(target, "xb") as out:
            while chunk := src.read(_CHUNK):
                out.write(chunk)
                done += len(chunk)
                tick(done)


class AlreadyInstalled(ModelStoreError):
    """A bundle of that name is installed; `replace=True` swaps it (the CLI's --force; the Models dialog asks)."""

    def __init__(self, target: Path) -> None:
        self.target = target
        super().__init__(
            f"{target.name} is already installed (at {target}); replace it with --force (the Models dialog asks)"
        )


def already_installed(target: Path) -> AlreadyInstalled:
    return AlreadyInstalled(target)


def _place(bundle: Path, target: Path, replace: bool) -> None:
    """Rename the verified `bundle` to `target`; an existing one is moved aside, and put back on failure."""
    root = target.parent
    if not os.path.lexists(target):
        try:
            os.rename(bundle, target)
            return
        except OSError as exc:
            if os.path.lexists(target) and not replace:
                raise already_installed(target) from None
            if not os.path.lexists(target):
                raise ModelStoreError(f"cannot install into {root}: {exc.strerror or exc}") from None
    if not replace:
        raise already_installed(target)
    old = root / _work_name("old", target.name)
    try:
        os.rename(target, old)
    except OSError as exc:
        raise ModelStoreError(
            f"cannot replace {target.name}: {exc.strerror or exc} (is it open in Qiao? close the window using it)"
        ) from None
    try:
        os.rename(bundle, target)
    except OSError as exc:
        os.rename(old, target)
        raise ModelStoreError(f"cannot replace {target.name}: {exc.strerror or exc}; the old one is kept") from None
    shutil.rmtree(old, ignore_errors=True)


def _remember(target: Path, digests: dict[str, str]) -> None:
    """Tell the verified-files cache what was just hashed: the first load need not hash it again."""
    from engine.bundle.verified_cache import VerifiedFiles

    try:
        cache = VerifiedFiles()
        for rel, digest in digests.items():
            cache.remember(target / rel, digest)
        cache.save()
    except OSError:
        pass


def _has_bundle(folder: Path) -> bool:
    """Whether `folder` holds a Qiao bundle where bundle_root looks (else it may be a model to convert)."""
    try:
        bundle_root(folder)
    except NoModelError:
        return False
    return True


class _Bar:
    """One progress bar over an import's phases (unpacking, converting, hashing): each phase's own (done, total) is
    mapped onto its share of one fixed total, so the bar only moves forward, however the phases count."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total, self.at = progress, max(1, total), 0

    def upto(self, share: float) -> Progress:
        """A phase's callback: its (done, total) moves the bar from where it is now to `share` of the whole."""
        low, high = self.at, max(self.at, round(share * self.total))

        def report(done: int, total: int) -> None:
            value = low + (high - low) * min(done, total) // total if total > 0 else low
            if value > self.at:
                self.at = value
            if self.progress is not None:
                self.progress(self.at, self.total)

        return report


CONVERTED = 0.9  # of an import that converts a model: the bar's share up to the end of the conversion
UNPACKED = 0.05  # of an archive holding such a model: the share of unpacking it (a second, against minutes)


def _source_bytes(folder: Path, most: int = 1000) -> int:
    """The size of the files under `folder` (a model folder to convert; the first `most` entries: a scale, not a
    count that must be exact): the progress bar's total."""
    total = 0
    for path in itertools.islice(folder.rglob("*"), most):
        try:
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        except OSError:
            continue
    return total


def _planned_target(folder: Path, root: Path) -> Path | None:
    """Where the bundle converted from the model folder `folder` will be installed, from its family's `model_id`
    (file names and metadata alone, nothing converted); None when no family converts it or it cannot tell."""
    from engine import families

    family = families.converter_for(folder)
    if family is None:
        return None
    try:
        planned = getattr(family.build(), "model_id", None)
    except ImportError:
        return None
    model_id = planned(folder) if planned is not None else None
    return root / bundle_name(model_id) if model_id else None


def _converted(
    folder: Path, what: str, out: Path, check: Callable[[], None] | None, progress: Progress | None = None
) -> Path:
    """The bundle a family's converter builds into `out` from the model folder `folder` (engine.families
    .converter_for: a Firefox Translations folder); ModelStoreError when no family reads it or it fails.
    `progress(done, total)` follows the converter's steps, and the cancel is checked at each (the converter then
    stops, leaving nothing)."""
    from engine import families
    from engine.errors import BuildError, CheckpointError

    family = families.converter_for(folder)
    if family is None:
        raise no_model(what)
    if check is not None:
        check()

    def step(done: int, total: int) -> None:
        if progress is not None:
            progress(done, total)
        if check is not None:
            check()

    try:
        family.build().build_bundle(folder, out, quiet=True, progress=step)
    except ImportError as exc:
        raise ModelStoreError(
            f"{what} is a {family.name} model to convert, which needs Qiao's build tools ({exc.name}): "
            "pip install 'qiao[build]', or import a converted bundle"
        ) from None
    except (BuildError, CheckpointError) as exc:
        raise ModelStoreError(f"{what} could not be converted into a Qiao bundle: nothing was changed\n{exc}") from None
    if check is not None:
        check()
    return out


def import_bundle(
    source: Path,
    *,
    replace: bool = False,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    expect_pair: str | None = None,
) -> InstalledModel:
    """Install the bundle in `source` (a folder, or a .zip / .tar / .tar.gz / .tgz / .tar.xz / .tar.bz2 archive,
    .tar.zst where this Python reads it) into the per-user models folder, as `bundle_name(model id)`. A folder or
    archive holding a model as its makers publish it (a Firefox Translations model folder) is converted into a
    bundle first, by its family's converter (the build tools needed).

    Unpacked (or copied: only the listed files) into a work folder inside models_dir(), verified in full (every
    precision, every sha256), then renamed into place: on any refusal, failure or cancel the models folder is as it
    was. An installed bundle of the same name is a refusal unless `replace`, made before anything long: a model to
    convert is refused by the name its family says it will get (engine.families: `model_id`), before converting.
    `progress(done, total)` counts bytes copied or unpacked then hashed (total is refined once the manifest is
    read); an import that converts reports on one fixed total, shared between unpacking (UNPACKED), the converter's
    steps (up to CONVERTED) and the bytes hashed, so it only rises. `expect_pair` ("en-zh", for a download)
    refuses a bundle of another pair. ModelStoreError (ModelStoreCancelled on cancel) says why; a cancel during the
    conversion stops it at its next step.
    """
    source = Path(source).expanduser()
    check = _canceller(cancel, "import")
    try:
        is_dir = source.is_dir()
        exists = is_dir or source.is_file()
    except OSError as exc:
        raise ModelStoreError(f"{source} cannot be read ({exc.strerror or exc})") from None
    if not exists:
        raise ModelStoreError(f"nothing to import at {source}")
    if is_dir:
        try:
            with os.scandir(source) as entries:
                next(entries, None)
        except OSError as exc:
            raise unreadable(source, exc) from None
    kind = None if is_dir else kind_of(source)
    if not is_dir and kind is None:
        raise ModelStoreError(f"{source.name} is neither a model folder nor a .zip / .tar.* archive")
    root = models_dir()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelStoreError(f"cannot create the models folder {root}: {exc.strerror or exc}") from None
    clean_leftovers(root)
    try:
        work = Path(tempfile.mkdtemp(prefix=_work_name("import") + "-", dir=root))
    except OSError as exc:
        raise _write_failed(root, exc, source.name) from None
    try:
        if is_dir and _has_bundle(source):
            found = bundle_root(source)
            manifest = _load(found, str(found))
            _early_refusal(root, manifest, replace, expect_pair)
            total = sum(f["size"] for f in manifest.raw["files"].values())
            _space_check(root, total)
            bundle = work / "bundle"
            _copy_listed(found, manifest, bundle, _check(check, progress, 0, 2 * total))
            start = total
            hashing = progress
        elif is_dir:  # a model as its makers publish it (a Firefox Translations folder): converted first
            _refuse_installed(_planned_target(source, root), replace)
            bar = _Bar(progress, _source_bytes(source))
            bundle = _converted(source, source.name, work / "bundle", check, bar.upto(CONVERTED))
            start, hashing = 0, bar.upto(1.0)
        else:
            unpacked = work / "unpacked"
            unpacked.mkdir()
            assert kind is not None  # not a folder, so an archive kind (checked above)
            bars: list[tuple[_Bar, Progress]] = []  # a model to convert: its bar, once the members are known

            def listed(names: list[str], total: int) -> None:
                if not any(name.rsplit("/", 1)[-1] == MANIFEST for name in names):
                    bar = _Bar(progress, total)
                    bars.append((bar, bar.upto(UNPACKED)))

            def unpacking(done: int, total: int) -> None:
                if bars:
                    bars[0][1](done, total)
                elif progress is not None:
                    progress(done, 2 * total)  # a bundle: unpacked, then as many bytes hashed

            try:
                start = extract(
                    source,
                    kind,
                    unpacked,
                    before=lambda total: _space_check(root, total),
                    listed=listed,
                    check=check,
                    progress=unpacking,
                )
            except ArchiveError as exc:
                raise ModelStoreError(str(exc)) from None
            hashing = progress
            if _has_bundle(unpacked):
                bundle = bundle_root(unpacked)
            else:
                _refuse_installed(_planned_target(unpacked, root), replace)
                bar = bars[0][0] if bars else _Bar(progress, start)
                bundle = _converted(unpacked, source.name, work / "bundle", check, bar.upto(CONVERTED))
                start, hashing = 0, bar.upto(1.0)
        manifest = _load(bundle, source.name)
        _early_refusal(root, manifest, replace, expect_pair)
        problems, digests = _full_check(manifest, hashing, check, start)
        if problems:
            raise ModelStoreError(f"{source.name} failed verification: nothing was changed", problems)
        if check is not None:
            check()
        target = root / bundle_name(manifest.model_id)
        _place(bundle, target, replace)
    except OSError as exc:
        raise _write_failed(root, exc, source.name) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _remember(target, digests)
    return describe(target, "user")


def _in_root(root: Path, filename: object) -> bool:
    if not isinstance(filename, str | os.PathLike):
        return False
    try:
        return Path(filename).resolve().is_relative_to(root.resolve())
    except (OSError, ValueError):
        return False


def _write_failed(root: Path, exc: OSError, what: str) -> ModelStoreError:
    """An import that failed on an OSError, worded for a person: a disk that filled up and a models folder that
    cannot be written (read-only, no permission) say so and what to do; anything else names the file."""
    if exc.errno == errno.ENOSPC or exc.errno == getattr(errno, "EDQUOT", None):
        full = root if exc.filename is None or _in_root(root, exc.filename) else Path(str(exc.filename)).parent
        room = "set QIAO_DATA_DIR to a folder on a disk with room" if full == root else f"free space in {full}"
        return ModelStoreError(
            f"not enough space in {full}: the disk filled up while importing {what} ({exc.strerror or exc}); nothing "
            f"was changed. Free some space and import it again, or {room}"
        )
    if exc.errno == errno.EROFS or (isinstance(exc, PermissionError) and _in_root(root, exc.filename)):
        return ModelStoreError(
            f"cannot write to the models folder {root} ({exc.strerror or exc}): nothing was changed. Make it "
            "writable, or set QIAO_DATA_DIR to a folder you can write to"
        )
    where = f"{exc.filename}: " if exc.filename else ""
    return ModelStoreError(f"import failed, nothing was changed: {where}{exc.strerror or exc}")


def _early_refusal(root: Path, manifest: Manifest, replace: bool, expect_pair: str | None) -> None:
    """Refuse before the expensive part: an installed bundle of that name, or the wrong pair."""
    if expect_pair is not None and manifest.pair.key != expect_pair:
        raise ModelStoreError(
            f"the bundle translates {manifest.pair.key}, but {expect_pair} was expected: nothing was changed"
        )
    _refuse_installed(root / bundle_name(manifest.model_id), replace)


def _refuse_installed(target: Path | None, replace: bool) -> None:
    """AlreadyInstalled when a bundle is installed at `target` (None: not known yet) and it is not to be replaced."""
    if target is not None and not replace and os.path.lexists(target):
        raise already_installed(target)


# -- removal ------------------------------------------------------------------------------------------------------


def remove_bundle(model: InstalledModel) -> None:
    """Delete a bundle of the per-user models folder (renamed away first, so no half-deleted bundle is ever
    listed). Bundles beside the program, in the source checkout or given by --model are refused."""
    root = models_dir()
    if not model.removable or not _in_models_dir(model.path):
        raise ModelStoreError(
            f"{model.name} is not in the per-user models folder ({model.path}; {model.location}): Qiao removes "
            f"only the bundles in {root}"
        )
    if not os.path.lexists(model.path):
        raise ModelStoreError(f"{model.name} is no longer installed")
    clean_leftovers(root)
    trash = root / _work_name("remove")
    try:
        os.rename(model.path, trash)
    except OSError as exc:
        # (on Windows a folder with a file open in it cannot be renamed: PermissionError there means that)
        unwritable = exc.errno == errno.EROFS or (isinstance(exc, PermissionError) and sys.platform != "win32")
        hint = (
            f"the models folder {root} cannot be written: make it writable"
            if unwritable
            else "is it open in Qiao? close the window using it"
        )
        raise ModelStoreError(f"cannot remove {model.name}: {exc.strerror or exc} ({hint})") from None
    shutil.rmtree(trash, ignore_errors=True)  # what cannot be deleted now goes at the next clean_leftovers
