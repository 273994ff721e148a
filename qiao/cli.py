"""The `qiao` command: no command opens the window (gui.app.run); --self-test and the commands go to the engine."""

from __future__ import annotations

import argparse

from engine.cli import is_command, parse_args, run_command, run_guarded

DESCRIPTION = "Qiao (桥): offline English→Chinese translator. Without a command, opens the app."


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `qiao` console script and the frozen app; returns the exit status."""
    return run_guarded(lambda: _dispatch(argv))


def _dispatch(argv: list[str] | None) -> int:
    args = parse_args(argv, DESCRIPTION)
    return run_command(args) if is_command(args) else open_window(args)


def open_window(args: argparse.Namespace) -> int:
    """The app, with `qiao --model DIR` if given. Qt is only imported when the window is wanted."""
    from gui.app import run

    return run(args.model)
