"""stage_model: only verified bundles are embedded, one folder per pair, and --int8-only leaves a consistent,
loadable bundle."""

from __future__ import annotations

import json
import shutil

import pytest
import stage_model

from engine.bundle.manifest import load_manifest
from engine.cli.main import main as qiao
from engine.errors import BundleError
from engine.pipeline.translator import Translator
from tests.engine.bundles import zh_en_copy as reversed_copy


def test_full_copy_is_identical(bundle_dir, tmp_path):
    dest = stage_model.stage(bundle_dir, tmp_path)
    assert dest == tmp_path / "opus-mt-en-zh"  # named by the manifest's pair, not by the source folder ("bundle")
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
    assert stage_model.resolve_source("fixture-zh-en").parts[-3:] == ("fixtures", "tiny_marian_zh_en", "bundle")
    assert stage_model.resolve_source(None) == stage_model.DEFAULT


def test_several_bundles_get_one_folder_each_named_by_their_pair(bundle_dir, tmp_path, capsys):
    zh_en = reversed_copy(bundle_dir, tmp_path / "some" / "bundle")
    stage = tmp_path / "stage"
    assert stage_model.main([str(stage), "--model", str(bundle_dir), "--model", str(zh_en), "--int8-only"]) == 0
    assert sorted(p.name for p in stage.iterdir()) == ["opus-mt-en-zh", "opus-mt-zh-en"]
    for name, key in (("opus-mt-en-zh", "en-zh"), ("opus-mt-zh-en", "zh-en")):
        manifest = load_manifest(stage / name)
        assert manifest.pair.key == key and list(manifest.precisions) == ["int8"]
        assert qiao(["model", "verify", str(stage / name)]) == 0
    out = capsys.readouterr().out
    assert out.count("verified") >= 2 and "opus-mt-zh-en (int8;" in out


def test_two_bundles_of_one_pair_are_refused_before_anything_is_staged(bundle_dir, tmp_path):
    twin = shutil.copytree(bundle_dir, tmp_path / "twin")
    with pytest.raises(SystemExit, match="both translate en-zh: embed one per pair"):
        stage_model.main([str(tmp_path / "stage"), "--model", str(bundle_dir), "--model", str(twin)])
    assert not (tmp_path / "stage").exists()


def test_every_bundle_is_checked_before_staging(bundle_dir, tmp_path, capsys):
    stage = tmp_path / "stage"
    assert stage_model.main([str(stage), "--model", str(bundle_dir), "--model", str(tmp_path / "none")]) == 1
    assert f"no model bundle at {tmp_path / 'none'}" in capsys.readouterr().err and not stage.exists()


def test_default_is_en_zh_plus_zh_en_once_built(monkeypatch, tmp_path):
    en_zh, zh_en = tmp_path / "opus-mt-en-zh", tmp_path / "opus-mt-zh-en"
    monkeypatch.setattr(stage_model, "DEFAULT", en_zh)
    monkeypatch.setattr(stage_model, "OPTIONAL", (zh_en,))
    assert stage_model.default_sources() == [en_zh]  # not built yet: en→zh only (its absence is then the error)
    zh_en.mkdir()
    (zh_en / "manifest.json").write_text("{}", encoding="utf-8")
    assert stage_model.default_sources() == [en_zh, zh_en]


def test_a_bergamot_bundle_is_staged_under_its_catalogue_id(bergamot_bundle_dir, zh_en_bundle_dir, tmp_path):
    """A Firefox model embedded in the app has the folder name it has in the catalogue and when downloaded (not
    opus-mt-<pair>, which would pass it off as the opus-mt model); one bundle per pair still holds across families."""
    if not (zh_en_bundle_dir / "manifest.json").is_file():
        pytest.skip("the zh→en fixture bundle is not built")
    stage = tmp_path / "stage"
    assert stage_model.main([str(stage), "--model", str(bergamot_bundle_dir), "--model", str(zh_en_bundle_dir)]) == 0
    assert sorted(p.name for p in stage.iterdir()) == ["firefox-translations-enzh-tiny-synthetic", "opus-mt-zh-en"]
    assert qiao(["--self-test", "--model", str(stage / "firefox-translations-enzh-tiny-synthetic")]) == 0
    with pytest.raises(SystemExit, match="both translate en-zh"):
        stage_model.main([str(tmp_path / "s2"), "--model", str(bergamot_bundle_dir), "--model", "fixture"])


def test_int8_only_keeps_a_bergamot_bundle_loadable(bergamot_bundle_dir, tmp_path):
    dest = stage_model.stage(bergamot_bundle_dir, tmp_path, int8_only=True)
    raw = json.loads((dest / "manifest.json").read_text(encoding="utf-8"))
    assert list(raw["precisions"]) == ["int8"] and not (dest / "fp32").exists()
    translator = Translator(dest)
    assert translator.available_precisions == ("int8",)
    assert (
        translator.translate("Thank you very much.").text
        == Translator(bergamot_bundle_dir).translate("Thank you very much.").text
    )
