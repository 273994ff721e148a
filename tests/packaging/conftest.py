"""The packaging scripts live in packaging/, a folder of scripts (never an importable package: a top-level
`packaging` would shadow PyPA's). Tests import them as plain modules from that folder."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "packaging"
if str(SCRIPTS) not in sys.path:
    sys.path.append(str(SCRIPTS))  # appended: nothing there may shadow an installed module


class BuildFailed(Exception):
    """An expensive shared build (the frozen app) failed; the message is its log."""


class BuildOnce:
    """The result of a build that many tests share, with its failure reported once.

    A fixture that raises is re-raised by pytest for every test that uses it, each time with the whole message: one
    broken freeze printed the same 4 KB log 11 times. A module-scoped fixture returns `BuildOnce.run(build)` instead
    of raising, and the function-scoped fixture the tests use calls `.get(request)`: the first test fails with the
    log, every later one with a single line naming that test.
    """

    def __init__(self, what: str, value: object = None, log: str | None = None) -> None:
        self.what = what
        self.value = value
        self.log = log
        self.shown_by: str | None = None

    @classmethod
    def run(cls, what: str, build: Callable[[], object]) -> BuildOnce:
        """Run `build` once; a BuildFailed is kept (not raised) so that it can be reported once."""
        try:
            return cls(what, value=build())
        except BuildFailed as exc:
            return cls(what, log=str(exc))

    def get(self, request: pytest.FixtureRequest) -> Any:
        """The build's value; or the failure: the whole log for the first test that asks, one line afterwards."""
        if self.log is None:
            return self.value
        if self.shown_by is None:
            self.shown_by = request.node.nodeid
            pytest.fail(f"{self.what} failed:\n{self.log}", pytrace=False)
        pytest.fail(f"{self.what} failed; its log is under the first failing test, {self.shown_by}", pytrace=False)
