"""A shared build that fails (the frozen app, tests/packaging/test_frozen_app.py) is reported once: the first test
shows its log, every other test one line pointing there. Before, pytest re-raised the fixture's error for each of
the 11 tests, each with the same 4 KB log."""

from __future__ import annotations

import pytest

from .conftest import ROOT, BuildFailed, BuildOnce

pytest_plugins = ["pytester"]

LOG_LINE = "check_dist: libxcb-icccm.so.4 => not found"

INNER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
import pytest
from tests.packaging.conftest import BuildFailed, BuildOnce

BUILDS = []

def build():
    BUILDS.append(1)
    raise BuildFailed("freeze failed\\n" + {LOG_LINE!r} + "\\n" + "x" * 4000)

@pytest.fixture(scope="module")
def _shared():
    return BuildOnce.run("the frozen app", build)

@pytest.fixture
def report(_shared, request):
    return _shared.get(request)

@pytest.mark.parametrize("n", range(5))
def test_uses_the_build(report, n):
    assert report

def test_built_once():
    assert BUILDS == [1]
"""


def test_a_failing_build_prints_its_log_once(pytester: pytest.Pytester):
    pytester.makepyfile(test_inner=INNER)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rA")
    result.assert_outcomes(errors=5, passed=1)  # set-up errors; the build itself ran once
    out = result.stdout.str()
    # The report body, without -rA's summary: pytest truncates summary lines to the terminal's width, except when
    # the variable CI is set (pytest 8), and then the summary repeats each message whole.
    body, summary = out.split("short test summary info")
    assert body.count(LOG_LINE) == 1  # the log, once
    assert summary.count(LOG_LINE) <= 1  # the first error's own summary line, at most
    pointer = "the frozen app failed; its log is under the first failing test, test_inner.py::test_uses_the_build[0]"
    assert body.count(pointer) == 4  # each later test: one line


def test_a_build_that_works_gives_its_value_to_every_test():
    shared = BuildOnce.run("build", lambda: {"ok": True})
    assert shared.log is None and shared.value == {"ok": True}
    assert shared.get(request=None) == {"ok": True}  # type: ignore[arg-type]


def test_only_build_failures_are_kept():
    """Anything but BuildFailed is a bug in the test code itself and must surface as it is."""

    def broken() -> None:
        raise KeyError("report")

    with pytest.raises(KeyError):
        BuildOnce.run("build", broken)
    assert BuildOnce.run("build", lambda: (_ for _ in ()).throw(BuildFailed("log"))).log == "log"
