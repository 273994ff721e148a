"""The engine knows no Qt: every runtime module imports, and its commands run, where PySide6 cannot be imported.

Before the composition root (qiao/), engine/cli/main.py imported gui.app to open the window; the engine stayed free of
Qt only because that import happened to be lazy. These tests make it a rule: a real process with PySide6 blocked,
and a scan of every engine module's imports.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "engine"
BUNDLE = ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle"

# Run in a fresh interpreter: block Qt, import all of engine/ but the torch-only build pipeline, run its commands.
NO_QT = """
import importlib, importlib.abc, json, pkgutil, sys

BLOCKED = ("PySide6", "shiboken6")

class NoQt(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked: the engine must not need Qt")
        return None

sys.meta_path.insert(0, NoQt())
try:
    import PySide6  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("the blocker let PySide6 through")

import engine

def fail(name):
    raise ImportError(f"cannot import {name}")

modules = []
for info in pkgutil.walk_packages(engine.__path__, "engine.", onerror=fail):
    if info.name == "engine.convert" or info.name.startswith("engine.convert."):
        continue  # the model-build pipeline needs torch (qiao[build]), never Qt either: test_no_gui_import covers it
    importlib.import_module(info.name)
    modules.append(info.name)

from engine.cli.main import main

bundle = sys.argv[1]
codes = [
    main(["translate", "--model", bundle, "--beams", "1", "Thank you very much."]),
    main(["tokenize", "--model", bundle]),
    main(["model", "verify", bundle]),
]
qt = sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED)
print(json.dumps({"modules": modules, "codes": codes, "qt": qt}), file=sys.stderr)
"""


def test_engine_imports_and_runs_without_pyside6():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", NO_QT, str(BUNDLE)],
        cwd=ROOT,
        env=env,
        input='"Hello world."\n',
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["codes"] == [0, 0, 0], proc.stderr
    assert report["qt"] == []
    assert {
        "engine.cli.main",
        "engine.pipeline.translator",
        "engine.cli.selftest",
        "engine.families.marian.tokenizer",
    } <= set(report["modules"])
    translated, ids, verified = proc.stdout.splitlines()
    assert translated.strip()
    assert json.loads(ids)[-1] == 0  # source ids end in </s>
    assert "OK" in verified


def _imported_modules(path: Path) -> list[str]:
    """Every module name an import statement in `path` names, however deeply nested (a lazy import counts too)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Call) and _callee(node) in {"import_module", "__import__"} and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                names.append(first.value)
    return names


def _callee(call: ast.Call) -> str:
    return getattr(call.func, "attr", getattr(call.func, "id", ""))


def test_no_engine_module_imports_the_gui_or_qt():
    """engine/ (the build pipeline included) never imports gui, qiao (the composition root above it) or Qt."""
    offenders = []
    for path in sorted(ENGINE.rglob("*.py")):
        for name in _imported_modules(path):
            if name.split(".")[0] in {"gui", "qiao", "PySide6", "shiboken6"}:
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []


def test_the_scan_sees_a_lazy_gui_import(tmp_path):
    """The scan itself: a function-level `from gui.app import run`, the very import engine/cli/main.py once had."""
    module = tmp_path / "lazy.py"
    module.write_text("def f():\n    from gui.app import run\n    return run\n", encoding="utf-8")
    assert "gui.app" in _imported_modules(module)
