"""The frozen entry point: `qiao.cli.main`, with usable standard streams even in a windowed executable."""

from __future__ import annotations

import sys

import pytest
import qiao_launcher


def test_missing_streams_are_replaced(monkeypatch):
    """A windowed executable starts with sys.stdout/stderr/stdin = None; a print must never crash the GUI."""
    monkeypatch.setattr(sys, "platform", "linux")  # the non-Windows fallback: devnull
    monkeypatch.setattr(sys, "argv", ["qiao"])  # the window (no command)
    for name in ("stdout", "stderr", "stdin"):
        monkeypatch.setattr(sys, name, None)
    qiao_launcher._ensure_streams()
    assert all(getattr(sys, n) is not None for n in ("stdout", "stderr", "stdin"))
    print("ignored")
    assert sys.stdin.read() == ""


def test_present_streams_are_left_alone(monkeypatch):
    streams = (sys.stdout, sys.stderr, sys.stdin)
    qiao_launcher._ensure_streams()
    assert (sys.stdout, sys.stderr, sys.stdin) == streams


def test_a_command_with_a_closed_stream_keeps_it_closed(monkeypatch):
    """`qiao translate … >&-` must end in the CLI's "standard output is closed" error, not print into devnull."""
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setattr(sys, "argv", ["qiao", "translate", "Hello"])
    monkeypatch.setattr(sys, "stdout", None)
    qiao_launcher._ensure_streams()
    assert sys.stdout is None


def test_the_launcher_runs_the_composition_root(monkeypatch):
    """The frozen app starts where the console script does: qiao.cli.main (window or command), not engine.cli.main."""
    import runpy

    monkeypatch.setattr("qiao.cli.main", lambda argv=None: 7)
    with pytest.raises(SystemExit) as exc:
        runpy.run_path(qiao_launcher.__file__, run_name="__main__")
    assert exc.value.code == 7
