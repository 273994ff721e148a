"""The zh→en fixture (no language tokens, Chinese source, English target): ONNX FP32 decoding equals transformers'
generate() token for token, greedy and beam, batch 1 and batched with padding; INT8 follows FP32; the whole
Translator path (Chinese segmentation, English joiner) reproduces the memorised references."""

from __future__ import annotations

import unicodedata

import pytest

from engine.pipeline.translator import Translator
from tests.conftest import FIXTURE_DIR
from tests.engine.search.test_decoding import assert_batch_one_matches, assert_padded_batches_match, load_hf

pytestmark = pytest.mark.torch

ROWS = [r.split("\t") for r in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()]


def _sources() -> list[str]:
    """No >>tag<< prefix: the model has one target. Simplified, Traditional, and unseen Chinese text."""
    extra = (FIXTURE_DIR / "chinese_extra.txt").read_text(encoding="utf-8").splitlines()
    return [r[1] for r in ROWS[::3]] + [r[2] for r in ROWS[1::6]] + extra[:20]


@pytest.fixture(scope="module")
def hf(zh_en_checkpoint_dir):
    return load_hf(zh_en_checkpoint_dir)


@pytest.fixture(scope="module")
def fp32(zh_en_bundle_dir):
    return Translator(zh_en_bundle_dir, precision="fp32", threads=1)


def test_bundle_is_zh_to_en_without_variants(fp32):
    pair = fp32.pair
    assert (pair.source.code, pair.target.code, pair.key) == ("zh", "en", "zh-en")
    assert pair.variants == () and pair.default_variant is None
    assert (pair.joiner, pair.segmenter, pair.self_test) == (" ", "zh", "非常感谢。")
    assert fp32.manifest.language_tokens == []
    validation = fp32.manifest.raw["validation"]
    assert validation["passed"] and validation["bleu_tokenize"] == "13a"
    assert validation["scores"]["fp32"]["bleu"] == validation["scores"]["pytorch"]["bleu"] > 90


@pytest.mark.parametrize("beams", [1, 2, 4])
@pytest.mark.parametrize("max_length", [512, 12])
def test_batch_one_matches_generate(hf, fp32, beams, max_length):
    assert_batch_one_matches(hf, fp32, _sources(), beams, max_length, same_ids=True)


@pytest.mark.parametrize("beams", [1, 4])
def test_batched_with_padding_matches_generate(hf, fp32, beams):
    assert_padded_batches_match(hf, fp32, _sources(), beams)


def test_fixture_output_is_varied(fp32):
    """A model that repeats one token would make the parity tests above meaningless."""
    outs = fp32.generate_ids(fp32.tokenizer.encode_batch(_sources()[:40]), beams=1)
    assert len({tuple(o) for o in outs}) >= 35
    assert len({t for o in outs for t in o}) >= 100
    for o in outs:
        assert len(set(o)) >= max(2, len(o) // 3)


def test_int8_reproduces_fp32(zh_en_bundle_dir, fp32):
    int8 = Translator(zh_en_bundle_dir, precision="int8", threads=1)
    ids = fp32.tokenizer.encode_batch(_sources()[:60])
    same = sum(a == b for a, b in zip(int8.generate_ids(ids, beams=4), fp32.generate_ids(ids, beams=4)))
    assert same / len(ids) >= 0.95


def test_translates_known_sentences_both_scripts(zh_en_bundle_dir):
    tr = Translator(zh_en_bundle_dir, precision="int8", threads=1)
    hits = {"hans": 0, "hant": 0}
    for en, hans, hant in ROWS[:40]:
        hits["hans"] += unicodedata.normalize("NFKC", tr.translate(hans).text) == unicodedata.normalize("NFKC", en)
        hits["hant"] += unicodedata.normalize("NFKC", tr.translate(hant).text) == unicodedata.normalize("NFKC", en)
    assert hits["hans"] >= 30 and hits["hant"] >= 30, hits


def test_two_chinese_sentences_join_with_a_space(zh_en_bundle_dir):
    """The pair's joiner: Chinese sentences segmented apart come back as English separated by one space."""
    tr = Translator(zh_en_bundle_dir, precision="fp32", threads=1)
    first, second = ROWS[2], ROWS[4]  # 非常感谢。 / 明天见。
    got = tr.translate(first[1] + second[1]).text
    assert got == f"{tr.translate(first[1]).text} {tr.translate(second[1]).text}"
    assert got.startswith(first[0])
