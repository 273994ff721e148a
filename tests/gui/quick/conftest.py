"""Quick-translate fixtures: a clean clipboard, and a real X server with a window manager for the X11 shortcut
test."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator

import pytest


@pytest.fixture
def clipboard(qapp):
    from PySide6.QtGui import QGuiApplication

    board = QGuiApplication.clipboard()
    board.clear()
    yield board
    board.clear()


def _wait_for_x(display: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    env = {**os.environ, "DISPLAY": display}
    while time.monotonic() < deadline:
        if subprocess.run(["xdotool", "getmouselocation"], env=env, capture_output=True).returncode == 0:
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def xserver() -> Iterator[str]:
    """A private Xvfb (its display number chosen by the server) with openbox running; skipped without them."""
    missing = [b for b in ("Xvfb", "xdotool") if shutil.which(b) is None]
    if missing:
        pytest.skip(f"needs {' and '.join(missing)}")
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1024x768x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as f:
        number = f.readline().strip()
    display = f":{number}"
    wm = None
    try:
        assert number and _wait_for_x(display), "Xvfb did not start"
        if shutil.which("openbox"):
            wm = subprocess.Popen(
                ["openbox"],
                env={**os.environ, "DISPLAY": display},
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(0.5)
        yield display
    finally:
        for proc in (wm, xvfb):
            if proc is not None:
                proc.terminate()
                proc.wait(10)
