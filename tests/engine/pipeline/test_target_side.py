"""Glossary constraints and forced prefixes are spelled with the TARGET vocabulary (the ids the decoder writes).

With a shared vocabulary source and target ids coincide, so a mix-up is invisible; with separate ones (format 5) a
constraint option taken from `encode` (source ids) decodes to other text. Here a separate-vocabulary tokenizer is
made from the en→zh fixture without torch: the same source side, the target table numbered in another order (the
specials keep their ids, as the build requires). tests/engine/pipeline/test_separate_vocab_bundle.py checks a
really built separate-vocabulary bundle end to end (needs the build extra).
"""

from __future__ import annotations

import json
import shutil

import pytest

from engine.bundle.manifest import load_manifest
from engine.families.marian.tokenizer import MarianTokenizer
from engine.glossary import Glossary, GlossaryEntry
from engine.pipeline.glossary_match import constraints_for, target_options
from engine.text.target_prefix import encode_target_prefix
from tests.conftest import BUNDLE, ZH_EN_BUNDLE

TERMS = ("北京", "银行", "火车站", "我们", "谢谢", "bank", "New York", "Hello world")


@pytest.fixture(scope="module")
def shared() -> MarianTokenizer:
    return MarianTokenizer.from_manifest(load_manifest(BUNDLE))


@pytest.fixture(scope="module")
def separate(tmp_path_factory) -> MarianTokenizer:
    """The fixture's tokenizer with a target vocabulary of its own: pieces.json reversed past the specials, the
    fixture's numbering kept as source_pieces.json."""
    manifest = load_manifest(BUNDLE)
    info = dict(manifest.tokenizer)
    folder = tmp_path_factory.mktemp("separate")
    for name in (info["file"], info["source_ids_file"]):
        shutil.copyfile(BUNDLE / name, folder / name)
    pieces = json.loads((BUNDLE / info["pieces_file"]).read_text(encoding="utf-8"))
    fixed = 3 + len(info.get("language_ids", {}))  # </s> <unk> <pad> and the >>xx<< tokens keep their ids
    target = [*pieces[:fixed], *reversed(pieces[fixed:])]
    assert target != pieces
    (folder / "pieces.json").write_text(json.dumps(target, ensure_ascii=False), encoding="utf-8")
    (folder / "source_pieces.json").write_text(json.dumps(pieces, ensure_ascii=False), encoding="utf-8")
    info.update(pieces_file="pieces.json", source_pieces_file="source_pieces.json", source_vocab_size=len(pieces))
    tok = MarianTokenizer(folder / info["file"], info, base=folder)
    assert tok.separate_vocabularies
    return tok


def test_encode_target_is_encode_with_a_shared_vocabulary(shared):
    """Nothing changes for today's bundles: the target spelling of plain text is the source encoding."""
    texts = [*TERMS, "Thank you 谢谢 very much.", "  spaced   out  ", ""]
    assert [shared.encode_target(t) for t in texts] == [shared.encode(t, add_eos=False) for t in texts]
    zh = MarianTokenizer.from_manifest(load_manifest(ZH_EN_BUNDLE))
    assert [zh.encode_target(t) for t in texts] == [zh.encode(t, add_eos=False) for t in texts]


def test_target_token_to_id_reads_the_target_table(separate, shared):
    for piece in ("北", "▁", "我", "▁bank"):
        assert separate.target_token_to_id(piece) != shared.token_to_id(piece)  # another numbering …
        assert separate.id_to_piece(separate.target_token_to_id(piece)) == piece  # … of the same piece
    assert separate.decode(separate.encode_target("北京")) == "北京"
    assert separate.decode(separate.encode("北京", add_eos=False)) != "北京"  # encode is the source side


@pytest.mark.parametrize("term", TERMS)
def test_every_constraint_option_decodes_to_the_term_on_the_target_side(separate, shared, term):
    options = target_options(term, separate)
    assert len(options) == len(target_options(term, shared))  # as many ways to write it as with one vocabulary
    for option in options:
        assert all(0 <= i < separate.vocab_size for i in option)
        assert separate.decode(option) == term, (term, option)


def test_constraints_for_a_sentence_use_target_ids(separate):
    glossary = Glossary(entries=(GlossaryEntry("Beijing", "北京"), GlossaryEntry("thanks", "谢谢")), protect=False)
    found = constraints_for(glossary, "Many thanks, I live in Beijing.", separate)
    assert [c.label for c in found] == ["thanks", "Beijing"]
    for constraint, term in zip(found, ("谢谢", "北京"), strict=True):
        assert constraint.options and {separate.decode(o) for o in constraint.options} == {term}


def test_a_forced_prefix_is_spelled_with_target_ids(separate, shared):
    for text in ("我的哥哥", "我 们", "Hello wor"):
        ids = encode_target_prefix(separate, text)
        assert ids != encode_target_prefix(shared, text)  # the target numbering, not the fixture's
        assert separate.decode(ids) == text
