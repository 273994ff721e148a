"""engine/privacy.py: onnxruntime's telemetry is off in every process that imports `engine`, and no engine session
is created in a process where it could not be turned off. Each case runs in a fresh interpreter (this test run has
the switch on already), with a fresh HOME so onnxruntime's telemetry files would be seen."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import privacy
from engine.privacy import ORT_SWITCH, TELEMETRY_OFF
from tests.conftest import BUNDLE

ROOT = Path(__file__).resolve().parents[2]
TELEMETRY_DIR = Path(".cache") / "Microsoft" / "DeveloperTools"  # where onnxruntime keeps its device id and queue


def run_python(code: str, home: Path, **env: str) -> subprocess.CompletedProcess:
    """`code` in a new interpreter whose environment has none of the telemetry variables unless given in `env`."""
    base = {k: v for k, v in os.environ.items() if k not in TELEMETRY_OFF and not k.startswith("XDG_")}
    full = {**base, "HOME": str(home), "PYTHONPATH": str(ROOT), **env}
    return subprocess.run([sys.executable, "-c", code], env=full, cwd=home, capture_output=True, text=True, timeout=60)


def test_importing_engine_forces_every_switch_on(tmp_path):
    code = f"import os, engine; print(repr({{k: os.environ.get(k) for k in {sorted(TELEMETRY_OFF)!r}}}))"
    proc = run_python(code, tmp_path, **{k: "0" for k in TELEMETRY_OFF})  # a user's "0" does not win
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr(dict.fromkeys(sorted(TELEMETRY_OFF), "1"))


def test_an_engine_session_leaves_no_telemetry_files(tmp_path):
    scorer = str(BUNDLE / "scorer.onnx")
    code = f"from engine.runtime.sessions import create_session; create_session({scorer!r}, threads=1)"
    proc = run_python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == []
    assert not (tmp_path / TELEMETRY_DIR).exists()


@pytest.mark.parametrize(
    "create",
    [
        f"from engine.runtime.sessions import create_session; create_session({str(BUNDLE / 'scorer.onnx')!r})",
        f"from engine.runtime.scorer import TopKScorer; TopKScorer({str(BUNDLE / 'scorer.onnx')!r}, 10, [])",
    ],
    ids=["create_session", "TopKScorer"],
)
def test_no_session_when_onnxruntime_was_imported_first(tmp_path, create):
    proc = run_python(f"import onnxruntime\n{create}", tmp_path)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: onnxruntime was imported before Qiao could switch its telemetry off")
    assert f"{ORT_SWITCH}=1" in last


def test_onnxruntime_imported_first_is_fine_when_the_process_started_with_the_switch(tmp_path):
    create = f"from engine.runtime.sessions import create_session; create_session({str(BUNDLE / 'scorer.onnx')!r})"
    code = f"import onnxruntime\n{create}"
    proc = run_python(code, tmp_path, **{ORT_SWITCH: "1"})
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / TELEMETRY_DIR).exists()


def test_switch_changed_after_engine_import_is_refused(monkeypatch):
    monkeypatch.setenv(ORT_SWITCH, "0")  # someone turned it back off: an onnxruntime loaded now would send telemetry
    assert not privacy.onnxruntime_telemetry_off()
    with pytest.raises(RuntimeError, match=ORT_SWITCH):
        privacy.require_applied()
    monkeypatch.setenv(ORT_SWITCH, "1")
    privacy.require_applied()
