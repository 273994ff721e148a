"""stage_model --catalogue: the installers embed the best-quality bundle of each direction a release's catalogue
lists, chosen as a new install chooses (engine.store.catalogue.recommended), byte for byte the catalogue's zips.

The releases here are built offline by packaging/make_catalogue.py from the tiny fixture bundles, relabelled with
the model ids the release publishes (so the scores are the ones Qiao knows: opus-mt-en-zh 82.44, opus-mt-zh-en 84.39,
Firefox en→zh base-memory 86.31 / base 85.56, zh→en base 86.22 / base-memory 86.04).
"""

from __future__ import annotations

import json
import re
import shutil
import zipfile
from pathlib import Path

import make_catalogue
import pytest
import stage_model

from engine.bundle.manifest import load_manifest, verify_bundle
from engine.cli.main import main as qiao
from engine.store.catalogue import load_catalogue
from tests.engine.bundles import rewrite

URL = "https://github.com/example/qiao/releases/download/v1.0.0"
FIREFOX = ("base-memory", "base")


def _as(source: Path, dest: Path, model_id: str) -> Path:
    """A copy of `source` that says it is `model_id` (resealed)."""
    shutil.copytree(source, dest)
    rewrite(dest, lambda raw: raw["model"].update(id=model_id))
    return dest


def _release(tmp_path: Path, bundles: list[Path]) -> Path:
    """make_catalogue on `bundles`, as the release's models job runs it; returns catalogue.json."""
    out = tmp_path / "release-models"
    assert make_catalogue.main([*map(str, bundles), "--out", str(out), "--url-base", URL]) == 0
    return out / "catalogue.json"


@pytest.fixture
def opus_mt(bundle_dir, zh_en_bundle_dir, tmp_path) -> list[Path]:
    """The two opus-mt bundles of a release (the models job's $MODEL_DIR and $MODEL_DIR_ZH_EN)."""
    if not (zh_en_bundle_dir / "manifest.json").is_file():
        pytest.skip("the zh→en fixture bundle is not built")
    return [
        _as(bundle_dir, tmp_path / "opus" / "opus-mt-en-zh", "Helsinki-NLP/opus-mt-en-zh"),
        _as(zh_en_bundle_dir, tmp_path / "opus" / "opus-mt-zh-en", "Helsinki-NLP/opus-mt-zh-en"),
    ]


@pytest.fixture
def firefox(bergamot_bundle_dir, bergamot_zh_en_bundle_dir, tmp_path) -> list[Path]:
    """The four converted Firefox bundles (the firefox-models job's output, in its folders' order)."""
    out = []
    for pair, source in (("enzh", bergamot_bundle_dir), ("zhen", bergamot_zh_en_bundle_dir)):
        for architecture in FIREFOX:
            model_id = f"mozilla/firefox-translations-{pair}-{architecture}"
            out.append(_as(source, tmp_path / "firefox" / model_id.split("/")[1], model_id))
    return sorted(out)


def test_with_the_firefox_models_each_direction_gets_its_best_one(opus_mt, firefox, tmp_path, capsys):
    """en→zh: base-memory (86.31) over base and opus-mt; zh→en: base (86.22) over base-memory (86.04): no family
    or architecture is preferred by name, only the published score."""
    catalogue = _release(tmp_path, [*opus_mt, *firefox])
    stage = tmp_path / "stage"
    assert stage_model.main([str(stage), "--catalogue", str(catalogue)]) == 0
    assert sorted(p.name for p in stage.iterdir()) == [
        "firefox-translations-enzh-base-memory",
        "firefox-translations-zhen-base",
    ]  # named by catalogue id, nothing else left in the stage (the unpacked zips are gone)
    for name, model_id, pair in (
        ("firefox-translations-enzh-base-memory", "mozilla/firefox-translations-enzh-base-memory", "en-zh"),
        ("firefox-translations-zhen-base", "mozilla/firefox-translations-zhen-base", "zh-en"),
    ):
        manifest = verify_bundle(stage / name)
        assert (manifest.model_id, manifest.pair.key, manifest.family) == (model_id, pair, "bergamot")
    out = capsys.readouterr().out
    assert "firefox-translations-enzh-base-memory for en-zh: COMET-22 86.31" in out
    assert "firefox-translations-zhen-base for zh-en: COMET-22 86.22" in out
    # the bytes the catalogue offers: the staged bundle is the zip's content, file for file
    entry = next(e for e in load_catalogue(catalogue) if e.id == "firefox-translations-enzh-base-memory")
    with zipfile.ZipFile(stage_model.archive_of(entry, catalogue)) as zf:
        for rel in load_manifest(stage / entry.id).raw["files"]:
            assert zf.read(f"{entry.id}/{rel}") == (stage / entry.id / rel).read_bytes()


def test_the_choice_is_the_apps_own(opus_mt, firefox, tmp_path):
    """What the installer embeds per direction is what `qiao model download` without ids would fetch
    (engine.store.catalogue.recommended), whatever order the catalogue lists the bundles in."""
    from engine.store.catalogue import recommended

    for i, order in enumerate(([*opus_mt, *firefox], [*reversed(firefox), *reversed(opus_mt)])):
        catalogue = _release(tmp_path / f"order-{i}", order)
        chosen = {e.pair_key: e.id for e in stage_model.best_in_catalogue(catalogue)}
        assert chosen == {e.pair_key: e.id for e in recommended(load_catalogue(catalogue))}
        assert chosen == {"en-zh": "firefox-translations-enzh-base-memory", "zh-en": "firefox-translations-zhen-base"}


def test_without_the_firefox_models_opus_mt_is_embedded(opus_mt, tmp_path):
    catalogue = _release(tmp_path, opus_mt)
    stage = tmp_path / "stage"
    assert stage_model.main([str(stage), "--catalogue", str(catalogue), "--int8-only"]) == 0
    assert sorted(p.name for p in stage.iterdir()) == ["opus-mt-en-zh", "opus-mt-zh-en"]
    for name in ("opus-mt-en-zh", "opus-mt-zh-en"):
        assert list(load_manifest(stage / name).precisions) == ["int8"]
        assert qiao(["model", "verify", str(stage / name)]) == 0


def test_a_zip_that_is_not_the_listed_one_is_refused(opus_mt, tmp_path):
    catalogue = _release(tmp_path, opus_mt)
    archive = catalogue.parent / "qiao-model-opus-mt-en-zh.zip"
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("opus-mt-en-zh/extra.txt", "not in the release")
    stage = tmp_path / "stage"
    with pytest.raises(SystemExit, match=r"is not the archive catalogue\.json lists"):
        stage_model.main([str(stage), "--catalogue", str(catalogue)])
    assert not any(p.name.startswith("opus-mt") for p in stage.iterdir())
    archive.unlink()
    with pytest.raises(SystemExit, match=r"qiao-model-opus-mt-en-zh\.zip is not beside"):
        stage_model.main([str(tmp_path / "stage2"), "--catalogue", str(catalogue)])


def test_a_zip_holding_another_bundle_than_listed_is_refused(opus_mt, tmp_path):
    """Size and sha256 match the catalogue (it was written so), but the bundle inside is another model."""
    catalogue = _release(tmp_path, opus_mt)
    raw = json.loads(catalogue.read_text(encoding="utf-8"))
    raw["bundles"][0]["model_id"] = "Helsinki-NLP/opus-mt-en-zh-other"
    catalogue.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(SystemExit, match=re.escape("holds opus-mt-en-zh (Helsinki-NLP/opus-mt-en-zh, en-zh), but")):
        stage_model.main([str(tmp_path / "stage"), "--catalogue", str(catalogue)])


def test_catalogue_and_models_are_not_given_together(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        stage_model.main([str(tmp_path / "stage"), "--catalogue", "c.json", "--model", "fixture"])
    assert exc.value.code == 2 and "not both" in capsys.readouterr().err


def test_an_unreadable_catalogue_says_so(tmp_path, capsys):
    (tmp_path / "catalogue.json").write_text('{"format": 1, "bundles": [{"id": "x"}]}', encoding="utf-8")
    assert stage_model.main([str(tmp_path / "stage"), "--catalogue", str(tmp_path / "catalogue.json")]) == 1
    assert "bundles[0].name" in capsys.readouterr().err
