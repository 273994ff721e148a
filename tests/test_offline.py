"""The promise "Qiao never opens a network connection", checked the way it once failed: by system calls, for 30 s.

The CLI (`qiao translate`) and the window (`qiao`, offscreen) run from source at the same time, each with a fresh
empty HOME, no XDG_* variables, the network present and the telemetry variables set to "0" in their environment (so
only Qiao's own switch, engine/privacy.py, can turn them off), under `strace -f -e trace=socket,connect,sendto`
for 30 s after their ONNX Runtime sessions exist (onnxruntime's telemetry looked its host up ~10, ~15 and ~24 s
after start). Any inet socket, any inet or port-53 address, and any file under HOME outside Qiao's own folders fails.
The frozen app gets the same check in packaging/smoke_test.py.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest

from .conftest import BUNDLE, FIXTURE_DIR

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "packaging"))  # appended: a folder of scripts, nothing there may shadow a module
from offline_trace import OPTED_IN, WATCH_S, audit, fresh_home_env, strace_problem, traced  # noqa: E402

SENTENCE = "Thank you very much."  # a corpus.tsv row the fixture model translates exactly (its self-test sentence)

# The CLI's real entry point, kept alive WATCH_S after it printed (its sessions were created and used), then a
# canary Unix socket: seeing it in the trace proves the trace covered the whole run.
CLI = f"""
import socket, sys, time
from engine.cli.main import main
rc = main(["translate", {SENTENCE!r}])
sys.stdout.flush()
time.sleep({WATCH_S})
socket.socket(socket.AF_UNIX).close()
sys.exit(rc)
"""
# `qiao` with no arguments (the window), as the console script runs it; closing its stdin quits it the way Ctrl+Q
# does (a queued QApplication.quit()), so whatever it writes on the way out is audited too.
WINDOW = """
import sys, threading
from PySide6.QtCore import QMetaObject, Qt
from PySide6.QtWidgets import QApplication

def quit_on_eof():
    sys.stdin.read()
    QMetaObject.invokeMethod(QApplication.instance(), "quit", Qt.ConnectionType.QueuedConnection)

threading.Thread(target=quit_on_eof, daemon=True).start()
from qiao.cli import main
sys.exit(main())
"""


def _expected_translation(sentence: str) -> str:
    """The Simplified Chinese the fixture model was trained on for `sentence` (NFKC: full/half-width agnostic)."""
    with open(FIXTURE_DIR / "corpus.tsv", encoding="utf-8", newline="") as fh:
        chinese = next(row[1] for row in csv.reader(fh, delimiter="\t") if row[0] == sentence)
    return unicodedata.normalize("NFKC", chinese)


def _env(home: Path) -> dict[str, str]:
    env = fresh_home_env(dict(os.environ), home)
    env.update(OPTED_IN)  # this test run has them on (tests/conftest.py): here only the app's own switch can help
    env.update({"QIAO_MODEL_DIR": str(BUNDLE), "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"})
    return env


def _wait_ready(probe: Path, proc: subprocess.Popen, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        text = probe.read_text(encoding="utf-8") if probe.exists() else ""
        if "ready" in text or "failed" in text:
            return text
        time.sleep(0.1)
    return probe.read_text(encoding="utf-8") if probe.exists() else ""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, dict]:
    """Run the CLI and the window side by side under strace; returns what each did."""
    problem = strace_problem()
    if problem:
        pytest.skip(f"cannot watch system calls: {problem}")
    work = tmp_path_factory.mktemp("offline")
    homes = {name: work / f"home-{name}" for name in ("cli", "window")}
    for home in homes.values():
        home.mkdir()
    logs = {name: work / f"{name}.strace" for name in homes}
    probe = work / "window-probe.txt"
    window_env = {**_env(homes["window"]), "QIAO_STARTUP_PROBE": str(probe)}
    # cwd = HOME: a library that drops files in the working directory is caught by the same audit
    cli = subprocess.Popen(
        traced([sys.executable, "-c", CLI], logs["cli"]),
        cwd=homes["cli"], env=_env(homes["cli"]), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    window = subprocess.Popen(
        traced([sys.executable, "-c", WINDOW], logs["window"]),
        cwd=homes["window"], env=window_env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip
    result: dict[str, dict] = {}
    try:
        marks = _wait_ready(probe, window, 60)
        ready_at = time.monotonic()
        cli_out, cli_err = cli.communicate(timeout=WATCH_S + 90)
        time.sleep(max(0.0, ready_at + WATCH_S - time.monotonic()))  # the window, too, watched 30 s once loaded
        window_out, _ = window.communicate("", timeout=30)  # EOF on stdin: quit like Ctrl+Q
        result["cli"] = {"rc": cli.returncode, "stdout": cli_out, "stderr": cli_err}
        result["window"] = {"rc": window.returncode, "marks": marks, "output": window_out}
    finally:
        for proc in (cli, window):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(10)
    for name, home in homes.items():
        result[name].update(audit(logs[name], home), log=logs[name].read_text(encoding="utf-8", errors="replace"))
    return result


def test_cli_translates_with_no_network_socket_and_no_stray_file(runs):
    cli = runs["cli"]
    assert cli["rc"] == 0, cli["stderr"]
    assert unicodedata.normalize("NFKC", cli["stdout"].strip()) == _expected_translation(SENTENCE)
    assert "socket(AF_UNIX" in cli["log"], "the trace did not cover the whole run (no canary socket)"
    assert cli["inet_calls"] == [], f"{cli['inet_call_count']} network system calls"
    assert cli["stray_files"] == [], "files written under HOME outside Qiao's folders"
    assert cli["qiao_files"], "Qiao wrote nothing into the fresh HOME: was it the HOME in use?"


def test_window_loads_the_model_with_no_network_socket_and_no_stray_file(runs):
    window = runs["window"]
    assert "ready" in window["marks"], f"the window did not load the model: {window['marks']!r} {window['output']}"
    assert window["rc"] == 0, window["output"]
    assert window["inet_calls"] == [], f"{window['inet_call_count']} network system calls"
    assert window["stray_files"] == [], "files written under HOME outside Qiao's folders"
    assert window["qiao_files"], "Qiao wrote nothing into the fresh HOME: was it the HOME in use?"
