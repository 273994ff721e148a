"""The frozen entry point: `engine.cli.main`, with usable standard streams even in a windowed executable."""

from __future__ import annotations

import sys

import qiao_launcher


def test_missing_streams_are_replaced(monkeypatch):
    """A windowed executable starts with sys.stdout/stderr/stdin = None; a print must never crash the GUI."""
    monkeypatch.setattr(sys, "platform", "linux")  # the non-Windows fallback: devnull
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
