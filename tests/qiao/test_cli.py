"""The composition root's `qiao` command: no command opens the window, everything else reaches the engine."""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.errors import QiaoError
from qiao.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def window(monkeypatch):
    """gui.app.run replaced: the model folders it was asked to open, one per call."""
    calls: list[str | None] = []

    def fake_run(model_dir: str | None = None, request=None, *, background: bool = False) -> int:
        calls.append(model_dir)
        return 0

    monkeypatch.setattr("gui.app.run", fake_run)
    return calls


def test_no_command_opens_the_window(window):
    assert main([]) == 0
    assert main(["--model", "/opt/models/en-zh"]) == 0
    assert window == [None, "/opt/models/en-zh"]


def test_a_command_reaches_the_engine_not_the_window(window, monkeypatch, capsys, bundle_dir):
    assert main(["model", "verify", str(bundle_dir)]) == 0
    assert "OK" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b'"Hello world."\n'), encoding="utf-8"))
    assert main(["--model", str(bundle_dir), "tokenize"]) == 0
    assert json.loads(capsys.readouterr().out)[-1] == 0  # the source ids, ending in </s>
    assert window == []


def test_model_management_is_the_engines(window, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("QIAO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("QIAO_MODEL_DIR", raising=False)
    monkeypatch.setattr("engine.store.locate.SOURCE_ROOT", tmp_path / "checkout")
    assert main(["model", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert window == []


def test_self_test_is_the_engines(window, monkeypatch):
    seen = []
    monkeypatch.setattr("engine.cli.selftest.run_self_test", lambda model: seen.append(model) or 0)
    assert main(["--self-test", "--model", "/m"]) == 0
    assert seen == ["/m"] and window == []


def test_argument_mistakes_are_still_usage_errors(window, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--bogus"])
    assert exc.value.code == 2 and "unrecognized arguments: --bogus" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["--self-test", "translate", "Hello"])
    assert exc.value.code == 2 and "--self-test takes no command" in capsys.readouterr().err
    assert window == []


def test_a_window_that_fails_to_start_says_why_in_one_line(monkeypatch, capsys):
    def broken(model_dir=None, request=None, *, background=False):
        raise QiaoError("the settings folder is gone")

    monkeypatch.setattr("gui.app.run", broken)
    assert main([]) == 1
    assert capsys.readouterr().err == "qiao: the settings folder is gone\n"


def test_engine_cli_alone_never_opens_the_window(window, capsys):
    from engine.cli.main import main as engine_main

    with pytest.raises(SystemExit) as exc:
        engine_main([])
    assert exc.value.code == 2 and "python -m qiao" in capsys.readouterr().err
    assert window == []


def test_help_describes_the_product(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "Without a command, opens the app." in " ".join(capsys.readouterr().out.split())


def test_python_m_qiao_runs_a_command(bundle_dir):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "qiao", "model", "verify", str(bundle_dir)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "OK" in proc.stdout


def test_the_console_script_is_the_composition_root():
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    module, _, name = project["project"]["scripts"]["qiao"].partition(":")
    assert getattr(importlib.import_module(module), name) is main
    assert "qiao*" in project["tool"]["setuptools"]["packages"]["find"]["include"]
