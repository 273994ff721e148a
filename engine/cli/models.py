"""`qiao model list / import / remove / download`: the Models dialog's actions on the command line.

Import and download run on a worker thread while the main thread waits, so Ctrl+C only sets the cancel event: the
store's own cleanup runs (nothing installed, a partial download kept for resume) and the exit status is 130.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO, TypeVar

from engine.cli.io import Output, json_line, say
from engine.errors import QiaoError

EXIT_CANCELLED = 130
T = TypeVar("T")


def add_model_actions(msub: argparse._SubParsersAction) -> None:
    """The list/import/remove/download sub-commands of `qiao model`."""
    lst = msub.add_parser(
        "list",
        help="the installed model bundles, by language pair, with family and published quality",
        description="A * marks the model each direction uses: the one chosen in the window, else the best published "
        "quality. `qiao translate --model NAME` uses another.",
    )
    lst.add_argument("--json", action="store_true", help="one JSON list instead of a table")
    imp = msub.add_parser("import", help="install a bundle from a folder or a .zip / .tar.* archive (verified first)")
    imp.add_argument("path", metavar="PATH", help="bundle folder or archive")
    imp.add_argument("--force", action="store_true", help="replace an installed bundle of the same name")
    rm = msub.add_parser("remove", help="delete a bundle from the per-user models folder")
    rm.add_argument("name", metavar="NAME", help="the bundle's name, as `qiao model list` shows it")
    rm.add_argument("--yes", "-y", action="store_true", help="do not ask")
    dl = msub.add_parser(
        "download",
        help="download bundles from the model catalogue (only when asked; needs the internet)",
        description="Without ID: the best-quality bundle of each direction, unless installed (--all: every "
        "bundle not installed yet). A partial download is kept and resumed.",
    )
    dl.add_argument("ids", nargs="*", metavar="ID", help="catalogue ids, e.g. opus-mt-zh-en (see --list)")
    dl.add_argument(
        "--catalogue",
        metavar="URL",
        help="catalogue URL or file (default: $QIAO_CATALOGUE_URL, else the project's release catalogue)",
    )
    dl.add_argument("--list", action="store_true", help="show the catalogue's bundles and download nothing")
    dl.add_argument("--all", action="store_true", help="without ID: every bundle, not only the best of each direction")
    dl.add_argument("--force", action="store_true", help="download again and replace an installed bundle")


def run_model_action(args: argparse.Namespace) -> int:
    action = args.model_command
    if action == "list":
        return _list(args)
    if action == "import":
        return _import(args)
    if action == "remove":
        return _remove(args)
    return _download(args)


def megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


# -- list ---------------------------------------------------------------------------------------------------------


def _record(model, used: bool = False) -> dict:
    from engine.store.installed import known_verified

    return {
        "name": model.name,
        "pair": model.pair_key,
        "model_id": model.model_id,
        "family": model.family or None,
        "quality": model.quality.to_dict() if model.quality is not None else None,
        "speed": model.speed.to_dict() if model.speed is not None else None,
        "used": used,  # the model its direction uses (the window's choice, else the best published quality)
        "path": str(model.path),
        "size_bytes": model.size_bytes,
        "precisions": list(model.precisions),
        "license": model.license,
        "location": model.location,
        "removable": model.removable,
        "problem": model.problem,
        "verified": known_verified(model),  # every file hashed before and unchanged since (`model verify` hashes)
    }


def used_paths(models: list) -> set:
    """The folder of the model each direction uses (engine.store.installed.chosen_model)."""
    from engine.store.installed import chosen_model

    used = set()
    for key in dict.fromkeys(m.pair_key for m in models if m.pair_key):
        chosen = chosen_model(models, key)
        if chosen is not None:
            used.add(chosen.path)
    return used


def fallback_note(models: list, key: str, used: object) -> str | None:
    """When the model chosen for `key` (the window's choice, in the shared settings file) is not the one `used`
    because it is gone, moved or damaged (engine.store.choice.pick falls back to the best other one): one line that
    says so; None when the choice is used or there is none."""
    from engine.store.choice import chosen_for

    chosen = chosen_for(key)
    if not chosen or used is None:
        return None
    used_name, used_id = getattr(used, "name", None), getattr(used, "model_id", None)
    if chosen in (used_name, used_id):
        return None
    named = [m for m in models if chosen in (m.name, m.model_id)]
    broken = next((m for m in named if m.problem is not None), None)
    other = next((m for m in named if m.pair_key is not None and m.pair_key != key), None)
    if any(m.problem is None and m.pair_key == key for m in named):
        return None  # the choice is usable: `used` was asked for otherwise (--model)
    if broken is not None:
        why = f"cannot be used ({broken.problem}); check it with: qiao model verify {broken.name}"
    elif other is not None:
        why = f"translates {other.pair_key}, not {key}"
    else:
        why = "is not installed any more"
    return (
        f"the model chosen for {key} ({chosen}) {why}; using {used_name} "
        "(choose another with the window's model indicator, or give --model NAME)"
    )


def _list(args: argparse.Namespace) -> int:
    from engine.store.installed import installed_models

    models = installed_models(args.model)
    used = used_paths(models)
    if not args.model:
        for m in models:
            note = fallback_note(models, m.pair_key, m) if m.path in used and m.pair_key else None
            if note is not None:
                say(f"note: {note}")
    out = Output(sys.stdout)
    if args.json:
        out.write(json_line([_record(m, m.path in used) for m in models]))
        return 0
    if not models:
        say("no model bundles installed: get one with `qiao model download` or `qiao model import PATH`")
        return 0
    rows = [("", "PAIR", "NAME", "FAMILY", "QUALITY", "SPEED", "SIZE", "PRECISIONS", "LICENCE", "LOCATION")]
    for m in models:
        rows.append(
            (
                "*" if m.path in used else "",
                m.pair_key or "?",
                m.name,
                m.family or "?",
                m.quality.short() if m.quality is not None else "–",
                m.speed.short() if m.speed is not None else "–",
                megabytes(m.size_bytes) if m.size_bytes else "–",
                ",".join(m.precisions) or "–",
                m.license or "–",
                m.location,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        out.write("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() + "\n")
    for m in models:
        if m.problem:
            out.write(f"{m.name} ({m.path}) is unusable: {m.problem}\n")
    sources = sorted({f"{q.metric} on {q.test_set}: {q.source}" for m in models if (q := m.quality) is not None})
    if used:
        out.write("* used for its direction (chosen in the window, else the best quality); --model NAME picks one\n")
    for line in sources:
        out.write(f"quality: {line}\n")
    return 0


# -- long actions -------------------------------------------------------------------------------------------------


class ByteProgress:
    """ "label: 12.3 of 300.0 MB (4%)" on one rewritten stderr line, only when stderr is a terminal."""

    def __init__(self, label: str, stream: TextIO | None = None, every_s: float = 0.2) -> None:
        self._stream = stream if stream is not None else sys.stderr
        try:
            self.enabled = self._stream is not None and self._stream.isatty()
        except (OSError, ValueError, AttributeError):
            self.enabled = False
        self.label, self._every_s, self._last, self._shown = label, every_s, 0.0, False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if not self.enabled or (now - self._last < self._every_s and done < total):
            return
        self._last = now
        percent = f" ({100 * done // total}%)" if total else ""
        self._write(f"\r{self.label}: {megabytes(done)} of {megabytes(total)}{percent}\x1b[K")

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
            self._shown = True
        except (OSError, ValueError):
            self.enabled = False

    def close(self) -> None:
        if self.enabled and self._shown:
            self._write("\n")
            self._shown = False


def run_cancellable(work: Callable[[threading.Event], T]) -> tuple[T | None, bool]:
    """Run `work(cancel)` on a worker thread; Ctrl+C sets `cancel` and waits for the work to stop.

    Returns (result, interrupted); the work's exception is raised here."""
    cancel = threading.Event()
    box: dict[str, object] = {}

    done = threading.Event()

    def body() -> None:
        try:
            box["value"] = work(cancel)
        except BaseException as exc:  # handed to the main thread
            box["error"] = exc
        finally:
            done.set()

    thread = threading.Thread(target=body, name="qiao-model", daemon=True)
    thread.start()
    interrupted = False
    # A plain sleep, not thread.join(): a KeyboardInterrupt inside join() can leave is_alive() False while the
    # thread still runs (CPython gh-90882), and the command would end mid-rename.
    while not done.is_set():
        try:
            time.sleep(0.05)
        except KeyboardInterrupt:
            if not interrupted:
                say("\ncancelling…")
            interrupted = True
            cancel.set()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("value"), interrupted  # type: ignore[return-value]


def _cancelled(exc: QiaoError) -> int:
    say(f"qiao: {exc}")
    return EXIT_CANCELLED


def _import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from engine.store.installed import ModelStoreCancelled, import_bundle

    progress = ByteProgress(f"importing {Path(args.path).name}")
    return _install(
        lambda cancel: import_bundle(Path(args.path), replace=args.force, progress=progress, cancel=cancel),
        progress,
        (ModelStoreCancelled,),
    )


def _install(job, progress: ByteProgress, cancelled: tuple[type[QiaoError], ...]) -> int:
    """Run an import or download on a worker thread (Ctrl+C cancels it), then say what was installed."""
    try:
        model, _ = run_cancellable(job)
    except cancelled as exc:
        progress.close()
        return _cancelled(exc)
    finally:
        progress.close()
    assert model is not None
    print(f"installed {model.name} ({model.pair_key}, {megabytes(model.size_bytes)}) at {model.path}")
    return 0  # finished before the cancel was seen: it is installed


def _remove(args: argparse.Namespace) -> int:
    from engine.store.installed import installed_models, remove_bundle

    models = [m for m in installed_models(args.model) if m.name == args.name]
    if not models:
        names = ", ".join(sorted({m.name for m in installed_models(args.model)})) or "none"
        raise QiaoError(f"no installed bundle is named {args.name!r} (installed: {names})")
    removable = [m for m in models if m.removable]
    if not removable:
        where = models[0]
        raise QiaoError(
            f"{where.name} at {where.path} is not in the per-user models folder ({where.location}): Qiao removes only "
            "the bundles it installed there"
        )
    model = removable[0]
    if not args.yes and not _confirm(
        f"remove {model.name} ({model.pair_key}, {megabytes(model.size_bytes)}) from {model.path}? [y/N] "
    ):
        return 1
    remove_bundle(model)
    print(f"removed {model.name}")
    return 0


def _confirm(question: str) -> bool:
    stdin = sys.stdin
    try:
        interactive = stdin is not None and stdin.isatty()
    except (OSError, ValueError, AttributeError):
        interactive = False
    if not interactive:
        say("qiao: not removed: add --yes to remove without being asked")
        return False
    sys.stderr.write(question)
    sys.stderr.flush()
    answer = stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        say("not removed")
        return False
    return True


def _download(args: argparse.Namespace) -> int:
    from engine.store.catalogue import catalogue_location, load_catalogue, recommended
    from engine.store.installed import bundle_name, installed_models

    location = args.catalogue or catalogue_location()
    entries = load_catalogue(location)
    have = {m.name for m in installed_models() if m.problem is None}
    installed = {e.id for e in entries if bundle_name(e.model_id) in have}
    if args.list:
        out = Output(sys.stdout)
        best = {e.id for e in recommended(entries)}
        for e in entries:
            mark = "  (installed)" if e.id in installed else ""
            mark += "  (recommended)" if e.id in best else ""
            quality = f"  {e.quality.short()}" if e.quality is not None else ""
            out.write(f"{e.id}  {e.pair_key}  {e.family}{quality}  {megabytes(e.size)}  {e.license}  {e.name}{mark}\n")
        if not entries:
            say(f"the catalogue {location} lists no bundles")
        return 0
    by_id = {e.id: e for e in entries}
    unknown = [i for i in args.ids if i not in by_id]
    if unknown:
        known = ", ".join(by_id) or "none"
        raise QiaoError(f"not in the catalogue: {', '.join(unknown)} (it has: {known})")
    if args.ids:
        chosen = [by_id[i] for i in dict.fromkeys(args.ids)]
    else:
        chosen = entries if getattr(args, "all", False) else recommended(entries)
    if not args.ids and not args.force:
        for e in chosen:
            if e.id in installed:
                say(f"{e.id} is already installed (--force downloads it again)")
        chosen = [e for e in chosen if e.id not in installed]
        if not chosen:
            return 0
    for entry in chosen:
        code = _download_one(entry, args.force)
        if code:
            return code
    return 0


def _download_one(entry, force: bool) -> int:
    from engine.store.download import DownloadCancelled, download_bundle
    from engine.store.installed import ModelStoreCancelled

    say(f"downloading {entry.id} ({entry.pair_key}, {megabytes(entry.size)}) from {entry.url}")
    progress = ByteProgress(entry.id)
    return _install(
        lambda cancel: download_bundle(entry, progress=progress, cancel=cancel, replace=force),
        progress,
        (DownloadCancelled, ModelStoreCancelled),
    )
