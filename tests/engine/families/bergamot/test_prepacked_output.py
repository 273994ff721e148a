"""engine.families.bergamot.prepacked_output: a long batch's output product packed once, in a session of its own,
scores bit for bit as the decoder step's own product (greedy, beam search, finished sentences leaving the batch),
and only batches wide and long enough take it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.families.bergamot import output_table, prepacked_output
from engine.options import TranslationOptions
from engine.pipeline.translator import Translator

pytest.importorskip("onnx")
from onnx import load

TEXTS = [
    "The old man walked slowly to the market. He bought bread and fish for his family. It rained all day.",
    "Hello world.",
]


@pytest.fixture(scope="module")
def translator(bergamot_bundle_dir: Path) -> Translator:
    return Translator(bergamot_bundle_dir, precision="int8", threads=1)


def _batch(translator: Translator, text: str):
    model = translator._model
    ids = [translator.tokenizer.encode(s) for s in text.split(". ")]
    width = max(len(i) for i in ids) + 1
    rows = np.zeros((len(ids), width), np.int64)
    mask = np.zeros_like(rows)
    for r, sentence in enumerate(ids):
        rows[r, : len(sentence)] = sentence
        mask[r, : len(sentence) + 1] = 1
    return model, model.encode(rows, mask)


def _steps(model, enc, steps: int) -> tuple[list[np.ndarray], bool]:
    """Greedy steps' shortlisted logits (a copy each), the first sentence leaving the batch halfway."""
    run = model.start(enc, 64)
    tokens, out = np.zeros(run.rows, np.int64), []
    for t in range(steps):
        logits = run.step_shortlist(tokens)
        out.append(logits.copy())
        tokens = run.shortlist[logits.argmax(axis=1)]
        if t == steps // 2 and run.rows > 1:
            run.select(np.arange(1, run.rows))
            tokens = tokens[1:]
    return out, run._prepacked is not None


def test_the_packed_product_scores_bit_for_bit_as_the_steps_own(translator, monkeypatch) -> None:
    model, enc = _batch(translator, TEXTS[0])
    assert model.prepackable
    monkeypatch.setattr(prepacked_output, "MIN_WORK", 10**12)
    own, packed_own = _steps(model, enc, 12)
    monkeypatch.setattr(prepacked_output, "MIN_WORK", 0)
    packed, packed_used = _steps(model, enc, 12)
    assert not packed_own and packed_used
    assert len(own) == len(packed)
    for a, b in zip(own, packed):
        np.testing.assert_array_equal(a, b)  # the same op on the same inputs: identical, <unk>'s -inf included


@pytest.mark.parametrize("beams", [1, 4])
def test_translations_are_the_same_either_way(translator, monkeypatch, beams: int) -> None:
    options = TranslationOptions(beams=beams)
    results = {}
    for label, work in (("own", 10**12), ("packed", 0)):
        monkeypatch.setattr(prepacked_output, "MIN_WORK", work)
        translator.clear_cache()
        results[label] = [translator.translate(text, options) for text in TEXTS]
    for own, packed in zip(results["own"], results["packed"]):
        assert own.text == packed.text
        assert [s.score for s in own.sentences] == [s.score for s in packed.sentences]


def test_only_wide_and_long_batches_pack() -> None:
    assert prepacked_output.worthwhile(3448, 37)  # the bench's five-sentence paragraph
    assert not prepacked_output.worthwhile(1040, 30)  # one sentence


def test_the_int8_step_hands_over_the_products_inputs_and_fp32_does_not(bergamot_bundle_dir: Path) -> None:
    int8 = load(str(bergamot_bundle_dir / "int8" / "decoder.onnx"), load_external_data=False)
    names = [o.name for o in int8.graph.output]
    assert names[-2:] == list(prepacked_output.OUTPUTS)
    assert {p.key: p.value for p in int8.metadata_props}[output_table.SCALE_KEY] == "output_w.scale"
    fp32 = load(str(bergamot_bundle_dir / "fp32" / "decoder.onnx"), load_external_data=False)
    assert not set(prepacked_output.OUTPUTS) & {o.name for o in fp32.graph.output}
