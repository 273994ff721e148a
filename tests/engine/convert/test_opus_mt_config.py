"""Every checkpoint Qiao builds for tests and the bench carries opus-mt's real generation config (issue #26): a bench
or a test on a config nobody ships measures nothing users get. Read back from the committed fixtures, their bundles,
the bench's full-size checkpoint builder and its cache refresh."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from engine.bundle.manifest import load_manifest
from engine.families.marian.converter.opus_mt_config import carries_opus_mt_config, opus_mt_generation_config
from engine.search.decoding import GenerationParams

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = [ROOT / "tests" / "fixtures" / "tiny_marian", ROOT / "tests" / "fixtures" / "tiny_marian_zh_en"]


def _bench_module(name: str):
    spec = importlib.util.spec_from_file_location(f"{name}_config_test", ROOT / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_config_is_opus_mt_en_zh_s():
    """What Helsinki-NLP/opus-mt-en-zh's generation_config.json says (its pad id is 65000)."""
    config = opus_mt_generation_config(65000)
    assert config["renormalize_logits"] is True
    assert config["bad_words_ids"] == [[65000]] and config["forced_eos_token_id"] == 0
    assert config["num_beams"] == 4 and config["decoder_start_token_id"] == 65000 and config["max_length"] == 512


@pytest.mark.parametrize("folder", FIXTURES, ids=lambda f: f.name)
def test_fixture_checkpoints_and_bundles_carry_it(folder):
    checkpoint = folder / "checkpoint"
    found = json.loads((checkpoint / "generation_config.json").read_text(encoding="utf-8"))
    assert carries_opus_mt_config(checkpoint, found["pad_token_id"], found["eos_token_id"])
    manifest = load_manifest(folder / "bundle")
    assert manifest.generation["renormalize_logits"] is True
    assert manifest.graphs["scorer"]["renormalize"] is True  # the scorer normalises over the allowed tokens
    params = GenerationParams.from_generation_config(manifest.generation)
    assert params.renormalize and params.num_beams == 4 and params.forced_eos_id == params.eos_id


def test_the_bench_builds_its_checkpoints_with_it():
    full_model = _bench_module("full_model")
    assert opus_mt_generation_config(full_model.PAD_ID, full_model.EOS_ID) == full_model.GENERATION_CONFIG


def test_a_cached_bench_checkpoint_gets_the_config(tmp_path, monkeypatch):
    """A checkpoint cached before the config changed keeps its weights and gets opus-mt's generation config; the
    bundle built from it is stale then (the fingerprint reads the generation config)."""
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    prepare = _bench_module("prepare")
    ckpt = tmp_path / "checkpoint"
    ckpt.mkdir()
    (ckpt / "model.safetensors").write_bytes(b"weights")
    (ckpt / "vocab.json").write_text("{}", encoding="utf-8")
    (ckpt / "config.json").write_text("{}", encoding="utf-8")
    old = {k: v for k, v in prepare.GENERATION_CONFIG.items() if k != "renormalize_logits"}
    (ckpt / "generation_config.json").write_text(json.dumps(old), encoding="utf-8")
    before = prepare.fingerprint("bundle", ckpt)
    assert not carries_opus_mt_config(ckpt, prepare.PAD_ID, prepare.EOS_ID)
    assert prepare.ensure_checkpoint(tmp_path, tmp_path) == ckpt
    assert carries_opus_mt_config(ckpt, prepare.PAD_ID, prepare.EOS_ID)
    assert (ckpt / "model.safetensors").read_bytes() == b"weights"
    assert prepare.fingerprint("bundle", ckpt) != before
