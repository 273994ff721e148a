"""The bundle's tokenizer reproduces transformers' MarianTokenizer id for id (encoding) and string for string
(decoding), on both committed fixtures: en→zh (English source, language tokens) and zh→en (Chinese source, none)."""

from __future__ import annotations

import random
import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.bundle.manifest import load_manifest
from engine.families.marian.tokenizer import MarianTokenizer
from tests.conftest import BUNDLE, CHECKPOINT, FIXTURE_DIR, ZH_EN_BUNDLE, ZH_EN_CHECKPOINT
from tests.engine.tokenizer_lines import parity_lines

pytestmark = pytest.mark.torch


@dataclass(frozen=True)
class Side:
    """One fixture as the tokenizer sees it."""

    key: str
    bundle: Path
    checkpoint: Path
    source: str  # "en" / "zh": which parity lines to feed it
    target_columns: tuple[int, ...]  # corpus.tsv columns its target side writes


SIDES = {
    "en-zh": Side("en-zh", BUNDLE, CHECKPOINT, "en", (1, 2)),
    "zh-en": Side("zh-en", ZH_EN_BUNDLE, ZH_EN_CHECKPOINT, "zh", (0,)),
}


@pytest.fixture(scope="module", params=sorted(SIDES))
def side(request) -> Side:
    return SIDES[request.param]


def _ours(side: Side) -> MarianTokenizer:
    manifest = load_manifest(side.bundle)
    return MarianTokenizer(manifest.path(manifest.tokenizer["file"]), manifest.tokenizer)


def _theirs(side: Side):
    transformers = pytest.importorskip("transformers")
    return transformers.MarianTokenizer.from_pretrained(str(side.checkpoint))


@pytest.fixture(scope="module")
def ours(side):
    return _ours(side)


@pytest.fixture(scope="module")
def theirs(side):
    return _theirs(side)


def test_encode_matches_marian_tokenizer(side, ours, theirs):
    lines = parity_lines(source=side.source)
    assert len(lines) >= 500
    mismatches = [(line, ours.encode(line), theirs(line).input_ids) for line in lines]
    mismatches = [m for m in mismatches if m[1] != m[2]]
    assert not mismatches, f"{len(mismatches)}/{len(lines)} lines differ, first: {mismatches[:3]}"


def test_float32_near_ties_fall_as_in_sentencepiece():
    """ "5"+"55" and "55"+"5" score the same in float64 (the tokenizers library picked "5" first) but not in
    SentencePiece's float32 sums, which pick "55" first; engine.text.unigram sums as SentencePiece does."""
    side = SIDES["zh-en"]
    ours, theirs = _ours(side), _theirs(side)
    line = "请拨打555-1234联系我。"
    assert ours.pieces(line)[3:5] == ["55", "5"]
    assert ours.encode(line) == theirs(line).input_ids


def test_batch_encoding_equals_single(side, ours):
    lines = parity_lines(n_random=50, source=side.source)
    assert ours.encode_batch(lines) == [ours.encode(line) for line in lines]


@pytest.mark.parametrize(
    ("key", "line", "foreign"),
    [
        ("en-zh", "The word 你好 means hello and 世界 means world.", ("你好", "你", "好")),
        ("zh-en", "他说hello，我说 world 和 Qiao。", ("hello", "world", "Qiao", "Q")),
    ],
)
def test_unknown_runs_keep_their_vocab_ids(key, line, foreign):
    """The other language inside the input: SentencePiece fuses what its source model lacks into one unknown run,
    and Marian looks that run up in the joint vocab.json (so it keeps a real id when the target side knows it)."""
    side = SIDES[key]
    ours, theirs = _ours(side), _theirs(side)
    ids = ours.encode(line)
    assert ids == theirs(line).input_ids
    assert any(i != ours.unk_id and ours.id_to_piece(i) in foreign for i in ids)


def test_pieces_missing_from_vocab_become_unk(side, ours, theirs):
    assert load_manifest(side.bundle).tokenizer["source_only_pieces"] > 0
    import sentencepiece as spm

    proto_pieces = spm.SentencePieceProcessor(model_file=str(theirs.spm_files[0]))
    dropped = [
        proto_pieces.id_to_piece(i)
        for i in range(proto_pieces.get_piece_size())
        if proto_pieces.id_to_piece(i) not in theirs.encoder
        and not proto_pieces.is_control(i)
        and not proto_pieces.is_unknown(i)
    ]
    assert dropped
    for piece in dropped:
        word = piece.replace("▁", " ").strip() or piece
        assert ours.encode(word) == theirs(word).input_ids


def test_language_tokens(side, ours, theirs):
    if side.key == "zh-en":  # like opus-mt-zh-en: no target tokens; a typed >>tag<< is an unknown piece
        assert ours.language_tokens == [] and load_manifest(side.bundle).language_tokens == []
        for text in (">>cmn_Hans<< 你好", ">>eng<< 谢谢"):
            assert ours.encode(text) == theirs(text).input_ids
            assert ours.encode(text)[0] == ours.unk_id
    else:
        for token in (">>cmn_Hans<<", ">>cmn_Hant<<"):
            assert ours.language_id(token) == theirs.convert_tokens_to_ids(token)
            assert ours.encode(f"{token} Hello") == theirs(f"{token} Hello").input_ids
    with pytest.raises(KeyError):
        ours.language_id(">>xyz_Latn<<")


def test_decode_matches_marian_tokenizer(side, ours, theirs):
    rng = random.Random(7)
    size = len(theirs.encoder)
    sequences = [[rng.randrange(size) for _ in range(rng.randint(0, 30))] for _ in range(300)]
    sequences += [theirs(line).input_ids for line in parity_lines(n_random=100, source=side.source)]
    sequences += [[0], [], [theirs.pad_token_id, 5, 6, theirs.eos_token_id], [theirs.unk_token_id, 10]]
    for ids in sequences:
        assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=True), ids


def test_target_side_round_trip(side, ours, theirs):
    """References (Chinese for en→zh, English for zh→en) encoded with the target spm decode back to themselves
    through our decoder."""
    for row in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()[:60]:
        columns = row.split("\t")
        for text in (columns[c] for c in side.target_columns):
            ids = theirs(text_target=text).input_ids
            assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=True)
            assert ours.decode(ids) == unicodedata.normalize("NFKC", text)  # the spm's nmt_nfkc rule


def test_unigram_model_holds_only_what_the_source_side_can_produce(side, ours, theirs):
    """A slot per vocab.json id (placeholders for the ~64k target-only ids) cost ~14 MB resident at full size."""
    import json

    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(theirs.spm_files[0]))
    normal = [
        sp.id_to_piece(i)
        for i in range(sp.get_piece_size())
        if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i) or sp.is_byte(i))
    ]
    unigram = json.loads((side.bundle / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    assert [piece for piece, _ in unigram[1:]] == normal  # slot 0: the unknown piece
    ids = json.loads((side.bundle / "source_ids.json").read_text(encoding="utf-8"))
    unk = theirs.encoder[theirs.unk_token]
    assert ids == [-1, *(theirs.encoder.get(piece, unk) for piece in normal)]
    assert ours.encode(" ".join(normal[:50])) == theirs(" ".join(normal[:50])).input_ids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_encoding_many_distinct_sentences_does_not_grow_memory():
    """Every sentence a user pastes is new: a cache of segmented inputs would only grow (~13 MB for these 3,000)."""
    from engine.runtime.native_memory import release_free_memory

    ours = _ours(SIDES["en-zh"])

    def resident_mb() -> float:
        status = Path("/proc/self/status").read_text()
        return int(re.search(r"RssAnon:\s+(\d+)", status).group(1)) / 1024

    rng = random.Random(5)
    words = [w for line in parity_lines(n_random=0) for w in line.split()][:400]
    batches = [[" ".join(rng.choice(words) for _ in range(25)) for _ in range(3)] for _ in range(1000)]
    ours.encode_batch(batches[0])
    release_free_memory()
    before = resident_mb()
    for batch in batches:
        ours.encode_batch(batch)
    release_free_memory()
    assert resident_mb() - before < 4.0  # ~1 MB measured with no cache, ~13 MB with it
