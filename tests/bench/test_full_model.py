"""bench/full_model.py in both directions, fast: the checkpoint names the languages of the tokenizer it copies, and
a shrunken copy of it (same code path, tiny layers) goes through the real pipeline to a valid format-4 bundle."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _full_model():
    spec = importlib.util.spec_from_file_location("full_model_fast", ROOT / "bench" / "full_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("direction", "languages"), [("en-zh", ("eng", "zho")), ("zh-en", ("zho", "eng"))])
def test_languages_follow_the_tokenizer(direction, languages, tmp_path):
    full_model = _full_model()
    assert full_model.checkpoint_languages(full_model.TOKENIZER_FROM[direction]) == languages
    assert full_model.checkpoint_languages(tmp_path) == ("eng", "zho")  # no tokenizer_config: the old default
    vocab = full_model.build_vocab(full_model.TOKENIZER_FROM[direction])
    assert len(vocab) == full_model.VOCAB_SIZE and vocab["<pad>"] == full_model.PAD_ID and vocab["</s>"] == 0


@pytest.mark.torch
def test_zh_en_random_checkpoint_builds_a_format_5_marian_bundle(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from engine.bundle.manifest import FORMAT_VERSION, verify_bundle
    from engine.convert.pipeline import build_bundle

    full_model = _full_model()
    small = {"d_model": 32, "encoder_layers": 1, "decoder_layers": 1, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64}
    monkeypatch.setattr(full_model, "OPUS_MT_EN_ZH_CONFIG", {**full_model.OPUS_MT_EN_ZH_CONFIG, **small})
    monkeypatch.setattr(full_model, "MIN_DISTINCT_PER_30", 0.0)  # tiny random layers need not be varied
    ckpt = full_model.build_full_checkpoint(tmp_path / "checkpoint", full_model.TOKENIZER_FROM["zh-en"])
    config = json.loads((ckpt / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert (config["source_lang"], config["target_lang"]) == ("zho", "eng")
    manifest = build_bundle(str(ckpt), tmp_path / "bundle", eval_limit=4, quiet=True, model_id="full-random-zh-en")
    assert (manifest["format_version"], manifest["family"]) == (FORMAT_VERSION, "marian") == (5, "marian")
    pair = verify_bundle(tmp_path / "bundle").pair
    assert pair.key == "zh-en" and pair.variants == ()
    assert manifest["validation"]["eval_set"] == "builtin"  # offline: the Chinese built-in sentences
