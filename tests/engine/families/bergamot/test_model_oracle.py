"""OnnxBergamot on synthetic models of every published layout (tests/fixtures/bergamot/make.py, read by the
build's reader) against the numpy reference (reference.py) and bergamot-translator itself (tests/oracles).

Float models: greedy output token for token with bergamot, and with the reference (tokens and per-token
log-probabilities); empty outputs, </s> stops and length-limit stops all occur. INT8: the same arithmetic as the
reference's int8 imitation, and the share of sentences identical to bergamot's int8 (intgemm's kernels differ
per CPU, so not all)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

# the build extra: the graphs are written with onnx, the fixtures' vocabularies read with sentencepiece
pytest.importorskip("onnx")
spm = pytest.importorskip("sentencepiece")

from engine.families.bergamot import shortlist as shortlist_io  # noqa: E402
from engine.families.bergamot.converter.graphs import build_decoder, build_encoder, from_checkpoint  # noqa: E402
from engine.families.bergamot.converter.int8_kernel import saturates  # noqa: E402
from engine.families.bergamot.converter.marian_io import read_bytes  # noqa: E402
from engine.families.bergamot.converter.reader import ModelFolder, read_model  # noqa: E402
from engine.families.bergamot.converter.reference import EOS, decode  # noqa: E402
from engine.families.bergamot.model import OnnxBergamot  # noqa: E402
from engine.search.decoding import GenerationParams, greedy_search  # noqa: E402
from tests.engine.families.bergamot.markers import int8_as_measured  # noqa: E402
from tests.engine.families.bergamot.test_reference_oracle import make_plain, surfaces  # noqa: E402
from tests.fixtures.bergamot import make  # noqa: E402
from tests.oracles import bergamot  # noqa: E402

PARAMS = GenerationParams(eos_id=0, pad_id=0, decoder_start_id=0)
LINES = make.english_lines()[::9][:30]
INT8_LINES = make.english_lines()[:200]


class Loaded:
    """A fixture folder read, its graphs built at one precision and loaded, its vocabularies opened."""

    def __init__(self, folder: ModelFolder, precision: str) -> None:
        self.folder = folder
        self.checkpoint = read_model(folder.model)
        arch, weights = from_checkpoint(self.checkpoint)
        self.short = None
        if folder.shortlist is not None:
            self.short = shortlist_io.parse(read_bytes(folder.shortlist), target_vocab_size=arch.target_vocab)
        encoder = build_encoder(arch, weights, precision)[0].SerializeToString()
        decoder = build_decoder(arch, weights, precision, shortlisted=self.short is not None)[0].SerializeToString()
        self.model = OnnxBergamot(
            encoder, decoder, arch, precision, shortlist=self.short, shared_vocab=folder.shared_vocab, threads=1
        )
        self.src = spm.SentencePieceProcessor(model_file=str(make_plain(folder.src_vocab)))
        self.trg = spm.SentencePieceProcessor(model_file=str(make_plain(folder.trg_vocab)))
        self.arch = arch

    def ids(self, line: str) -> list[int]:
        return [*self.src.encode(line), EOS]

    def greedy(self, ids: list[int]):
        """Our tokens (final </s> appended when the search ended on it) and their log-probabilities."""
        enc = self.model.encode(np.array([ids]), np.ones((1, len(ids)), np.int64))
        *_, last = greedy_search(self.model, enc, PARAMS, np.array([2 * len(ids) + 1]))
        out = last.outputs[0]
        tokens = list(out.best.tokens)
        logprobs = list(out.best.logprobs)
        if out.best.eos_logprob is not None:
            tokens.append(EOS)
            logprobs.append(out.best.eos_logprob)
        return tokens, logprobs

    def columns(self, ids: list[int]) -> np.ndarray | None:
        if self.short is None:
            return None
        return self.short.allowed([ids], self.arch.target_vocab, self.folder.shared_vocab)


@pytest.fixture(scope="module")
def oracle() -> None:
    reason = bergamot.unavailable_reason()
    if reason:
        pytest.skip(f"bergamot oracle unavailable: {reason}")


FLOAT_CASES = [
    (layout, vocab, tying, short)
    for layout in ("npz", "bin")
    for vocab in make.VOCABS
    for tying in make.TYINGS
    for short in (False, True)
]


@pytest.mark.parametrize(("layout", "vocab", "tying", "short"), FLOAT_CASES)
def test_fp32_equals_the_reference_token_for_token(layout: str, vocab: str, tying: str, short: bool) -> None:
    folder = make.cached_folder(replace(make.TINY, vocab=vocab, tying=tying), layout, shortlist=short)
    loaded = Loaded(folder, "fp32")
    ends, diffs = set(), []
    for line in LINES:
        ids = loaded.ids(line)
        tokens, logprobs = loaded.greedy(ids)
        expected = decode(loaded.checkpoint, ids, loaded.columns(ids))
        assert tokens == expected.tokens, line
        # both are float32 computations of a model that amplifies rounding (sharp attention, gain 2): each is
        # within ~1e-4 of a float64 one (direct.py) on the first lines, a few 1e-3 of each other at worst
        diffs += np.abs(np.array(logprobs) - expected.token_logprobs).tolist()
        ends.add("empty" if tokens == [EOS] else "eos" if tokens[-1] == EOS else "limit")
    assert ends == {"empty", "eos", "limit"}
    assert max(diffs) < 1e-2 and np.median(diffs) < 1e-4, (max(diffs), np.median(diffs))


@pytest.mark.bergamot
@pytest.mark.parametrize(
    ("layout", "vocab", "tying", "short"),
    [("npz", "shared", "tied-all", True), ("bin", "separate", "tied", True), ("bin", "separate", "untied", False)],
)
def test_fp32_equals_bergamot_token_for_token(oracle: None, layout: str, vocab: str, tying: str, short: bool) -> None:
    folder = make.cached_folder(replace(make.TINY, vocab=vocab, tying=tying), layout, shortlist=short)
    loaded = Loaded(folder, "fp32")
    answers = bergamot.translate_folder(folder, LINES)
    for line, answer in zip(LINES, answers):
        tokens, _ = loaded.greedy(loaded.ids(line))
        assert surfaces(loaded.trg, tokens) == answer.tokens, line
        assert loaded.trg.decode([t for t in tokens if t != EOS]) == answer.text


@pytest.mark.parametrize(
    ("layout", "vocab", "tying"), [("intgemm-alphas", "separate", "tied"), ("intgemm8", "shared", "tied-all")]
)
def test_int8_is_the_references_int8_arithmetic(layout: str, vocab: str, tying: str) -> None:
    """With stored alphas and without (int8shiftAll: 127/max|A| per product): the reference's int8 imitation's
    tokens, on all but rare near-ties (ORT's float parts round differently from numpy's), the imitation of the
    kernel ORT takes here (int16-saturating pair sums without VNNI: exact, 16 of 30 under an emulated AVX2 CPU)."""
    folder = make.cached_folder(replace(make.TINY, vocab=vocab, tying=tying), layout, shortlist=True)
    loaded = Loaded(folder, "int8")
    same = 0
    for line in LINES:
        ids = loaded.ids(line)
        tokens, _ = loaded.greedy(ids)
        same += tokens == decode(loaded.checkpoint, ids, loaded.columns(ids), int8=True, saturate=saturates()).tokens
    assert same >= len(LINES) - 1, same


@int8_as_measured
@pytest.mark.bergamot
@pytest.mark.parametrize(("vocab", "tying"), [("separate", "tied"), ("shared", "tied-all")])
def test_int8_agrees_with_bergamots_int8_on_200_sentences(
    oracle: None, vocab: str, tying: str, record_property: pytest.RecordProperty
) -> None:
    """base-memory's two layouts (enzh: separate vocabularies, tied; zhen: shared, tied-all), alphas and a
    shortlist as published: the share of sentences identical to bergamot's int8 output (the issue asks ≥ 97 %)."""
    folder = make.cached_folder(replace(make.TINY, vocab=vocab, tying=tying), "intgemm-alphas", shortlist=True)
    loaded = Loaded(folder, "int8")
    answers = bergamot.translate_folder(folder, INT8_LINES)
    same = 0
    for line, answer in zip(INT8_LINES, answers):
        tokens, _ = loaded.greedy(loaded.ids(line))
        same += surfaces(loaded.trg, tokens) == answer.tokens
    share = same / len(INT8_LINES)
    record_property("int8_agreement", share)
    print(f"int8 vs bergamot int8, {vocab} {tying}: {share:.1%} identical of {len(INT8_LINES)}")
    assert share >= 0.97
