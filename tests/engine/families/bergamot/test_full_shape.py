"""The full-shape synthetic Bergamot model (tests/fixtures/bergamot/make.py FULL_SHAPE: base-memory's dims, 32k
vocabularies, a shortlist, int8 with alphas; the bench's model) is decisive the way a trained model is, so the
build's own INT8 check passes on it and Qiao's INT8 agrees with bergamot's int8 as the issue asks.

A random model of this size is not: its top two logits differ by hundredths of a nat, so int8 rounding picks the
token (the build's INT8 check failed on it, 32 of 40). Slow tier: the model is built (~2 min once, then cached under
.cache/bergamot-fixtures) and converted (~2.5 min)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("sentencepiece")

from engine.families.bergamot import shortlist as shortlist_io
from engine.families.bergamot.converter.convert import build_bundle
from engine.families.bergamot.converter.reader import ModelFolder
from engine.families.bergamot.converter.reference import EOS, decode
from tests.engine.families.bergamot.markers import int8_as_measured
from tests.engine.families.bergamot.test_model_oracle import INT8_LINES, Loaded
from tests.engine.families.bergamot.test_reference_oracle import surfaces
from tests.fixtures.bergamot import make
from tests.oracles import bergamot

pytestmark = pytest.mark.slow

MIN_GAP = 3.0  # nats between the best and the second-best log-probability at every step (a random model: ~0.01)


@pytest.fixture(scope="module")
def oracle() -> None:
    reason = bergamot.unavailable_reason()
    if reason:
        pytest.skip(f"bergamot oracle unavailable: {reason}")


@pytest.fixture(scope="module")
def int8_folder() -> ModelFolder:
    """The full-shape model as the bench uses it: intgemm8 weights with alphas, the shortlist."""
    return make.cached_folder(make.FULL_SHAPE, "intgemm-alphas", shortlist=True)


def test_the_float_model_is_decisive_and_ends_its_sentences() -> None:
    """The numpy reference (bergamot's computation) on random source words, 5 to 40 of them, over the shortlist:
    every step's best token wins by MIN_GAP nats, each word gives its dictionary translation, </s> ends the output
    at the source's </s>."""
    spec = make.FULL_SHAPE
    checkpoint = make.float_checkpoint(spec, make.random_params(spec))
    short = shortlist_io.parse(shortlist_io.build(make.lexicon(spec), spec.first_num, spec.best_num))
    translation, _ = make.translations(spec)
    rng = np.random.default_rng(7)
    gaps = []
    for length in (5, 12, 40):
        ids = [*rng.integers(2, spec.src_vocab_size, length).tolist(), EOS]
        result = decode(checkpoint, ids, short.allowed([ids], spec.trg_vocab_size, False))
        assert result.tokens == [int(translation[i]) for i in ids]  # the last: </s>'s own, </s>
        for logprobs in result.step_logprobs:
            second, best = np.sort(logprobs[np.isfinite(logprobs)])[-2:]
            gaps.append(float(best - second))
    assert min(gaps) > MIN_GAP, sorted(gaps)[:5]


def test_the_build_passes_its_own_int8_check(int8_folder: ModelFolder, tmp_path: Path) -> None:
    """`qiao model build --from` the folder with the converter's default check (INT8_MIN_AGREEMENT)."""
    build_bundle(int8_folder.model.parent, tmp_path / "bundle", quiet=True)
    check = json.loads((tmp_path / "bundle" / "validation.json").read_text(encoding="utf-8"))
    print(f"build check: INT8 {check['int8_identical_to_reference_int8']}/{check['sentences']}")
    assert check["passed"]
    assert check["fp32_identical_to_reference"] == check["sentences"]
    assert check["int8_identical_to_reference_int8"] >= check["sentences"] - 1


@int8_as_measured
@pytest.mark.bergamot
def test_int8_agrees_with_bergamots_int8_and_every_sentence_ends(
    oracle: None, int8_folder: ModelFolder, record_property: pytest.RecordProperty
) -> None:
    """Qiao's INT8 against bergamot's int8 (int8shiftAlphaAll) on 200 sentences: ≥ 97 % identical (the issue's
    bar), and bergamot's own outputs end with </s> (an empty last word), none at the length limit."""
    loaded = Loaded(int8_folder, "int8")
    answers = bergamot.translate_folder(int8_folder, INT8_LINES)
    same = sum(
        surfaces(loaded.trg, loaded.greedy(loaded.ids(line))[0]) == answer.tokens
        for line, answer in zip(INT8_LINES, answers)
    )
    at_limit = sum(not answer.tokens or answer.tokens[-1] != "" for answer in answers)
    share = same / len(INT8_LINES)
    record_property("int8_agreement", share)
    print(f"full shape: int8 vs bergamot int8 {same}/{len(INT8_LINES)} identical; {at_limit} at the length limit")
    assert share >= 0.97
    assert at_limit == 0


@pytest.mark.bergamot
def test_fp32_equals_bergamots_float_on_every_sentence(oracle: None) -> None:
    """The same weights as a float32 model file: Qiao's FP32 greedy output is bergamot's float output, token for
    token, on the 200 sentences."""
    folder = make.cached_folder(make.FULL_SHAPE, "bin", shortlist=True)
    loaded = Loaded(folder, "fp32")
    answers = bergamot.translate_folder(folder, INT8_LINES)
    differ = [
        line
        for line, answer in zip(INT8_LINES, answers)
        if surfaces(loaded.trg, loaded.greedy(loaded.ids(line))[0]) != answer.tokens
    ]
    print(f"full shape: fp32 vs bergamot float {len(INT8_LINES) - len(differ)}/{len(INT8_LINES)} identical")
    assert not differ, differ[:3]
