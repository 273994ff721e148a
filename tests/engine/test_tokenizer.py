"""The bundle's tokenizer reproduces transformers' MarianTokenizer id for id (encoding) and string for string
(decoding), on the committed fixture."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import pytest

from engine.manifest import load_manifest
from engine.tokenizer import MarianTokenizer
from tests.engine.tokenizer_lines import parity_lines

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module")
def ours(bundle_dir):
    manifest = load_manifest(bundle_dir)
    return MarianTokenizer(manifest.path(manifest.tokenizer["file"]), manifest.tokenizer)


@pytest.fixture(scope="module")
def theirs(checkpoint_dir):
    transformers = pytest.importorskip("transformers")
    return transformers.MarianTokenizer.from_pretrained(str(checkpoint_dir))


def test_encode_matches_marian_tokenizer(ours, theirs):
    lines = parity_lines()
    assert len(lines) >= 500
    mismatches = [(line, ours.encode(line), theirs(line).input_ids) for line in lines]
    mismatches = [m for m in mismatches if m[1] != m[2]]
    assert not mismatches, f"{len(mismatches)}/{len(lines)} lines differ, first: {mismatches[:3]}"


def test_batch_encoding_equals_single(ours):
    lines = parity_lines(n_random=50)
    assert ours.encode_batch(lines) == [ours.encode(line) for line in lines]


def test_unknown_runs_keep_their_vocab_ids(ours, theirs):
    """Chinese inside English input: SentencePiece fuses the unknown run; Marian looks it up in vocab.json."""
    line = "The word 你好 means hello and 世界 means world."
    ids = ours.encode(line)
    assert ids == theirs(line).input_ids
    assert ours.token_to_id("你好") != ours.unk_id or ours.token_to_id("你") != ours.unk_id
    assert any(i != ours.unk_id and ours.id_to_piece(i) in ("你好", "你", "好") for i in ids)


def test_pieces_missing_from_vocab_become_unk(ours, theirs, bundle_dir):
    assert load_manifest(bundle_dir).tokenizer["source_only_pieces"] > 0
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


def test_language_tokens(ours, theirs):
    for token in (">>cmn_Hans<<", ">>cmn_Hant<<"):
        assert ours.language_id(token) == theirs.convert_tokens_to_ids(token)
        assert ours.encode(f"{token} Hello") == theirs(f"{token} Hello").input_ids
    with pytest.raises(KeyError):
        ours.language_id(">>xyz_Latn<<")


def test_decode_matches_marian_tokenizer(ours, theirs):
    rng = random.Random(7)
    size = len(theirs.encoder)
    sequences = [[rng.randrange(size) for _ in range(rng.randint(0, 30))] for _ in range(300)]
    sequences += [theirs(line).input_ids for line in parity_lines(n_random=100)]
    sequences += [[0], [], [theirs.pad_token_id, 5, 6, theirs.eos_token_id], [theirs.unk_token_id, 10]]
    for ids in sequences:
        assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=True), ids


def test_target_side_round_trip(ours, theirs):
    """Chinese references encoded with the target spm decode back to themselves through our decoder."""
    from tests.conftest import FIXTURE_DIR

    for row in (FIXTURE_DIR / "corpus.tsv").read_text(encoding="utf-8").splitlines()[:60]:
        _, hans, hant = row.split("\t")
        for text in (hans, hant):
            ids = theirs(text_target=text).input_ids
            assert ours.decode(ids) == theirs.decode(ids, skip_special_tokens=True)


def test_unigram_model_holds_only_what_the_source_side_can_produce(ours, theirs, bundle_dir):
    """A slot per vocab.json id (placeholders for the ~64k target-only ids) cost ~14 MB resident at full size."""
    import json

    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=str(theirs.spm_files[0]))
    normal = [
        sp.id_to_piece(i)
        for i in range(sp.get_piece_size())
        if not (sp.is_control(i) or sp.is_unknown(i) or sp.is_unused(i) or sp.is_byte(i))
    ]
    unigram = json.loads((bundle_dir / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    assert [piece for piece, _ in unigram[1:]] == normal  # slot 0: the unknown piece
    ids = json.loads((bundle_dir / "source_ids.json").read_text(encoding="utf-8"))
    unk = theirs.encoder[theirs.unk_token]
    assert ids == [-1, *(theirs.encoder.get(piece, unk) for piece in normal)]
    assert ours.encode(" ".join(normal[:50])) == theirs(" ".join(normal[:50])).input_ids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_encoding_many_distinct_sentences_does_not_grow_memory(ours):
    """Every sentence a user pastes is new: a cache of segmented inputs would only grow (~13 MB for these 3,000)."""
    from engine.native_memory import release_free_memory

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
