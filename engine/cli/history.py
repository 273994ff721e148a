"""`qiao history`: the translation history the window keeps, from the command line (list, search, show, delete,
clear, export).

It opens the same database as the window (engine.paths.data_dir()/history.sqlite3, or --db), safely while the
window runs (WAL, busy timeout). Reading commands never create the database: without one they say "no history yet".
The history modules are imported only when the command runs, so `qiao`'s start-up does not pay for them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine.cli.io import json_line, say

EXPORT_FORMATS = ("jsonl", "csv", "tsv")
SNIPPET = 48  # characters of source and of output a `list` line shows


def _entry_id(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not an entry id: {value!r} (ids are the numbers `qiao history list` shows)"
        ) from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"not an entry id: {value!r} (ids start at 1)")
    return n


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"{n} is out of range: use 1 or more")
    return n


def _add_db(p: argparse.ArgumentParser, top: bool = False) -> None:
    # As engine.cli.main's --model: given after the action it wins, given before it (qiao history --db X list) stays.
    p.add_argument(
        "--db",
        type=Path,
        metavar="PATH",
        default=None if top else argparse.SUPPRESS,
        help="history database (default: the one the window keeps, in Qiao's data folder)",
    )


def add_history_parser(sub) -> None:
    """The `history` sub-command's parser."""
    hist = sub.add_parser(
        "history",
        help="list, search, show, delete or export the translation history the window keeps",
        description="The translations the window kept (and the user's edits of them). Reading commands never "
        "create the database. Safe to run while the window is open.",
    )
    _add_db(hist, top=True)
    hs = hist.add_subparsers(dest="history_command", metavar="ACTION", required=True)
    ls = hs.add_parser("list", help="the most recent entries, newest first")
    ls.add_argument("--limit", type=_positive, default=20, help="how many (default 20)")
    se = hs.add_parser("search", help="entries whose source or translation hold every word of QUERY")
    se.add_argument("query", metavar="QUERY")
    se.add_argument("--limit", type=_positive, default=20, help="how many (default 20)")
    sh = hs.add_parser("show", help="one entry: source, translation, and the sentences the user changed")
    sh.add_argument("id", type=_entry_id, metavar="ID")
    for p in (ls, se, sh):
        p.add_argument("--json", action="store_true", help="one JSON object per entry, one per line")
    de = hs.add_parser("delete", help="remove entries by id")
    de.add_argument("ids", type=_entry_id, nargs="+", metavar="ID")
    cl = hs.add_parser("clear", help="remove every entry (the translation memory of your edits stays)")
    cl.add_argument("--yes", action="store_true", help="really remove them all")
    ex = hs.add_parser("export", help="write every entry to FILE, oldest first")
    ex.add_argument("file", type=Path, metavar="FILE")
    ex.add_argument(
        "--format", choices=EXPORT_FORMATS, help="jsonl (everything), csv or tsv (default: from FILE's suffix)"
    )
    for p in (ls, se, sh, de, cl, ex):
        _add_db(p)


def default_db() -> Path:
    from engine.paths import data_dir

    return data_dir() / "history.sqlite3"


def run_history(args: argparse.Namespace) -> int:
    """Run one `qiao history` action; 0 when it did what was asked, 1 otherwise (with the reason on stderr)."""
    path = args.db if args.db is not None else default_db()
    action = args.history_command
    if not path.exists():
        if action in ("list", "search"):
            say(f"qiao: no history yet ({path} does not exist)")
            return 0
        if action == "clear":
            say("qiao: no history yet: nothing to clear")
            return 0
        say(f"qiao: no history yet ({path} does not exist)")
        return 1
    from engine.history.store import HistoryStore

    with HistoryStore(path) as store:
        return _ACTIONS[action](store, args)


def _list(store, args) -> int:
    entries = store.recent(limit=args.limit)
    _print_entries(entries, args.json)
    if not entries and not args.json:
        say("qiao: the history is empty")
    return 0


def _search(store, args) -> int:
    entries = store.search(args.query, limit=args.limit)
    _print_entries(entries, args.json)
    if not entries and not args.json:
        say(f"qiao: nothing in the history matches {args.query!r}")
    return 0


def _show(store, args) -> int:
    entry = store.get(args.id)
    if entry is None:
        say(f"qiao: no history entry {args.id} (`qiao history list` shows the ids)")
        return 1
    if args.json:
        from engine.history.export import entry_record

        sys.stdout.write(json_line(entry_record(entry)))
        return 0
    details = [entry.created, entry.pair, entry.model, entry.precision]
    details += [f"beams {entry.beams}"] if entry.beams else []
    details += [entry.variant] if entry.variant else []
    lines = [f"#{entry.id}  " + "  ".join(details), "", "Source:", _indent(entry.source), "", "Translation:"]
    lines.append(_indent(entry.output))
    changed = [(i, s) for i, s in enumerate(entry.sentences) if s.edited is not None or s.chosen is not None]
    if changed:
        lines += ["", "Changed by you:"]
        for i, s in changed:
            lines.append(f"  sentence {i + 1}: {s.source}")
            lines.append(f"    model:  {s.output}")
            if s.chosen is not None:
                lines.append(f"    chosen: {s.chosen}")
            if s.edited is not None:
                lines.append(f"    edited: {s.edited}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _delete(store, args) -> int:
    missing = [i for i in dict.fromkeys(args.ids) if store.get(i) is None]
    deleted = store.delete([i for i in dict.fromkeys(args.ids) if i not in missing])
    if deleted:
        say(f"qiao: deleted {deleted} {'entry' if deleted == 1 else 'entries'}")
    if missing:
        say(f"qiao: no history entry {', '.join(map(str, missing))}")
        return 1
    return 0


def _clear(store, args) -> int:
    count = store.count()
    if not args.yes:
        say(f"qiao: this removes all {count} entries of {store.path}: run again with --yes")
        return 1
    store.clear()
    say(f"qiao: removed {count} {'entry' if count == 1 else 'entries'}")
    return 0


def _export(store, args) -> int:
    from engine.history.export import format_for

    fmt = format_for(args.file, args.format)
    count = store.export(args.file, fmt)
    say(f"qiao: exported {count} {'entry' if count == 1 else 'entries'} to {args.file} ({fmt})")
    return 0


_ACTIONS = {"list": _list, "search": _search, "show": _show, "delete": _delete, "clear": _clear, "export": _export}


def _print_entries(entries, as_json: bool) -> None:
    if as_json:
        from engine.history.export import entry_record

        sys.stdout.write("".join(json_line(entry_record(e)) for e in entries))
        return
    for e in entries:
        edited = any(s.edited is not None or s.chosen is not None for s in e.sentences)
        mark = "  ✎" if edited else ""
        sys.stdout.write(f"{e.id:>5}  {e.created}  {e.pair}  {_snippet(e.source)} → {_snippet(e.output)}{mark}\n")


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines() or [""])
