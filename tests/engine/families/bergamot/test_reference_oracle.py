"""The numpy reference (reference.py) against bergamot-translator itself, on synthetic models of every published
layout: float models token for token (npz and float32 .bin; shared and separate vocabularies; tied-all, tied and
untied; with and without a shortlist), int8 models by the share of identical sentences (intgemm's kernels differ
per CPU, so exact agreement is not expected).

bergamot's tokens come back as surface strings (AnnotatedText words; the final </s> is an empty word), so the
reference's ids are compared through the same SentencePiece decoding, token by token, plus the whole text.
Models are built once into .cache/bergamot-fixtures; the venv once into .cache/bergamot-venv.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from engine.families.bergamot import shortlist as shortlist_io
from engine.families.bergamot.converter.int8_kernel import saturates
from engine.families.bergamot.converter.reader import ModelFolder, read_model
from engine.families.bergamot.converter.reference import EOS, decode
from tests.engine.families.bergamot.markers import int8_as_measured
from tests.fixtures.bergamot import make
from tests.oracles import bergamot

spm = pytest.importorskip("sentencepiece")  # the vocabularies are trained here (the build extra)

pytestmark = pytest.mark.bergamot

LINES = make.english_lines()[::9][:30]  # 30 sentences of 2 to 20 pieces
INT8_LINES = make.english_lines()[:200]


@pytest.fixture(scope="module")
def oracle() -> None:
    reason = bergamot.unavailable_reason()
    if reason:
        pytest.skip(f"bergamot oracle unavailable: {reason}")


def surfaces(sp: spm.SentencePieceProcessor, tokens: list[int]) -> list[str]:
    """Each token's share of the decoded text (how bergamot cuts its target into words); </s> is ''."""
    text_ids = tokens[:-1] if tokens and tokens[-1] == EOS else tokens
    out, previous = [], ""
    for i in range(len(text_ids)):
        current = sp.decode(text_ids[: i + 1])
        out.append(current[len(previous) :])
        previous = current
    return out + ([""] if tokens and tokens[-1] == EOS else [])


def compare(folder: ModelFolder, lines: list[str], *, int8: bool = False, shared_rule: bool = True) -> dict:
    """Run bergamot and the reference on `lines`; the sentences that differ, and how each ended."""
    checkpoint = read_model(folder.model)
    src = spm.SentencePieceProcessor(model_file=str(make_plain(folder.src_vocab)))
    trg = spm.SentencePieceProcessor(model_file=str(make_plain(folder.trg_vocab)))
    short = None
    if folder.shortlist is not None:
        from engine.families.bergamot.converter.marian_io import read_bytes

        short = shortlist_io.parse(read_bytes(folder.shortlist), target_vocab_size=checkpoint.arch.trg_vocab_size)
    answers = bergamot.translate_folder(folder, lines)
    report: dict = {"differ": [], "empty": 0, "limit": 0, "eos": 0, "total": len(lines)}
    for line, answer in zip(lines, answers):
        ids = [*src.encode(line), EOS]
        columns = None
        if short is not None:
            columns = short.allowed([ids], checkpoint.arch.trg_vocab_size, folder.shared_vocab and shared_rule)
        # where int8 agreement is checked (markers.int8_as_measured) intgemm saturates where ORT does
        tokens = decode(checkpoint, ids, columns, int8=int8, saturate=int8 and saturates()).tokens
        mine = surfaces(trg, tokens)
        if mine != answer.tokens or trg.decode(tokens[:-1] if tokens[-1] == EOS else tokens) != answer.text:
            report["differ"].append((line, mine[:10], answer.tokens[:10]))
        kind = "empty" if tokens == [EOS] else "eos" if tokens[-1] == EOS else "limit"
        report[kind] += 1
    return report


def make_plain(path: Path) -> Path:
    if path.suffix != ".gz":
        return path
    import gzip
    import tempfile

    target = Path(tempfile.mkdtemp(prefix="bergamot-vocab-")) / path.name[:-3]
    target.write_bytes(gzip.decompress(path.read_bytes()))
    return target


FLOAT_CASES = [
    (layout, vocab, tying, short)
    for layout in ("npz", "bin")
    for vocab in make.VOCABS
    for tying in make.TYINGS
    for short in (False, True)
]


@pytest.mark.parametrize(("layout", "vocab", "tying", "short"), FLOAT_CASES)
def test_float_model_matches_bergamot_token_for_token(
    oracle: None, layout: str, vocab: str, tying: str, short: bool
) -> None:
    folder = make.cached_folder(replace(make.TINY, vocab=vocab, tying=tying), layout, shortlist=short)
    report = compare(folder, LINES)
    assert not report["differ"], f"{len(report['differ'])}/{len(LINES)} differ, first: {report['differ'][0]}"
    # the sentences end every way: at once (empty output), on </s>, and at the length limit (2 x source length)
    assert report["empty"] and report["eos"] and report["limit"], report


def test_gzipped_folder_matches_bergamot(oracle: None) -> None:
    folder = make.cached_folder(replace(make.TINY, vocab="shared", tying="tied"), "bin", shortlist=True, gz=True)
    assert folder.model.name.endswith(".gz")
    assert not compare(folder, LINES[:10])["differ"]


def test_shared_vocabulary_shortlist_adds_source_ids(oracle: None) -> None:
    """Rule 3 of the shortlist is observable: leaving the source ids out changes some translations."""
    folder = make.cached_folder(replace(make.TINY, vocab="shared", tying="tied-all"), "npz", shortlist=True)
    assert not compare(folder, LINES)["differ"]
    assert compare(folder, LINES, shared_rule=False)["differ"]


INT8_CASES = [
    (layout, vocab, tying)
    for layout in ("intgemm-alphas", "intgemm8")
    for vocab in make.VOCABS
    for tying in ("tied", "tied-all")  # untied int8 is refused: see test_reader.py
]


@int8_as_measured
@pytest.mark.parametrize(("layout", "vocab", "tying"), INT8_CASES)
def test_int8_model_agrees_with_bergamot(
    oracle: None, layout: str, vocab: str, tying: str, record_property: pytest.RecordProperty
) -> None:
    folder = make.cached_folder(replace(make.TINY, vocab=vocab, tying=tying), layout, shortlist=True)
    report = compare(folder, LINES, int8=True)
    share = 1 - len(report["differ"]) / len(LINES)
    record_property("int8_agreement", share)
    print(f"int8 {layout} {vocab} {tying}: {share:.1%} identical of {len(LINES)}")
    assert share >= 0.9, report["differ"][:3]


@int8_as_measured
@pytest.mark.parametrize(("vocab", "tying"), [("separate", "tied"), ("shared", "tied-all")])
def test_int8_agreement_on_200_sentences(
    oracle: None, vocab: str, tying: str, record_property: pytest.RecordProperty
) -> None:
    """base-memory's two layouts (enzh: separate vocabularies, tied; zhen: shared, tied-all), with alphas and a
    shortlist as published: the share of sentences identical to bergamot's int8."""
    folder = make.cached_folder(replace(make.TINY, vocab=vocab, tying=tying), "intgemm-alphas", shortlist=True)
    report = compare(folder, INT8_LINES, int8=True)
    share = 1 - len(report["differ"]) / len(INT8_LINES)
    record_property("int8_agreement", share)
    print(f"int8 200 {vocab} {tying}: {share:.1%} identical")
    assert share >= 0.95, report["differ"][:3]


def test_a_broken_model_is_an_error_not_a_crash(oracle: None, tmp_path: Path) -> None:
    folder = make.write_folder(tmp_path / "broken", make.TINY, "bin", shortlist=True)
    blob = folder.model.read_bytes()
    folder.model.write_bytes(blob[: len(blob) // 3])
    with pytest.raises(bergamot.OracleError, match="bergamot failed"):
        bergamot.translate_folder(folder, ["Hello."])


def test_bergamot_verifies_our_shortlist_checksum(oracle: None, tmp_path: Path) -> None:
    """Our checksum is the one Marian computes: bergamot accepts our file with verification on (the cases above)
    and refuses it once one covered byte changes."""
    folder = make.write_folder(tmp_path / "short", make.TINY, "npz", shortlist=True)
    assert folder.shortlist is not None
    blob = bytearray(folder.shortlist.read_bytes())
    bergamot.translate_folder(folder, ["Hello."])
    blob[-8] ^= 1  # a list entry inside the checksummed words (the size stays valid)
    folder.shortlist.write_bytes(bytes(blob))
    with pytest.raises(bergamot.OracleError, match="checksum"):
        bergamot.translate_folder(folder, ["Hello."])
    assert np.frombuffer(bytes(blob), "<u8", 1)[0] == shortlist_io.MAGIC
