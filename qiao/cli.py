"""The `qiao` command: no command opens the window (gui.app.run); --self-test and the commands go to the engine.

Three app-level forms are handled here, before the engine's parser, because they talk to the app, not the engine:
`qiao popup [TEXT]` (the quick-translate popup with TEXT, or with the selection/clipboard), `qiao translate --app
TEXT` (TEXT translated in the window), and `--background` (autostart: start in the tray). Each is handed to the Qiao
already running when there is one (exit 0 at once), else it starts the app with that request.
"""

from __future__ import annotations

import argparse
import sys

from engine.cli.main import is_command, parse_args, run_command, run_guarded
from gui.desktop.instance_protocol import MAX_TEXT  # the running Qiao's limit; that module loads no Qt

DESCRIPTION = (
    "Qiao (桥): offline English→Chinese translator. Without a command, opens the app. "
    "`qiao popup [TEXT]` opens the quick-translate popup (no TEXT: the selection or the clipboard); "
    "`qiao translate --app TEXT` translates TEXT in the app's window; both reach the Qiao already running."
)
BACKGROUND = "--background"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `qiao` console script and the frozen app; returns the exit status."""
    return run_guarded(lambda: _dispatch(argv))


def _dispatch(argv: list[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    background = BACKGROUND in _before_command(words)
    if background:
        words.remove(BACKGROUND)
    app_request = _app_request(words)
    if app_request is not None:
        model, action, text = app_request
        return _open_app(model, action, text, background=background)
    args = parse_args(words, DESCRIPTION)
    return run_command(args) if is_command(args) else open_window(args, background=background)


def _before_command(words: list[str]) -> list[str]:
    """The global options: the words before the first one that is not an option (nor --model's value)."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word == "--model":
            skip = True
        elif not word.startswith("-"):
            break
        out.append(word)
    return out


def _app_request(words: list[str]) -> tuple[str | None, str, str | None] | None:
    """(model, action, text) for `popup` and `translate --app`; None for everything else (the engine's)."""
    head = _before_command(words)
    rest = words[len(head) :]
    if not rest or rest[0] not in ("popup", "translate"):
        return None
    if rest[0] == "translate" and "--app" not in rest[1:]:
        return None
    parser = argparse.ArgumentParser(prog="qiao", description=DESCRIPTION)
    parser.add_argument("--model", metavar="DIR", help="model bundle folder, when this starts the app")
    sub = parser.add_subparsers(dest="command", required=True)
    popup = sub.add_parser("popup", help="the quick-translate popup of the running Qiao (or start it)")
    popup.add_argument("text", nargs="?", help="text to translate (default: the selection, else the clipboard)")
    tr = sub.add_parser("translate", help="with --app: translate TEXT in the app's window")
    tr.add_argument("--app", action="store_true", required=True, help="hand the text to the app")
    tr.add_argument("text", nargs="?", help="text to translate (default: stdin)")
    args = parser.parse_args(words)
    text = args.text
    if args.command == "translate" and text is None:
        if sys.stdin is None or sys.stdin.isatty():
            parser.error("translate --app: give the TEXT (or pipe it on stdin)")
        text = sys.stdin.read(MAX_TEXT + 1)
    if text is not None and len(text) > MAX_TEXT:
        parser.error(f"the text is longer than {MAX_TEXT} characters; use translate-file for long texts")
    if args.command == "translate" and not text.strip():
        parser.error("translate --app: the text is empty")
    return args.model, args.command, text


def _open_app(model: str | None, action: str, text: str | None, *, background: bool = False) -> int:
    """Hand the request to the running Qiao or start one with it. Qt is only imported here."""
    from gui.app import run
    from gui.desktop.single_instance import InstanceRequest

    return run(model, InstanceRequest(action, text), background=background)


def open_window(args: argparse.Namespace, *, background: bool = False) -> int:
    """The app, with `qiao --model DIR` if given; a running Qiao is raised instead. Qt is only imported here."""
    from gui.app import run

    return run(args.model, background=background)
