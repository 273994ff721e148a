"""stage_model: only verified bundles are embedded, and --int8-only leaves a consistent, loadable bundle."""

from __future__ import annotations

import json
import shutil

import pytest
import stage_model

from engine.cli import main as qiao
from engine.errors import BundleError
from engine.manifest import load_manifest
from engine.translator import Translator


def test_full_copy_is_identical(bundle_dir, tmp_path):
    dest = stage_model.stage(bundle_dir, tmp_path)
    assert dest == tmp_path / "opus-mt-en-zh"
    assert load_manifest(dest).raw == load_manifest(bundle_dir).raw
    assert sorted(p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()) == sorted(
        p.relative_to(bundle_dir).as_posix() for p in bundle_dir.rglob("*") if p.is_file()
    )


def test_int8_only_drops_fp32_consistently(bundle_dir, tmp_path, capsys):
    dest = stage_model.stage(bundle_dir, tmp_path, int8_only=True)
    raw = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    assert list(raw["precisions"]) == ["int8"]
    assert not any(f.startswith("fp32/") for f in raw["files"]) and not (dest / "fp32").exists()
    assert qiao(["model", "verify", str(dest)]) == 0  # every listed file present with the right hash
    translator = Translator(dest)
    assert translator.available_precisions == ("int8",)
    assert translator.translate("Thank you very much.").text == "非常感谢。"
    with pytest.raises(BundleError, match="no fp32 model"):
        translator.set_precision("fp32")
    assert qiao(["--self-test", "--model", str(dest)]) == 0
    assert "only INT8 is installed" in capsys.readouterr().out


def test_a_damaged_source_is_never_staged(bundle_dir, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(bundle_dir, broken)
    (broken / "tokenizer.json").write_text("{}", encoding="utf-8")
    with pytest.raises(BundleError, match=r"tokenizer\.json"):
        stage_model.stage(broken, tmp_path / "stage")
    assert stage_model.main([str(tmp_path / "stage2"), "--model", str(broken)]) == 1


def test_missing_model_says_how_to_get_one(tmp_path, capsys):
    assert stage_model.main([str(tmp_path / "stage"), "--model", str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert "no model bundle" in err and "qiao model build" in err and "--model fixture" in err


def test_fixture_shortcut():
    assert stage_model.resolve_source("fixture") == stage_model.FIXTURE
    assert stage_model.resolve_source(None) == stage_model.DEFAULT
