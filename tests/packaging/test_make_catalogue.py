"""make_catalogue: reproducible zips whose single top folder is the bundle id, and a catalogue.json that says
exactly what was zipped (size, sha256) in the format engine/store/catalogue.py reads."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

import make_catalogue
import pytest

from engine.bundle.manifest import verify_bundle
from tests.engine.bundles import zh_en_copy

URL = "https://github.com/example/qiao/releases/download/v1.0.0"
KEYS = [
    "id",
    "name",
    "source",
    "target",
    "model_id",
    "url",
    "size",
    "sha256",
    "license",
    "precisions",
    "family",
    "installed_size",
]


@pytest.fixture
def published(bundle_dir, tmp_path) -> tuple[Path, dict]:
    out = tmp_path / "release"
    zh_en = zh_en_copy(bundle_dir, tmp_path / "zh-en" / "bundle")
    assert make_catalogue.main([str(bundle_dir), str(zh_en), "--out", str(out), "--url-base", URL + "/"]) == 0
    return out, json.loads((out / "catalogue.json").read_text(encoding="utf-8"))


def test_catalogue_schema(published):
    out, catalogue = published
    assert list(catalogue) == ["format", "bundles"] and catalogue["format"] == 1
    en_zh, zh_en = catalogue["bundles"]
    assert list(en_zh) == KEYS
    assert en_zh["id"] == "opus-mt-en-zh" and zh_en["id"] == "opus-mt-zh-en"
    assert en_zh["name"] == "English → Chinese (opus-mt-en-zh)" and zh_en["name"] == "Chinese → English (opus-mt-zh-en)"
    assert (en_zh["source"], en_zh["target"], zh_en["source"], zh_en["target"]) == ("en", "zh", "zh", "en")
    assert en_zh["model_id"] == "qiao/tiny-marian-fixture" and en_zh["license"] == "CC-BY-4.0"
    assert en_zh["url"] == f"{URL}/qiao-model-opus-mt-en-zh.zip"  # one slash, whatever --url-base ended with
    assert en_zh["precisions"] == ["int8", "fp32"]
    for entry in catalogue["bundles"]:
        assert isinstance(entry["size"], int) and re.fullmatch(r"[0-9a-f]{64}", entry["sha256"])
    assert sorted(p.name for p in out.iterdir()) == [
        "catalogue.json",
        "qiao-model-opus-mt-en-zh.zip",
        "qiao-model-opus-mt-zh-en.zip",
    ]  # no temporary file left behind
    if os.name == "posix":  # readable by everyone, like any published file (not mkstemp's 0600)
        assert {oct(p.stat().st_mode & 0o777) for p in out.iterdir()} == {"0o644"}


def test_size_and_sha256_are_the_zips(published):
    out, catalogue = published
    for entry in catalogue["bundles"]:
        data = (out / entry["url"].rsplit("/", 1)[1]).read_bytes()
        assert entry["size"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()


def test_zip_has_one_top_folder_named_by_id_and_unpacks_to_a_verified_bundle(published, bundle_dir, tmp_path):
    out, _ = published
    with zipfile.ZipFile(out / "qiao-model-opus-mt-en-zh.zip") as zf:
        names = zf.namelist()
        assert {n.split("/")[0] for n in names} == {"opus-mt-en-zh"}
        files = sorted(n.removeprefix("opus-mt-en-zh/") for n in names if not n.endswith("/"))
        assert files == sorted(p.relative_to(bundle_dir).as_posix() for p in bundle_dir.rglob("*") if p.is_file())
        assert all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in zf.infolist())
        zf.extractall(tmp_path / "installed")
    manifest = verify_bundle(tmp_path / "installed" / "opus-mt-en-zh")
    assert manifest.pair.key == "en-zh"


def test_only_the_files_the_manifest_lists_are_zipped(bundle_dir, tmp_path):
    bundle = shutil.copytree(bundle_dir, tmp_path / "bundle")
    (bundle / ".DS_Store").write_bytes(b"junk")
    (bundle / "notes").mkdir()
    (bundle / "notes" / "todo.txt").write_text("x", encoding="utf-8")
    entry = make_catalogue.package_bundle(bundle, tmp_path, URL)
    with zipfile.ZipFile(tmp_path / "qiao-model-opus-mt-en-zh.zip") as zf:
        assert not any("DS_Store" in n or "notes" in n for n in zf.namelist())
    assert entry.id == "opus-mt-en-zh"


def test_the_same_bundle_always_gives_the_same_bytes(bundle_dir, tmp_path):
    first = make_catalogue.package_bundle(bundle_dir, tmp_path, URL)
    data = (tmp_path / "qiao-model-opus-mt-en-zh.zip").read_bytes()
    copy = shutil.copytree(bundle_dir, tmp_path / "copy" / "elsewhere")  # another folder, fresh times
    for path in copy.rglob("*"):
        os.utime(path, (2_000_000_000, 2_000_000_000))
        if path.is_file():
            path.chmod(0o600)
    (tmp_path / "again").mkdir()
    second = make_catalogue.package_bundle(copy, tmp_path / "again", URL)
    assert (tmp_path / "again" / "qiao-model-opus-mt-en-zh.zip").read_bytes() == data
    assert first == second


def test_a_damaged_bundle_is_never_published(bundle_dir, tmp_path, capsys):
    broken = shutil.copytree(bundle_dir, tmp_path / "broken")
    (broken / "tokenizer.json").write_text("{}", encoding="utf-8")
    out = tmp_path / "out"
    assert make_catalogue.main([str(broken), "--out", str(out), "--url-base", URL]) == 1
    assert "tokenizer.json" in capsys.readouterr().err and not (out / "catalogue.json").exists()


def test_bad_arguments_are_refused(bundle_dir, tmp_path, capsys):
    out = tmp_path / "out"
    assert make_catalogue.main([str(bundle_dir), "--out", str(out), "--url-base", "http://x"]) == 2
    assert "https://" in capsys.readouterr().err
    assert make_catalogue.main([str(tmp_path / "none"), "--out", str(out), "--url-base", URL]) == 1
    assert "no model bundle at" in capsys.readouterr().err
    twin = shutil.copytree(bundle_dir, tmp_path / "twin")
    assert make_catalogue.main([str(bundle_dir), str(twin), "--out", str(out), "--url-base", URL]) == 1
    assert "are both opus-mt-en-zh" in capsys.readouterr().err and not out.exists()  # refused before any zip


def test_engine_reads_it(published):
    """engine/store/catalogue.py (another branch until merged) parses what this writes."""
    catalogue = pytest.importorskip("engine.store.catalogue", reason="engine.store.catalogue is not on this branch yet")
    out, raw = published
    entries = catalogue.load_catalogue(out / "catalogue.json")
    assert [e.id for e in entries] == [b["id"] for b in raw["bundles"]]
    assert [e.sha256 for e in entries] == [b["sha256"] for b in raw["bundles"]]


def test_family_quality_speed_and_installed_size_are_published(bundle_dir, tmp_path):
    """A bundle whose manifest records quality and speed carries them; opus-mt's published score is filled in; the
    engine reads them all back."""
    from engine.store.catalogue import load_catalogue
    from tests.engine.store.direction_models import model_copy

    measured = model_copy(tmp_path / "measured", "qiao/measured", score=90.0, speed=321.0)
    opus = zh_en_copy(model_copy(tmp_path / "opus", "Helsinki-NLP/opus-mt-zh-en"), tmp_path / "opus-zh-en")
    out = tmp_path / "out"
    assert make_catalogue.main([str(measured), str(opus), "--out", str(out), "--url-base", URL]) == 0
    en_zh, zh_en = json.loads((out / "catalogue.json").read_text(encoding="utf-8"))["bundles"]
    assert list(en_zh) == [*KEYS, "quality", "speed"] and en_zh["family"] == "marian"
    assert en_zh["quality"]["score"] == 90.0 and en_zh["speed"]["tokens_per_s"] == 321.0
    listed = sum(f["size"] for f in verify_bundle(measured).raw["files"].values())
    assert en_zh["installed_size"] == listed + (measured / "manifest.json").stat().st_size
    assert zh_en["quality"]["score"] == 84.39 and "comet-results.md" in zh_en["quality"]["source"]
    assert "speed" not in zh_en, "none measured: left out, never null"
    entries = load_catalogue(out / "catalogue.json")
    assert entries[0].quality is not None and entries[0].quality.score == 90.0
    assert entries[0].speed is not None and entries[0].installed_size == en_zh["installed_size"]


def test_ids_are_opus_mt_by_pair_for_marian_and_the_installed_name_for_other_families():
    from types import SimpleNamespace

    from engine.languages import default_pair

    pair = default_pair("en", "zh")
    marian = SimpleNamespace(family="marian", model_id="qiao/anything", pair=pair)
    firefox = SimpleNamespace(family="bergamot", model_id="mozilla/firefox-translations-enzh-base-memory", pair=pair)
    assert make_catalogue.catalogue_id(marian) == "opus-mt-en-zh"
    assert make_catalogue.catalogue_id(firefox) == "firefox-translations-enzh-base-memory"
