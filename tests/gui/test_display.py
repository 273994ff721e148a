"""`qiao` without a usable display says so in one line and exits 1, instead of Qt's abort ("reinstalling the
application may fix this problem", or "xcb-cursor0 is needed" whatever is missing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gui import display
from gui.display import NO_DISPLAY, XCB_LIBRARIES, display_problem, missing_xcb_libraries

ROOT = Path(__file__).resolve().parents[2]


def _all_load(soname: str) -> bool:
    return True


def _never_called(soname: str) -> bool:
    raise AssertionError(f"the X libraries were checked ({soname}) where Qt will not use X11")


@pytest.mark.parametrize(
    ("env", "platform"),
    [
        ({}, "linux"),
        ({"DISPLAY": "", "WAYLAND_DISPLAY": ""}, "linux"),  # set but empty is unset
        ({"XDG_SESSION_TYPE": "x11"}, "freebsd14"),
    ],
)
def test_no_display_gives_the_one_line_hint(env, platform):
    assert display_problem(env, platform, frozen=False, loads=_never_called) == NO_DISPLAY
    assert "\n" not in NO_DISPLAY and "qiao translate" in NO_DISPLAY


@pytest.mark.parametrize(
    ("env", "platform", "frozen"),
    [
        ({"QT_QPA_PLATFORM": "offscreen"}, "linux", False),  # the user chose a platform: Qt's to answer
        ({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ":0"}, "linux", False),
        ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False),  # Wayland: no X libraries needed
        ({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, "linux", False),
        ({"DISPLAY": ":0"}, "linux", True),  # the frozen app bundles the xcb-util libraries
        ({}, "darwin", False),  # macOS and Windows need no DISPLAY
        ({}, "win32", False),
    ],
)
def test_no_check_where_qt_decides_or_no_display_is_needed(env, platform, frozen):
    assert display_problem(env, platform, frozen=frozen, loads=_never_called) is None


def test_x11_with_every_library_is_fine():
    assert display_problem({"DISPLAY": ":0"}, "linux", frozen=False, loads=_all_load) is None


def test_x11_names_the_missing_libraries_and_their_packages():
    absent = {"libxcb-icccm.so.4", "libxcb-keysyms.so.1"}
    problem = display_problem({"DISPLAY": ":1"}, "linux", frozen=False, loads=lambda name: name not in absent)
    assert problem is not None and "\n" not in problem
    assert "libxcb-icccm.so.4 libxcb-keysyms.so.1" in problem
    assert problem.endswith("sudo apt-get install libxcb-icccm4 libxcb-keysyms1)")
    assert "xcb-cursor" not in problem  # not blamed when it is there, unlike Qt's message


def test_missing_libraries_keep_the_table_order():
    order = list(XCB_LIBRARIES)
    absent = {order[5], order[1]}
    assert missing_xcb_libraries(lambda name: name not in absent) == [order[1], order[5]]


def test_the_real_loader_check():
    assert display._loads("libc.so.6") if sys.platform.startswith("linux") else True
    assert not display._loads("libqiao-no-such-library.so.9")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="DISPLAY/WAYLAND_DISPLAY only matter on Linux/BSD")
def test_qiao_without_a_display_exits_1_with_one_line(tmp_path):
    """The real entry point in a fresh process: before the fix Qt aborted (exit 134) with its platform-plugin text.

    `python -m qiao` from this checkout, not the venv's `qiao` script: that one runs whichever tree it was installed
    from."""
    cmd = [sys.executable, "-m", "qiao"]
    env = {k: v for k, v in os.environ.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"}}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.splitlines() == [NO_DISPLAY]
