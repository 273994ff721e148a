"""The popup on a real X server with openbox, opened by the real global shortcut (x11_popup_check.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.skipif(not (shutil.which("Xvfb") and shutil.which("xdotool")), reason="needs Xvfb and xdotool")
def test_popup_after_the_real_shortcut_takes_focus_and_closes_like_a_popup(xserver):
    if not shutil.which("openbox"):
        pytest.skip("needs a window manager (openbox) for focus behaviour")
    env = {**os.environ, "DISPLAY": xserver, "QT_QPA_PLATFORM": "xcb"}
    proc = subprocess.run(
        [sys.executable, str(HERE / "x11_popup_check.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=HERE.parents[2],
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen == {
        "shortcut": "ok",
        "shown_and_active": True,
        "request": "Thank you very much.",
        "channel": "popup",
        "text": "非常感谢。",
        "near_mouse": True,
        "esc_hides": True,
        "click_elsewhere_hides": True,
        "pinned_stays": True,
    }
