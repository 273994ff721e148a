"""A glossary through `Translator.translate`, end to end on the fixture: a term the model would not write is in the
output; a do-not-translate span comes out verbatim; a term its vocabulary cannot spell changes nothing and is
reported (unmet, flagged), never silently dropped."""

from __future__ import annotations

import pytest

from engine.glossary import Glossary, GlossaryEntry
from engine.options import TranslationOptions
from engine.pipeline.translator import Translator
from engine.results import FLAG_CONSTRAINT

SOURCE = "My brother works at a bank."


@pytest.fixture(scope="module")
def fp32(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def _glossary(*entries: GlossaryEntry) -> TranslationOptions:
    return TranslationOptions(glossary=Glossary(entries=entries, protect=False))


def test_a_required_term_the_model_would_not_write_is_in_the_translation(fp32):
    plain = fp32.translate(SOURCE).text
    assert "北京" not in plain
    result = fp32.translate(SOURCE, _glossary(GlossaryEntry("bank", "北京")))
    assert "北京" in result.text
    (sentence,) = result.sentences
    assert sentence.unmet == ()
    assert not [f for f in sentence.flags if f.kind == FLAG_CONSTRAINT]


def test_every_sentence_gets_its_own_terms(fp32):
    text = f"{SOURCE} Good morning, everyone!"
    result = fp32.translate(text, _glossary(GlossaryEntry("bank", "北京"), GlossaryEntry("morning", "公司")))
    first, second = result.sentences
    assert "北京" in result.text[slice(*first.target_span)]
    assert "公司" in result.text[slice(*second.target_span)]


def test_a_term_the_vocabulary_cannot_spell_is_reported_and_changes_nothing(fp32):
    plain = fp32.translate(SOURCE)
    result = fp32.translate(SOURCE, _glossary(GlossaryEntry("bank", "储蓄所")))  # 储, 蓄 are not in its vocabulary
    assert result.text == plain.text
    (sentence,) = result.sentences
    assert sentence.unmet == ("bank",)
    assert [f.kind for f in sentence.flags] == [FLAG_CONSTRAINT]


def test_a_protected_placeholder_comes_out_verbatim(fp32):
    source = "My brother works at a bank %s."
    result = fp32.translate(source, TranslationOptions(glossary=Glossary(protect=True)))
    assert "%s" in result.text, result.text
