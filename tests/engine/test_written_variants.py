"""What a model writes (engine.languages.written_variants / written_variant / offered_variants): Firefox's en→zh
declares no variant (no script token) and writes Simplified only; opus-mt-en-zh writes both; English has none."""

from __future__ import annotations

from engine.languages import default_pair, offered_variants, variant_label, written_variant, written_variants

FIREFOX = default_pair("en", "zh")  # as the Bergamot converter writes it: no language tokens
OPUS = default_pair("en", "zh", [">>cmn_Hans<<", ">>cmn_Hant<<"])
ZH_EN = default_pair("zh", "en")


def test_a_chinese_target_without_variants_writes_simplified_only():
    assert FIREFOX.variants == ()
    assert written_variants(FIREFOX) == ("hans",)
    assert written_variant(FIREFOX, "hant") == "hans", "Traditional asked, Simplified written"
    assert written_variant(FIREFOX, None) == "hans"
    assert offered_variants(FIREFOX) == ("hans", "hant"), "Traditional may be asked, and is then said"


def test_a_model_with_both_scripts_writes_what_is_asked():
    assert written_variants(OPUS) == ("hans", "hant")
    assert written_variant(OPUS, "hant") == "hant" and written_variant(OPUS, None) == "hans"
    assert written_variant(default_pair("en", "zh", [">>cmn_Hans<<"]), "hant") == "hans"


def test_english_has_no_variants():
    assert written_variants(ZH_EN) == () and offered_variants(ZH_EN) == ()
    assert written_variant(ZH_EN, "hant") is None


def test_variant_labels_come_from_the_model_or_what_qiao_knows():
    assert variant_label(FIREFOX, "hant") == "Traditional" and variant_label(OPUS, "hans") == "Simplified"
    assert variant_label(FIREFOX, "latn") == "latn"
