"""A glossary and a forced prefix on a really built separate-vocabulary bundle (format 5), end to end.

The checkpoint is a tiny random en→zh Marian with its own target vocabulary (tests/engine/convert/marian_variants.py;
its target side is the fixture's Chinese SentencePiece model, so it cannot spell "bank"), built by the real pipeline.
Before the target side was used, a term's constraint options included its SOURCE ids, which decode (target side) to
other text: "北京" could be met by "在公司的一个", and "bank", which the target cannot write, was reported met while
the output held "这件事" instead.
"""

from __future__ import annotations

import pytest

from engine.glossary import Glossary, GlossaryEntry
from engine.options import TranslationOptions
from engine.results import FLAG_CONSTRAINT

pytestmark = pytest.mark.torch
pytest.importorskip("torch")

SOURCE = "My brother works at a bank."
TERMS = ("北京", "谢谢", "火车站", "我们", "你好")


@pytest.fixture(scope="module")
def translator(tmp_path_factory):
    from engine.convert.pipeline import build_bundle
    from engine.pipeline.translator import Translator
    from tests.conftest import FIXTURE_DIR
    from tests.engine.convert.marian_variants import build_variant

    root = tmp_path_factory.mktemp("separate-vocab")
    ckpt = build_variant(root / "checkpoint", seed=2, separate=True)
    manifest = build_bundle(str(ckpt), root / "bundle", eval_tsv=FIXTURE_DIR / "eval.tsv", eval_limit=8, quiet=True)
    assert manifest["tokenizer"]["source_pieces_file"]  # really separate
    tr = Translator(root / "bundle", precision="fp32", threads=1)
    assert tr.tokenizer.separate_vocabularies
    return tr


def _glossary(source: str, target: str) -> TranslationOptions:
    return TranslationOptions(glossary=Glossary(entries=(GlossaryEntry(source, target),), protect=False))


def test_constraint_ids_decode_to_the_term_on_the_target_side(translator):
    from engine.pipeline.glossary_match import target_options

    tok = translator.tokenizer
    for term in TERMS:
        options = target_options(term, tok)
        assert options, term
        assert {tok.decode(o) for o in options} == {term}, (term, options)
    assert target_options("bank", tok) == ()  # Latin letters are not in this target vocabulary
    assert tok.target_token_to_id(">>cmn_Hans<<") == tok.unk_id  # a source-only token: no target id


def test_the_constrained_search_writes_the_term(translator):
    for term in ("北京", "谢谢"):
        result = translator.translate(SOURCE, _glossary("bank", term))
        (sentence,) = result.sentences
        assert term in result.text and sentence.unmet == (), (term, result.text)


def test_a_term_the_target_cannot_spell_is_reported_not_met_by_other_text(translator):
    plain = translator.translate(SOURCE)
    result = translator.translate(SOURCE, _glossary("bank", "bank"))
    (sentence,) = result.sentences
    assert sentence.unmet == ("bank",) and FLAG_CONSTRAINT in [f.kind for f in sentence.flags]
    assert result.text == plain.text  # nothing was forced in its place


def test_prefix_forcing_continues_after_the_chosen_target_text(translator):
    from engine.text.target_prefix import encode_target_prefix

    tok = translator.tokenizer
    prefix = "我的哥哥"
    forced = encode_target_prefix(tok, prefix)
    assert tok.decode(forced) == prefix
    result = translator.translate_sentence(SOURCE, prefix=prefix)
    assert result.tokens[: len(forced)] == tuple(forced)
    assert result.text.startswith(prefix) and len(result.text) > len(prefix)
    assert translator.translate_sentence(SOURCE, prefix=list(forced)).text == result.text  # ids or text: the same
    # a required term after the prefix: written after it, or reported unmet, never met by other text
    with_term = translator.translate_sentence(SOURCE, _glossary("bank", "北京"), prefix=prefix)
    assert with_term.text.startswith(prefix) and "北京" in with_term.text[len(prefix) :] and with_term.unmet == ()
    unspellable = translator.translate_sentence(SOURCE, _glossary("bank", "bank"), prefix=prefix)
    assert unspellable.text.startswith(prefix) and unspellable.unmet == ("bank",)
