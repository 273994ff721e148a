"""packaging/build.sh passes every --model to stage_model.py and the staged folder to qiao.spec.

Run on a copy of the script in a scratch tree with a stand-in $PYTHON that records its arguments, so nothing is
frozen and the checkout's build/ and dist/ are left alone.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SCRIPTS

pytestmark = pytest.mark.skipif(sys.platform == "win32" or not shutil.which("bash"), reason="build.sh needs bash")

RECORDER = """#!/bin/sh
printf '%s\\n' "$*" >> "$(dirname "$0")/calls.txt"
"""


def run_build(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    (tmp_path / "packaging").mkdir(parents=True)
    shutil.copy2(SCRIPTS / "build.sh", tmp_path / "packaging" / "build.sh")
    python = tmp_path / "python"
    python.write_text(RECORDER, encoding="utf-8")
    python.chmod(0o755)
    proc = subprocess.run(
        ["bash", str(tmp_path / "packaging" / "build.sh"), *args, "--dist", str(tmp_path / "dist")],
        env={"PATH": "/usr/bin:/bin", "PYTHON": str(python)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    calls = tmp_path / "calls.txt"
    return proc, calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []


def test_every_model_is_staged_and_the_stage_is_frozen(tmp_path):
    proc, calls = run_build(tmp_path, "--model", "fixture", "--model=fixture-zh-en", "--int8-only")
    assert proc.returncode == 0, proc.stderr
    stage = [c for c in calls if c.startswith("packaging/stage_model.py")]
    assert stage == ["packaging/stage_model.py build/stage --model fixture --model fixture-zh-en --int8-only"]
    assert any("packaging/qiao.spec -- --model-stage build/stage" in c for c in calls)


def test_no_model_argument_stages_the_defaults(tmp_path):
    proc, calls = run_build(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "packaging/stage_model.py build/stage" in calls  # stage_model.py picks en→zh (+ zh→en when built)


def test_model_none_freezes_without_a_stage(tmp_path):
    proc, calls = run_build(tmp_path, "--model", "none")
    assert proc.returncode == 0, proc.stderr
    assert not any("stage_model.py" in c or "--model-stage" in c for c in calls)
    proc, _ = run_build(tmp_path / "again", "--model", "none", "--model", "fixture")
    assert proc.returncode == 2 and "--model none cannot be combined" in proc.stderr


def test_a_catalogue_is_passed_to_stage_model_instead_of_models(tmp_path):
    """The release freezes with the best-quality bundle of each direction its catalogue lists (stage_model.py
    chooses); naming models as well would leave it unclear which are embedded."""
    proc, calls = run_build(tmp_path, "--catalogue", "build/release-models/catalogue.json", "--int8-only")
    assert proc.returncode == 0, proc.stderr
    stage = [c for c in calls if c.startswith("packaging/stage_model.py")]
    assert stage == ["packaging/stage_model.py build/stage --catalogue build/release-models/catalogue.json --int8-only"]
    assert any("packaging/qiao.spec -- --model-stage build/stage" in c for c in calls)
    proc, calls = run_build(tmp_path / "again", "--catalogue=c.json", "--model", "fixture")
    assert proc.returncode == 2 and "--catalogue chooses the models itself" in proc.stderr
    assert not any("stage_model.py" in c or "PyInstaller " in c for c in calls)
