"""No source file is silently left out by the linter or the test collector (both skip folders named like build
output — `build`, `dist`, `venv` — by default: the model pipeline once lived in engine/build/ and was never linted).

Without the build extra (a venv made with only `.[test]`) a module that needs it skips itself at collection with
`pytest.importorskip`; that is said, not silent, so it counts, but only for the build extra's own libraries."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUILD_EXTRA = ("torch", "transformers", "onnx", "sentencepiece", "optimum", "safetensors", "sacrebleu")
_SKIPPED = re.compile(r"SKIPPED \[\d+\] (tests/\S+?\.py):\d+: could not import '([\w.]+)'")


def _tracked(pattern: str) -> set[str]:
    try:
        out = subprocess.run(["git", "ls-files", pattern], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return set(out.stdout.split())


def test_ruff_checks_every_tracked_python_file():
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed beside this Python (pip install -e '.[dev]')")
    out = subprocess.run([str(ruff), "check", "--show-files", "."], cwd=ROOT, capture_output=True, text=True)
    checked = {str(Path(line).resolve().relative_to(ROOT)) for line in out.stdout.split() if line.endswith(".py")}
    missing = sorted(_tracked("*.py") - checked)
    assert not missing, f"ruff skips these tracked files: {missing}"


def test_pytest_collects_every_test_module():
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-rs", "-m", "", "-p", "no:cacheprovider", "tests"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    collected = {line.split("::")[0] for line in out.stdout.splitlines() if "::" in line}
    modules = {p for p in _tracked("tests/*.py") if Path(p).name.startswith("test_")}
    without_extra = {  # skipped because a build-extra library is really absent here
        m[1]
        for m in map(_SKIPPED.match, out.stdout.splitlines())
        if m and (lib := m[2].split(".")[0]) in BUILD_EXTRA and importlib.util.find_spec(lib) is None
    }
    missing = sorted(modules - collected - without_extra)
    assert not missing, f"pytest never collects: {missing}"
