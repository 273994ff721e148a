"""`qiao --self-test`: passes on a good bundle of either direction, fails clearly on a broken one, tests every
installed bundle when no --model is given, and never needs Qt."""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.bundle.manifest import load_manifest
from engine.cli import selftest
from engine.cli.main import main
from engine.cli.selftest import PrecisionResult, in_script, run_self_test, token_agreement
from tests.engine.bundles import rewrite
from tests.engine.bundles import zh_en_copy as as_zh_en

ROOT = Path(__file__).resolve().parents[3]
ZH_EN = ROOT / "tests" / "fixtures" / "tiny_marian_zh_en" / "bundle"


def report(model: Path | str | None, sentence: str | None = None) -> tuple[int, str]:
    buf = io.StringIO()
    code = run_self_test(str(model) if model is not None else None, sentence=sentence, out=buf)
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
    assert "pair:      en-zh (English → Chinese)" in out and "sentence:  Thank you very much." in out
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


def fake_runs(monkeypatch, outputs: dict[str, tuple[str, list[int]]], asked: list | None = None) -> None:
    def fake(bundle, precision, sentence):
        if asked is not None:
            asked.append((Path(bundle).name, precision, sentence))
        text, tokens = outputs[precision]
        return PrecisionResult(precision, text, tokens, load_ms=1.0, first_token_ms=1.0, total_ms=2.0)

    monkeypatch.setattr(selftest, "_run_precision", fake)


def test_output_that_is_not_chinese_fails(monkeypatch, bundle_dir):
    fake_runs(monkeypatch, {"int8": ("Thank you.", [5, 6]), "fp32": ("非常感谢。", [7, 8])})
    code, out = report(bundle_dir)
    assert code == 1 and "int8: the translation is not Chinese: 'Thank you.'" in out


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
    assert in_script("非常感谢。", "han") and in_script("OK，好的谢谢", "han") and in_script("𠀀𠀁", "han")
    assert not in_script("Thank you。", "han") and not in_script("", "han") and not in_script("12345", "han")
    # garbage with one stray Han character (what a random-weight model printed) is not Chinese
    assert not in_script("zz18618 zz45226 zz28079 zz60536 zz5064字 zz62473", "han")
    assert in_script("Thank you very much.", "latin") and in_script("A café, naïve.", "latin")
    assert not in_script("", "latin") and not in_script("12345 ...", "latin")
    # an English target must hold no Han at all: an echoed or half-translated Chinese source has failed
    assert not in_script("Thank you 非常", "latin") and not in_script("非常感谢。", "latin")
    assert not in_script("Спасибо большое", "latin")  # letters, but not Latin ones
    with pytest.raises(ValueError, match="unknown script"):
        in_script("x", "cyrillic")
    assert token_agreement([1, 2, 3], [1, 2, 3]) == 1.0
    assert token_agreement([], []) == 1.0
    assert token_agreement([1, 2], [3, 4]) == 0.0
    assert token_agreement([1, 2, 3, 4], [1, 2, 3, 5]) == 0.75


def test_never_imports_qt(bundle_dir):
    """The frozen app answers --self-test on a machine without a display: no Qt module may be imported."""
    code = (
        "import sys; from engine.cli.main import main; rc = main(['--self-test', '--model', sys.argv[1]]); "
        "qt = sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6', 'gui'))); "
        "print('QT', qt); sys.exit(rc)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(bundle_dir)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "QT []" in proc.stdout


def test_reverse_pair_uses_its_own_sentence_and_wants_english(monkeypatch, bundle_dir, tmp_path):
    zh_en = as_zh_en(bundle_dir, tmp_path / "zh-en")
    asked: list = []
    fake_runs(monkeypatch, {"int8": ("Thank you very much.", [1, 2]), "fp32": ("Thank you very much.", [1, 2])}, asked)
    code, out = report(zh_en)
    assert code == 0, out
    assert "pair:      zh-en (Chinese → English)" in out and "sentence:  非常感谢。" in out
    assert {sentence for _, _, sentence in asked} == {"非常感谢。"}
    fake_runs(monkeypatch, {"int8": ("非常感谢。", [1, 2]), "fp32": ("Thank you 非常.", [1, 2])})
    code, out = report(zh_en)
    assert code == 1
    assert "int8: the translation is not English: '非常感谢。'" in out
    assert "fp32: the translation is not English: 'Thank you 非常.'" in out


def test_the_real_en_zh_model_in_a_zh_en_manifest_fails(bundle_dir, tmp_path):
    """No fakes: the fixture answers in Chinese (or nothing), which a zh→en bundle must not pass."""
    code, out = report(as_zh_en(bundle_dir, tmp_path / "zh-en"))
    assert code == 1 and "sentence:  非常感谢。" in out
    assert "the translation is not English" in out or "the translation is empty" in out, out


def test_sentence_override(monkeypatch, bundle_dir):
    asked: list = []
    fake_runs(monkeypatch, {"int8": ("你好。", [1]), "fp32": ("你好。", [1])}, asked)
    code, out = report(bundle_dir, sentence="Hello.")
    assert code == 0 and "sentence:  Hello." in out and {s for _, _, s in asked} == {"Hello."}


def test_passes_on_the_zh_en_fixture():
    code, out = report(ZH_EN)
    assert code == 0, out
    assert "pair:      zh-en (Chinese → English)" in out and "sentence:  非常感谢。" in out
    assert out.rstrip().endswith("self-test passed")


# ---- every installed bundle (no --model) ---------------------------------------------------------------------------


@pytest.fixture
def roots(monkeypatch, tmp_path) -> list[Path]:
    """Two empty model folders standing in for the places engine.store.locate searches."""
    from engine.store.locate import SearchRoot

    folders = [tmp_path / "beside-program", tmp_path / "per-user"]
    for folder in folders:
        folder.mkdir()
    monkeypatch.delenv("QIAO_MODEL_DIR", raising=False)
    roots = [SearchRoot(folders[0], "program"), SearchRoot(folders[1], "user")]
    monkeypatch.setattr("engine.store.installed.search_roots", lambda explicit=None: roots)
    return folders


def test_without_model_every_installed_bundle_is_tested(roots, bundle_dir, monkeypatch):
    shutil.copytree(bundle_dir, roots[0] / "opus-mt-en-zh")
    as_zh_en(bundle_dir, roots[1] / "opus-mt-zh-en")
    (roots[1] / "not-a-bundle").mkdir()
    asked: list = []

    def fake(bundle, precision, sentence):
        asked.append((Path(bundle).name, precision, sentence))
        text = "Thank you very much." if Path(bundle).name == "opus-mt-zh-en" else "非常感谢。"
        return PrecisionResult(precision, text, [1, 2], load_ms=1.0, first_token_ms=1.0, total_ms=2.0)

    monkeypatch.setattr(selftest, "_run_precision", fake)
    code, out = report(None)
    assert code == 0, out
    assert "bundles:   2 installed, each tested" in out
    assert "result:    en-zh passed" in out and "result:    zh-en passed" in out
    assert sorted(asked) == [
        ("opus-mt-en-zh", "fp32", "Thank you very much."),
        ("opus-mt-en-zh", "int8", "Thank you very much."),
        ("opus-mt-zh-en", "fp32", "非常感谢。"),
        ("opus-mt-zh-en", "int8", "非常感谢。"),
    ]
    assert out.rstrip().endswith("self-test passed")


def test_one_failing_bundle_fails_the_whole_test_and_is_named(roots, bundle_dir):
    shutil.copytree(bundle_dir, roots[0] / "opus-mt-en-zh")  # passes for real
    as_zh_en(bundle_dir, roots[1] / "opus-mt-zh-en")  # answers in Chinese: fails for real
    code, out = report(None)
    assert code == 1
    assert "result:    en-zh passed" in out and "result:    zh-en FAILED" in out
    assert "self-test FAILED: zh-en: " in out and "en-zh: " not in out.split("self-test FAILED")[1]


def test_a_damaged_bundle_among_good_ones_is_named_by_its_folder(roots, bundle_dir):
    shutil.copytree(bundle_dir, roots[0] / "opus-mt-en-zh")
    broken = roots[1] / "broken-copy"
    shutil.copytree(bundle_dir, broken)
    (broken / "tokenizer.json").write_text("{}", encoding="utf-8")
    code, out = report(None)
    assert code == 1 and "result:    en-zh passed" in out and "result:    broken-copy FAILED" in out
    assert "self-test FAILED: broken-copy: " in out and "tokenizer.json: size 2 bytes" in out


def test_the_same_folder_found_twice_is_tested_once(roots, bundle_dir):
    shutil.copytree(bundle_dir, roots[0] / "opus-mt-en-zh")
    roots[1].rmdir()
    roots[1].symlink_to(roots[0])  # a frozen onedir app: _internal/models and _MEIPASS/models are one folder
    code, out = report(None)
    assert code == 0, out
    assert "bundles:" not in out and out.count("model:     ") == 1


def test_nothing_installed_says_where_it_looked(roots, monkeypatch):
    monkeypatch.setattr(
        "engine.store.installed.bundle_search_paths", lambda explicit=None: [roots[0] / "opus-mt-en-zh"]
    )
    code, out = report(None)
    assert code == 1
    assert f"searched: {roots[0] / 'opus-mt-en-zh'}" in out and "self-test FAILED: no model bundle found" in out


def test_model_dir_override_is_final(roots, bundle_dir, monkeypatch):
    shutil.copytree(bundle_dir, roots[0] / "opus-mt-en-zh")
    monkeypatch.setenv("QIAO_MODEL_DIR", str(roots[1] / "missing"))
    code, out = report(None)
    assert code == 1 and "no model bundle at" in out and "opus-mt-en-zh" not in out


def test_model_store_is_used_when_it_exists(roots, bundle_dir, monkeypatch, tmp_path):
    """engine.store.installed lists the installed bundles; the self-test takes its list as it is."""
    import types

    listed = shutil.copytree(bundle_dir, tmp_path / "elsewhere" / "opus-mt-en-zh")
    shutil.copytree(bundle_dir, roots[0] / "not-listed")
    entries = [types.SimpleNamespace(path=listed), listed, types.SimpleNamespace(manifest=load_manifest(listed))]
    monkeypatch.setattr("engine.store.installed.installed_models", lambda: entries)
    code, out = report(None)
    assert code == 0, out
    assert f"model:     {listed}" in out and "not-listed" not in out and out.count("model:     ") == 1
