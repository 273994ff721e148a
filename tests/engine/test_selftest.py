"""`qiao --self-test`: passes on a good bundle, fails clearly on a broken one, and never needs Qt."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine import selftest
from engine.cli import main
from engine.selftest import PrecisionResult, is_chinese, run_self_test, token_agreement
from tests.engine.bundles import rewrite

ROOT = Path(__file__).resolve().parents[2]


def report(model: Path | str | None) -> tuple[int, str]:
    buf = io.StringIO()
    code = run_self_test(str(model) if model is not None else None, out=buf)
    return code, buf.getvalue()


def int8_only_copy(bundle: Path, dest: Path) -> Path:
    shutil.copytree(bundle, dest)
    shutil.rmtree(dest / "fp32")

    def drop_fp32(raw: dict) -> None:
        raw["precisions"].pop("fp32")
        raw["files"] = {k: v for k, v in raw["files"].items() if not k.startswith("fp32/")}

    rewrite(dest, drop_fp32)  # resealed
    return dest


def test_passes_on_the_fixture_in_both_precisions(bundle_dir):
    code, out = report(bundle_dir)
    assert code == 0, out
    assert "int8:      非常感谢。" in out and "fp32:      非常感谢。" in out
    assert "identical tokens (5/5)" in out
    assert "load " in out and "first token " in out and "total " in out
    assert out.rstrip().endswith("self-test passed")


def test_cli_flag(monkeypatch, capsys, bundle_dir):
    assert main(["--self-test", "--model", str(bundle_dir)]) == 0
    assert "self-test passed" in capsys.readouterr().out
    monkeypatch.setenv("QIAO_MODEL_DIR", str(bundle_dir))
    assert main(["--self-test"]) == 0


def test_cli_flag_takes_no_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--self-test", "translate", "Hello"])
    assert exc.value.code == 2 and "--self-test takes no command" in capsys.readouterr().err


def test_int8_only_bundle_passes_without_comparison(bundle_dir, tmp_path):
    code, out = report(int8_only_copy(bundle_dir, tmp_path / "b"))
    assert code == 0, out
    assert "precisions: int8" in out and "fp32:" not in out and "only INT8 is installed" in out


def test_missing_model_fails_and_says_where_it_looked(tmp_path):
    code, out = report(tmp_path / "nothing")
    assert code == 1
    assert f"searched: {tmp_path / 'nothing'}" in out and "self-test FAILED: no model bundle" in out


def test_damaged_file_is_named(bundle_dir, tmp_path):
    broken = tmp_path / "b"
    shutil.copytree(bundle_dir, broken)
    data = bytearray((broken / "int8" / "decoder.onnx").read_bytes())
    data[-1] ^= 0xFF
    (broken / "int8" / "decoder.onnx").write_bytes(bytes(data))
    code, out = report(broken)
    assert code == 1 and "int8/decoder.onnx: sha256" in out and "FAILED" in out


def fake_runs(monkeypatch, outputs: dict[str, tuple[str, list[int]]]) -> None:
    def fake(bundle, precision, sentence):
        text, tokens = outputs[precision]
        return PrecisionResult(precision, text, tokens, load_ms=1.0, first_token_ms=1.0, total_ms=2.0)

    monkeypatch.setattr(selftest, "_run_precision", fake)


def test_output_that_is_not_chinese_fails(monkeypatch, bundle_dir):
    fake_runs(monkeypatch, {"int8": ("Thank you.", [5, 6]), "fp32": ("非常感谢。", [7, 8])})
    code, out = report(bundle_dir)
    assert code == 1 and "int8: the translation is not Chinese" in out


def test_empty_output_fails(monkeypatch, bundle_dir):
    fake_runs(monkeypatch, {"int8": ("", []), "fp32": ("非常感谢。", [7, 8])})
    code, out = report(bundle_dir)
    assert code == 1 and "int8: the translation is empty" in out


def test_small_int8_difference_is_expected_but_a_large_one_fails(monkeypatch, bundle_dir):
    fake_runs(monkeypatch, {"int8": ("非常感谢!", [1, 2, 3, 4, 9]), "fp32": ("非常感谢。", [1, 2, 3, 4, 5])})
    code, out = report(bundle_dir)
    assert code == 0 and "agreement: 80% of tokens (INT8 differs from FP32 within quantisation noise)" in out
    fake_runs(monkeypatch, {"int8": ("谢谢谢谢谢", [9, 9, 9, 9, 9]), "fp32": ("非常感谢。", [1, 2, 3, 4, 5])})
    code, out = report(bundle_dir)
    assert code == 1 and "INT8 and FP32 disagree beyond quantisation noise (0% < 50%)" in out


def test_helpers():
    assert is_chinese("非常感谢。") and is_chinese("OK，好的谢谢") and is_chinese("𠀀𠀁")
    assert not is_chinese("Thank you。") and not is_chinese("") and not is_chinese("12345")
    # garbage with one stray Han character (what a random-weight model printed) is not Chinese
    assert not is_chinese("zz18618 zz45226 zz28079 zz60536 zz5064字 zz62473")
    assert token_agreement([1, 2, 3], [1, 2, 3]) == 1.0
    assert token_agreement([], []) == 1.0
    assert token_agreement([1, 2], [3, 4]) == 0.0
    assert token_agreement([1, 2, 3, 4], [1, 2, 3, 5]) == 0.75


def test_never_imports_qt(bundle_dir):
    """The frozen app answers --self-test on a machine without a display: no Qt module may be imported."""
    code = (
        "import sys; from engine.cli import main; rc = main(['--self-test', '--model', sys.argv[1]]); "
        "qt = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'gui'))); "
        "print('QT', qt); sys.exit(rc)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(bundle_dir)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "QT []" in proc.stdout
