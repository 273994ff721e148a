"""Every bench process and child runs with onnxruntime's and Hugging Face's telemetry off: the peers (optimum's
ONNX Runtime sessions, transformers) are measured outside `engine`, so the switch must be in each process's
environment before any of them loads (engine/privacy.py says why it cannot be set later)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.privacy import TELEMETRY_OFF

BENCH = Path(__file__).resolve().parents[2] / "bench"
ENTRY_SCRIPTS = ["run", "worker", "floor", "engine_checks", "prepare", "full_model"]

# Load a bench script as `python bench/NAME.py` would (its folder first on sys.path), without running its main().
LOAD = """
import importlib.util, os, sys
sys.path.insert(0, {bench!r})
spec = importlib.util.spec_from_file_location("bench_entry", {path!r})
spec.loader.exec_module(importlib.util.module_from_spec(spec))
print(sorted((k, os.environ.get(k)) for k in {keys!r}))
print(sorted(m for m in ("onnxruntime", "optimum", "transformers", "torch", "ctranslate2") if m in sys.modules))
"""


@pytest.mark.parametrize("name", ENTRY_SCRIPTS)
def test_bench_script_switches_telemetry_off_before_any_runtime_loads(name, tmp_path):
    code = LOAD.format(bench=str(BENCH), path=str(BENCH / f"{name}.py"), keys=sorted(TELEMETRY_OFF))
    env = {**os.environ, **dict.fromkeys(TELEMETRY_OFF, "0")}  # a user's "0" does not win
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    switches, loaded = proc.stdout.strip().splitlines()
    assert switches == repr(sorted((k, "1") for k in TELEMETRY_OFF))
    assert loaded == "[]"  # nothing that could phone home was imported before the switch (all are imported lazily)


def test_every_bench_child_gets_the_switches_in_its_environment(tmp_path):
    """run.py's children get them from `_env` itself, not only by inheriting run.py's own environment."""
    code = f"""
import argparse, os, sys
sys.path.insert(0, {str(BENCH)!r})
import run
for key in {sorted(TELEMETRY_OFF)!r}:
    os.environ[key] = "0"
env = run._env(argparse.Namespace(ort_spinning="0", bundle_args=""))
print(sorted((k, env[k]) for k in {sorted(TELEMETRY_OFF)!r}))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == repr(sorted(TELEMETRY_OFF.items()))
