"""The zh→en direction through the Translator: every text convention comes from the bundle's language pair.

The relabelled tests run on a copy of the en→zh fixture whose manifest says zh→en (the tiny model's output is not
English, but segmentation, joiner, variants and cache scope are the pair's). The TINY_ZH_EN tests run on the real
zh→en fixture once it exists (another task builds it) and skip until then.
"""

from __future__ import annotations

import pytest

from engine.options import TranslationOptions
from engine.pipeline.planning import CHUNK_TOKENS
from engine.pipeline.translator import Translator
from tests.engine.bundles import TINY_ZH_EN, copy_bundle, relabel_as_zh_en

TWO = "你好。我是学生！"


@pytest.fixture(scope="module")
def relabelled(bundle_dir, tmp_path_factory):
    bundle = copy_bundle(bundle_dir, tmp_path_factory.mktemp("zh_en") / "bundle")
    relabel_as_zh_en(bundle)
    return Translator(bundle, precision="fp32", threads=1)


def test_a_zh_en_bundle_segments_chinese_and_joins_with_a_space(relabelled):
    tr = relabelled
    assert tr.pair.key == "zh-en" and tr.language_token(None) is None  # no target token for English
    whole = tr.translate(TWO, beams=1)
    first, second = tr.translate("你好。", beams=1), tr.translate("我是学生！", beams=1)
    assert whole.stats.sentences == 2
    assert whole.text == f"{first.text} {second.text}"
    assert whole.tokens == [first.tokens[0], second.tokens[0]]  # no language token in the source rows


def test_a_variant_is_ignored_where_the_pair_has_none(relabelled):
    plain = relabelled.translate("你好。", beams=1)
    assert relabelled.translate("你好。", TranslationOptions(beams=1, variant="hant")).text == plain.text


def test_two_directions_never_share_cached_sentences(bundle_dir, relabelled):
    en_zh = Translator(bundle_dir, precision="fp32", threads=1)
    en_zh.translate("你好。", beams=1)
    assert en_zh.sentence_cache is not relabelled.sentence_cache
    relabelled.clear_cache()
    result = relabelled.translate("你好。", beams=1)
    assert result.stats.sentences_reused == 0
    keys = list(relabelled.sentence_cache._items)
    assert keys and all(k[0].startswith("zh-en:") for k in keys)


def test_a_long_chinese_sentence_is_split_at_clause_marks(relabelled):
    clause = "我们今天去了公园看到了很多花，"
    text = clause * 40 + "结束。"
    chunks = relabelled._split_long(text, 60)
    assert "".join(chunks) == text  # nothing lost, no spaces added
    assert all(len(relabelled.tokenizer.encode(c, add_eos=False)) <= 60 for c in chunks)
    longer = clause * 200 + "结束。"
    assert len(relabelled.tokenizer.encode(longer)) > CHUNK_TOKENS
    result = relabelled.translate(longer, beams=1)
    assert result.stats.sentences >= 2 and all(result.tokens)


@pytest.fixture(scope="module")
def zh_en():
    return Translator(TINY_ZH_EN, precision="fp32", threads=1)


def test_the_zh_en_fixture_loads_as_zh_en(zh_en):
    assert zh_en.pair.key == "zh-en" and zh_en.pair.joiner == " " and not zh_en.pair.variants
    assert zh_en.pair.segmenter == "zh" and not zh_en.pair.source.spaced


def test_the_zh_en_fixture_translates_sentence_by_sentence(zh_en):
    whole = zh_en.translate(TWO, beams=1)
    parts = [zh_en.translate(s, beams=1).text for s in ("你好。", "我是学生！")]
    assert whole.stats.sentences == 2 and whole.text == " ".join(parts)
    for mark in "，。！？：；":
        assert mark not in whole.text or any("\u4e00" <= ch <= "\u9fff" for ch in whole.text)


def test_the_zh_en_fixture_streams_and_batches(zh_en):
    events = []
    result = zh_en.translate("你好。\n\n我是学生！", beams=1, on_event=events.append)
    assert "".join(e.delta for e in events) == result.text and result.text.count("\n") == 2
    segments = ["你好。", "", "我是学生！"]
    batch = list(zh_en.translate_segments(segments, TranslationOptions(beams=1)))
    assert [r.text for r in batch] == [zh_en.translate(s, beams=1).text for s in segments]
