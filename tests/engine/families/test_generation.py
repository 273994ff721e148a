"""Generation specs: Marian's read from its manifest (start from pad, end on </s>, `>>xx<<` before the source of a
multi-target model, none for a one-target one), and the spec's own rules."""

from __future__ import annotations

import pytest

from engine import families
from engine.bundle.manifest import load_manifest
from engine.families.base import TARGET_BY_SOURCE_TOKEN, TARGET_FIXED, GenerationSpec
from engine.pipeline.translator import Translator


def test_marian_en_zh_starts_from_pad_and_chooses_its_target_by_a_source_token(bundle_dir):
    manifest = load_manifest(bundle_dir)
    spec = families.of(manifest).generation_spec(manifest)
    gen = manifest.generation
    assert spec.decoder_start_id == spec.pad_id == gen["pad_token_id"]  # Marian's rule
    assert spec.end_ids == (gen["eos_token_id"],) and spec.eos_id == 0
    assert spec.forced_eos_id == gen["forced_eos_token_id"] == 0
    assert spec.target_language == TARGET_BY_SOURCE_TOKEN


def test_marian_zh_en_has_no_target_token(zh_en_bundle_dir):
    manifest = load_manifest(zh_en_bundle_dir)
    spec = families.of(manifest).generation_spec(manifest)
    assert spec.target_language == TARGET_FIXED
    assert spec.source_id(7) is None


def test_the_translator_puts_the_variant_token_before_the_source_only_when_the_spec_says_so(bundle_dir, monkeypatch):
    tr = Translator(bundle_dir, precision="fp32")
    options = tr.options(variant="hant")
    hant = tr.tokenizer.token_to_id(">>cmn_Hant<<")
    assert tr._language_id(options) == hant
    assert tr.pipeline.job("Hello.", options, tr._language_id(options), 0.0).sentences[0].ids[0] == hant
    monkeypatch.setattr(tr, "generation", GenerationSpec(tr.generation.decoder_start_id, (0,), 1))
    assert tr._language_id(options) is None  # a one-target family: nothing before the source


def test_the_search_settings_take_the_specs_tokens(bundle_dir):
    tr = Translator(bundle_dir, precision="fp32")
    spec = tr.generation
    assert (tr.defaults.decoder_start_id, tr.defaults.eos_id, tr.defaults.pad_id, tr.defaults.forced_eos_id) == (
        spec.decoder_start_id,
        spec.eos_id,
        spec.pad_id,
        spec.forced_eos_id,
    )
    assert tr.defaults.num_beams == tr.manifest.generation["num_beams"]  # the rest: the bundle's generation config


def test_the_first_of_several_end_tokens_is_the_one_searched_for():
    spec = GenerationSpec(decoder_start_id=2, end_ids=(3, 0), pad_id=1, target_language=TARGET_FIXED)
    assert spec.eos_id == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"end_ids": ()}, "at least one end token"), ({"end_ids": (0,), "target_language": "prompt"}, "unknown target")],
)
def test_a_malformed_spec_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GenerationSpec(decoder_start_id=1, pad_id=1, **kwargs)
