"""gui.app's QIAO_STARTUP_PROBE: the smoke test's start-up timing marks, written only when asked for."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from .conftest import ROOT


def test_probe_marks_window_then_ready(tmp_path, bundle_dir):
    probe = tmp_path / "startup.txt"
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "QIAO_STARTUP_PROBE": str(probe),
        "QIAO_CONFIG_DIR": str(tmp_path / "config"),
        "QIAO_STATE_DIR": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    started = time.time()
    code = "import sys; from qiao.cli import main; sys.exit(main(['--model', sys.argv[1]]))"
    app = subprocess.Popen([sys.executable, "-c", code, str(bundle_dir)], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (probe.exists() and "ready" in probe.read_text()):
            time.sleep(0.05)
    finally:
        app.terminate()
        app.wait(10)
    marks = dict(line.split() for line in probe.read_text().splitlines())
    assert set(marks) == {"window", "ready"}
    assert started < float(marks["window"]) < time.time() and started < float(marks["ready"]) < time.time()
