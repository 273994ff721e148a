"""Glossary entries → search constraints, with the fixture bundles' real tokenizers: matching rules, overlaps,
protected spans, and target tokenisations that exist in the vocabulary and decode back to the term."""

from __future__ import annotations

import pytest

from engine.bundle.manifest import load_manifest
from engine.families.marian.tokenizer import MarianTokenizer
from engine.glossary import Glossary, GlossaryEntry
from engine.pipeline.glossary_match import WORD_START, constraints_for, target_options
from engine.text.protected import protected_spans
from tests.conftest import BUNDLE, ZH_EN_BUNDLE


@pytest.fixture(scope="module")
def tok() -> MarianTokenizer:
    return MarianTokenizer.from_manifest(load_manifest(BUNDLE))


@pytest.fixture(scope="module")
def zh_tok() -> MarianTokenizer:
    return MarianTokenizer.from_manifest(load_manifest(ZH_EN_BUNDLE))


def labels(glossary, source, tok):
    return [c.label for c in constraints_for(glossary, source, tok)]


def test_protected_spans_finds_each_kind_once_in_order():
    source = (
        "Hi {name}, see https://example.com/a?b=1, mail me@x.org, run `ls -l`, %s or %1$d or %(n)s, {{x}} ${y}, "
        "{0} and %2; www.qiao.app. Again {name}."
    )
    assert protected_spans(source) == [
        "{name}",
        "https://example.com/a?b=1",
        "me@x.org",
        "ls -l",
        "%s",
        "%1$d",
        "%(n)s",
        "{{x}}",
        "${y}",
        "{0}",
        "%2",
        "www.qiao.app",
    ]


@pytest.mark.parametrize(
    "text",
    ["Save 50% off today.", "It is 100 % sure.", "Use braces { like this }.", "Price: $5.", "a@b"],
)
def test_protected_spans_ignores_ordinary_text(text):
    assert protected_spans(text) == []


def test_a_placeholder_inside_a_url_is_part_of_the_url():
    assert protected_spans("Open https://x.org/{id}/view (now).") == ["https://x.org/{id}/view"]
    assert protected_spans("See (https://x.org/wiki/A_(b)).") == ["https://x.org/wiki/A_(b)"]


def test_case_rules(tok):
    insensitive = Glossary((GlossaryEntry("qiao"),), protect=False)
    sensitive = Glossary((GlossaryEntry("qiao", case_sensitive=True),), protect=False)
    assert labels(insensitive, "Try QIAO now.", tok) == ["qiao"]
    assert labels(sensitive, "Try QIAO now.", tok) == []
    assert labels(sensitive, "Try qiao now.", tok) == ["qiao"]


def test_do_not_translate_keeps_the_sentence_spelling(tok):
    (c,) = constraints_for(Glossary((GlossaryEntry("qiao"),), protect=False), "Try QIAO now.", tok)
    assert c.options and all(tok.decode(o) == "QIAO" for o in c.options)


def test_whole_word(tok):
    g = Glossary((GlossaryEntry("train", "火车"),), protect=False)
    parts = Glossary((GlossaryEntry("train", "火车", whole_word=False),), protect=False)
    assert labels(g, "The trainee came.", tok) == []
    assert labels(parts, "The trainee came.", tok) == ["train"]
    assert labels(g, "The train, the trainee.", tok) == ["train"]
    # next to Chinese characters a word ends: a whole-word English term still matches inside Chinese text
    assert labels(g, "我坐train去", tok) == ["train"]


def test_whole_word_is_ignored_for_chinese_terms(zh_tok):
    g = Glossary((GlossaryEntry("火车", "train"),), protect=False)
    assert labels(g, "我坐火车去北京。", zh_tok) == ["火车"]


def test_longest_match_wins_and_a_repeated_term_is_one_constraint(tok):
    g = Glossary(
        (GlossaryEntry("train", "火车"), GlossaryEntry("train station", "火车站"), GlossaryEntry("station", "站")),
        protect=False,
    )
    source = "The train station is near the train, and the train is late."
    got = constraints_for(g, source, tok)
    assert [c.label for c in got] == ["train station", "train"]


def test_protect_adds_the_automatic_spans_and_can_be_off(tok):
    source = "Send {count} files to me@x.org."
    assert labels(Glossary(), source, tok) == ["{count}", "me@x.org"]
    assert labels(Glossary(protect=False), source, tok) == []
    assert constraints_for(None, source, tok) == ()


def test_options_are_in_the_vocabulary_with_and_without_the_word_start_marker(tok):
    options = target_options("火车站", tok)
    assert len(options) >= 2
    for option in options:
        assert tok.unk_id not in option
        assert tok.decode(option) == "火车站"
    assert tok.id_to_piece(options[0][0]).startswith(WORD_START)
    assert not tok.id_to_piece(options[1][0]).startswith(WORD_START)


def test_multi_word_term_is_spelled_with_word_starts(tok):
    for option in target_options("New York", tok):
        assert tok.decode(option) == "New York"


def test_a_term_the_vocabulary_cannot_spell_has_no_options(tok):
    # 掌 is not in the fixture's vocabulary at all: the constraint stays, so the search reports it unmet
    (c,) = constraints_for(Glossary((GlossaryEntry("applause", "掌声"),), protect=False), "Applause!", tok)
    assert c.options == () and c.label == "applause"


def test_entry_glossary_term_and_protected_span_overlap_longest_wins(tok):
    g = Glossary((GlossaryEntry("example", "例子"),))
    assert labels(g, "Go to https://example.com now.", tok) == ["https://example.com"]
