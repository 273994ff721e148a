"""`qiao serve --model PATH` is final, as everywhere (engine.store.locate): a path with no bundle, or an unusable one,
is
refused with translate's one-line error, never served from another installed bundle (it took the first one found)."""

from __future__ import annotations

import os
import subprocess
import sys

from engine.api.service import installed_pairs
from engine.cli.main import main
from tests.engine import model_helpers
from tests.engine.api.serving import BUNDLE, ROOT

store = model_helpers.store


def cli(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def imported(capsys):
    code, _, err = cli(capsys, ["model", "import", str(BUNDLE)])
    assert code == 0, err
    assert [p.key for p in installed_pairs()] == ["en-zh"]


def test_serve_refuses_a_model_path_with_no_bundle_as_translate_does(store, capsys, tmp_path):
    imported(capsys)
    typo = str(tmp_path / "typo")
    said = f"qiao: no model bundle at {typo} (given by --model)"
    code, out, err = cli(capsys, ["translate", "--model", typo, "Hello."])
    assert code == 1 and err.splitlines()[0] == said, err
    code, out, err = cli(capsys, ["serve", "--model", typo, "--port", "0"])
    assert code == 1 and out == "", out
    assert err.splitlines()[0] == said and "Traceback" not in err and "listening" not in err, err
    code, _, err = cli(capsys, ["--model", typo, "serve", "--port", "0"])  # the top-level --model too
    assert code == 1 and err.splitlines()[0] == said, err


def test_qiao_model_dir_with_no_bundle_is_refused_too(store, capsys, tmp_path, monkeypatch):
    imported(capsys)
    monkeypatch.setenv("QIAO_MODEL_DIR", str(tmp_path / "nothing"))
    code, _, err = cli(capsys, ["serve", "--port", "0"])
    assert (
        code == 1
        and err.splitlines()[0] == f"qiao: no model bundle at {tmp_path / 'nothing'} (given by QIAO_MODEL_DIR)"
    )


def test_an_unusable_bundle_is_refused_and_a_good_one_is_all_that_is_served(store, capsys, tmp_path):
    imported(capsys)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{}", encoding="utf-8")
    code, out, err = cli(capsys, ["serve", "--model", str(broken), "--port", "0"])
    assert code == 1 and out == "", out
    assert len(err.splitlines()) == 1 and err.startswith(f"qiao: model bundle {broken} cannot be used: "), err
    assert [p.key for p in installed_pairs(str(BUNDLE))] == ["en-zh"]


def test_the_real_command_exits_1_with_one_line_and_no_traceback(store, capsys, tmp_path):
    imported(capsys)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    typo = str(tmp_path / "typo")
    done = subprocess.run(
        [sys.executable, "-m", "qiao", "serve", "--model", typo, "--port", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == "", done
    assert done.stderr.splitlines()[0] == f"qiao: no model bundle at {typo} (given by --model)", done.stderr
    assert "Traceback" not in done.stderr
