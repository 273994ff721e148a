"""measure_speed: a bundle's measured translation speed is recorded in its resealed manifest, which still verifies,
and the store then shows it."""

from __future__ import annotations

import json
import shutil

import measure_speed

from engine.bundle.manifest import verify_bundle
from engine.store.installed import describe


def test_the_speed_is_measured_and_recorded_in_the_manifest(bundle_dir, tmp_path, capsys):
    bundle = shutil.copytree(bundle_dir, tmp_path / "bundle")
    before = {p.name: p.read_bytes() for p in bundle.rglob("*") if p.is_file() and p.name != "manifest.json"}
    assert measure_speed.main([str(bundle), "--threads", "1", "--machine", "test machine"]) == 0
    raw = json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
    speed = raw["speed"]
    assert speed["tokens_per_s"] > 0 and speed["threads"] == 1 and speed["precision"] == "int8"
    assert speed["machine"] == "test machine"
    verify_bundle(bundle)  # resealed: still a valid bundle
    after = {p.name: p.read_bytes() for p in bundle.rglob("*") if p.is_file() and p.name != "manifest.json"}
    assert after == before, "only the manifest changes"
    model = describe(bundle, "user")
    assert model.speed is not None and model.speed.tokens_per_s == speed["tokens_per_s"]
    assert "test machine" in capsys.readouterr().out


def test_a_damaged_bundle_is_not_measured(bundle_dir, tmp_path, capsys):
    bundle = shutil.copytree(bundle_dir, tmp_path / "bundle")
    (bundle / "tokenizer.json").write_text("{}", encoding="utf-8")
    assert measure_speed.main([str(bundle)]) == 1
    assert "tokenizer.json" in capsys.readouterr().err
    assert "speed" not in json.loads((bundle / "manifest.json").read_text(encoding="utf-8"))
