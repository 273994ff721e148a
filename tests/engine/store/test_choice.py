"""Several models per direction: the per-direction choice in the shared settings file, the best published quality
without one, `--model NAME`, and the offer of a better model (engine.store.choice, .quality, .installed)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.errors import ModelNotFoundError
from engine.store.choice import better_available, chosen_for, pick, read_choices
from engine.store.installed import find_bundle, find_for_pair, installed_models, resolve_explicit
from engine.store.quality import (
    PUBLISHED,
    Quality,
    best_published,
    parse_quality,
    parse_speed,
    quality_of,
    rank,
)
from tests.engine import model_helpers
from tests.engine.store.direction_models import model_copy, quality_block, rewrite

store = model_helpers.store


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    """The shared settings file of this test (QIAO_CONFIG_DIR), not yet written."""
    folder = tmp_path / "config"
    folder.mkdir()
    monkeypatch.setenv("QIAO_CONFIG_DIR", str(folder))
    return folder / "qiao.ini"


# -- reading the choice --------------------------------------------------------------------------------------------


def test_the_choice_is_read_from_the_models_section_as_qsettings_writes_it(config):
    config.write_text(
        "[engine]\nprecision=int8\nen-zh=not-this-one\n\n[models]\nen-zh=firefox-translations-enzh-base-memory\n"
        'zh-en="opus-mt-zh-en"\nxx-yy=../../etc\noffered=a b\n\n[window]\ngeometry=@ByteArray(\\0\\x1)\n',
        encoding="utf-8",
    )
    assert read_choices() == {"en-zh": "firefox-translations-enzh-base-memory", "zh-en": "opus-mt-zh-en"}
    assert chosen_for("en-zh") == "firefox-translations-enzh-base-memory" and chosen_for("fr-en") is None


def test_no_or_an_unreadable_settings_file_is_no_choice(config):
    assert read_choices() == {}
    config.write_bytes(b"\xff\xfe[models]\x00\nen-zh=a/b\n")
    assert read_choices() == {}
    assert read_choices(config.parent / "missing.ini") == {}


# -- choosing ------------------------------------------------------------------------------------------------------


@dataclass
class M:
    name: str
    model_id: str = ""
    pair_key: str | None = "en-zh"
    problem: str | None = None
    quality: Quality | None = None


def q(score: float, metric: str = "COMET-22", test_set: str = "FLORES devtest") -> Quality:
    return Quality(metric, test_set, score, "test")


def test_without_a_choice_the_best_published_quality_wins_whatever_the_search_order():
    opus, firefox = M("opus-mt-en-zh", quality=q(82.44)), M("firefox", quality=q(86.31))
    assert pick([opus, firefox], "en-zh") is firefox
    assert pick([firefox, opus], "en-zh") is firefox


def test_opus_mt_is_used_when_it_is_the_only_one_and_unknown_quality_ranks_last_in_search_order():
    opus = M("opus-mt-en-zh", quality=q(82.44))
    assert pick([opus], "en-zh") is opus
    mine, theirs = M("mine"), M("theirs")
    assert pick([mine, theirs], "en-zh") is mine
    assert pick([mine, opus, theirs], "en-zh") is opus


def test_a_score_on_another_benchmark_is_shown_but_never_compared():
    other = M("bleu-model", quality=q(99.0, metric="BLEU"))
    opus = M("opus", quality=q(82.44))
    assert pick([other, opus], "en-zh") is opus
    assert rank(other.quality) == -math.inf


def test_the_choice_wins_by_name_or_model_id_when_usable():
    opus, firefox = M("opus", "Helsinki-NLP/opus", quality=q(82.0)), M("firefox", quality=q(86.0))
    assert pick([opus, firefox], "en-zh", "opus") is opus
    assert pick([opus, firefox], "en-zh", "Helsinki-NLP/opus") is opus
    broken = M("broken", problem="unreadable")
    assert pick([broken, opus, firefox], "en-zh", "broken") is firefox, "an unusable choice falls back to the best"
    assert pick([opus, firefox], "en-zh", "gone") is firefox
    reverse = M("reverse", pair_key="zh-en")
    assert pick([reverse, opus], "en-zh", "reverse") is opus, "a model of another direction is never chosen"
    assert pick([reverse], "en-zh") is None


def test_a_better_known_model_is_offered_only_to_a_direction_that_has_a_worse_one():
    opus = M("opus-mt-en-zh", "Helsinki-NLP/opus-mt-en-zh", quality=q(82.44))
    offer = better_available([opus], "en-zh")
    assert offer is not None and offer.catalogue_id == "firefox-translations-enzh-base-memory"
    assert offer.quality.score == 86.31
    assert better_available([], "en-zh") is None, "nothing installed for the direction: nothing to improve on"
    have = M("firefox-translations-enzh-base-memory", "mozilla/firefox-translations-enzh-base-memory", quality=q(86.31))
    assert better_available([opus, have], "en-zh") is None
    assert better_available([M("x", quality=q(90.0))], "en-zh") is None
    assert better_available([M("mine")], "en-zh") is None, "a model without a published score is the user's own"
    assert better_available([opus, M("mine")], "en-zh") is None


def test_the_published_table_is_mozillas_comet_on_flores_devtest():
    scores = {p.catalogue_id: p.quality.score for p in PUBLISHED}
    assert scores == {
        "firefox-translations-enzh-base-memory": 86.31,
        "firefox-translations-enzh-base": 85.56,
        "opus-mt-en-zh": 82.44,
        "firefox-translations-zhen-base": 86.22,
        "firefox-translations-zhen-base-memory": 86.04,
        "opus-mt-zh-en": 84.39,
    }
    assert all(p.quality.comparable and "comet-results.md" in p.quality.source for p in PUBLISHED)
    best_en_zh, best_zh_en = best_published("en-zh"), best_published("zh-en")
    assert best_en_zh is not None and best_en_zh.catalogue_id == "firefox-translations-enzh-base-memory"
    assert best_zh_en is not None and best_zh_en.catalogue_id == "firefox-translations-zhen-base"


def test_quality_and_speed_blocks_are_checked_and_a_bad_manifest_block_counts_as_none():
    assert parse_quality(quality_block(86.31)).score == 86.31
    for bad in (None, [], {**quality_block(1.0), "score": "high"}, {**quality_block(1.0), "metric": ""}):
        with pytest.raises(ValueError):
            parse_quality(bad)
    assert parse_speed({"tokens_per_s": 10, "threads": 2, "precision": "int8", "machine": "x"}).tokens_per_s == 10
    with pytest.raises(ValueError, match="tokens_per_s"):
        parse_speed({"tokens_per_s": 0, "threads": 2, "precision": "int8", "machine": "x"})
    assert quality_of({"quality": {"score": "bad"}}, "Helsinki-NLP/opus-mt-en-zh", "en-zh") == best_or_opus()
    assert quality_of({}, "someone/else", "en-zh") is None


def test_a_published_score_applies_only_to_the_published_pair():
    """QA: `quality_of` matched on the model id alone, so a zh→en bundle built with `--model-id
    mozilla/firefox-translations-enzh-base-memory` showed en→zh's published COMET 86.31."""
    enzh = "mozilla/firefox-translations-enzh-base-memory"
    assert quality_of({}, enzh, "en-zh") is not None and quality_of({}, enzh, "en-zh").score == 86.31
    assert quality_of({}, enzh, "zh-en") is None
    manifest = {"languages": {"source": {"code": "zh"}, "target": {"code": "en"}}}
    assert quality_of(manifest, enzh) is None, "the manifest's own pair decides"
    manifest = {"languages": {"source": {"code": "en"}, "target": {"code": "zh"}}}
    assert quality_of(manifest, enzh) is not None
    assert quality_of({}, enzh) is None, "no pair known: no published score"


def test_a_bundle_of_another_pair_under_a_published_id_is_listed_without_its_score(store, config):
    enzh = "mozilla/firefox-translations-enzh-base-memory"
    model_copy(store.models / "as-zhen", enzh)
    rewrite(store.models / "as-zhen", _swap_pair)
    model_copy(store.models / "as-enzh", enzh)
    models = {m.name: m for m in installed_models()}
    assert models["as-zhen"].pair_key == "zh-en" and models["as-zhen"].quality is None
    assert models["as-enzh"].quality is not None and models["as-enzh"].quality.score == 86.31


def test_a_model_of_another_pair_under_the_best_ones_id_does_not_hide_the_offer():
    opus_zh_en = M("opus-mt-zh-en", "Helsinki-NLP/opus-mt-zh-en", pair_key="zh-en", quality=q(84.39))
    as_en_zh = M("mine", "mozilla/firefox-translations-zhen-base", pair_key="en-zh", quality=q(80.0))
    offer = better_available([opus_zh_en, as_en_zh], "zh-en")
    assert offer is not None and offer.catalogue_id == "firefox-translations-zhen-base"


def _swap_pair(raw: dict) -> None:
    langs = raw["languages"]
    langs["source"], langs["target"] = langs["target"], langs["source"]
    langs["variants"], langs["default_variant"] = [], None


def best_or_opus() -> Quality:
    return next(p.quality for p in PUBLISHED if p.model_id == "Helsinki-NLP/opus-mt-en-zh")


# -- the store: installed bundles, the settings file -----------------------------------------------------------


@pytest.fixture
def two_en_zh(store, config):
    """Two en→zh bundles in the per-user folder: `plain` (no quality) listed first, `better` (COMET 90) second."""
    plain = model_copy(store.models / "aaa-plain", "qiao/aaa-plain")
    better = model_copy(store.models / "zzz-better", "qiao/zzz-better", score=90.0, speed=321.0)
    return plain, better


def test_installed_models_carry_family_quality_and_speed(two_en_zh):
    models = {m.name: m for m in installed_models()}
    assert models["zzz-better"].family == "marian" and models["zzz-better"].quality is not None
    assert models["zzz-better"].quality.score == 90.0 and models["zzz-better"].speed is not None
    assert models["zzz-better"].speed.tokens_per_s == 321.0
    assert models["aaa-plain"].quality is None and models["aaa-plain"].speed is None


def test_the_store_uses_the_best_then_the_users_choice_for_the_direction(two_en_zh, config):
    plain, better = two_en_zh
    assert find_for_pair("en-zh") == better, "no choice: the best published quality, not the first found"
    assert find_bundle() == better and find_bundle(pair="en-zh") == better
    config.write_text("[models]\nen-zh=aaa-plain\n", encoding="utf-8")
    assert find_for_pair("en-zh") == plain and find_bundle() == plain
    config.write_text("[models]\nen-zh=removed-since\n", encoding="utf-8")
    assert find_for_pair("en-zh") == better


def test_model_name_or_id_picks_an_installed_bundle(two_en_zh, tmp_path, monkeypatch):
    plain, better = two_en_zh
    assert resolve_explicit("aaa-plain") == str(plain)
    assert find_bundle("aaa-plain") == plain and find_for_pair("en-zh", "aaa-plain") == plain
    assert find_bundle("qiao/zzz-better") == better
    with pytest.raises(ModelNotFoundError) as caught:
        find_bundle("nope-model")
    assert "no installed model is named nope-model" in str(caught.value)
    assert "installed: aaa-plain, zzz-better" in str(caught.value)
    folder = tmp_path / "aaa-plain"  # a folder of that name here is the folder, not the installed bundle
    model_copy(folder, "qiao/local")
    monkeypatch.chdir(tmp_path)
    assert find_bundle("aaa-plain").resolve() == folder.resolve()
    with pytest.raises(ModelNotFoundError, match="no model bundle at"):
        find_bundle(str(tmp_path / "nothing" / "here"))
