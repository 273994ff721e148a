"""engine.text.verbatim: which texts have nothing to translate (kept verbatim, never sent to the model), and the plain
text pipeline keeping them: a URL, an e-mail address, a number or code came back as a made-up sentence."""

from __future__ import annotations

import pytest

from engine.text.segment import segment_text
from engine.text.verbatim import nothing_to_translate

NOTHING = [
    "",
    "   \n",
    "https://example.org/path?q=1",
    "<https://example.org/path?q=1>",
    "(www.example.org).",
    "john.smith@example.org",
    "https://a.example.org https://b.example.org",
    "42",
    "3.14",
    "2024-01-05 12:30",
    "+86 138 0000 0000",
    "50% — $5.00 — №7",
    "`ls -la`",
    "{name}",
    "%1$d %s",
    "print(result)",
    "foo_bar()",
    "os.path.join",
    "example.org",
    "README.md",
    "/usr/bin/python3",
    "OEBPS/images/image0001.png",  # LibreOffice 7.4's EPUB writes an image's path as its alt text (issue 27)
    "media/rId20.png",
    "C:\\Windows\\System32",
    "--verbose -v",
    "getElementById",
    "std::vector<int> v;",
    "x = 1",
    "A.",
]

WORDS = [
    "Hello",
    "Introduction",
    "Thank you very much.",
    "See example.org for more.",
    "Call foo_bar() now.",
    "Email: john@example.org",
    "https://a.example.org and https://b.example.org",
    "e.g.",
    "U.S.",
    "Yes/No",
    "and/or.",
    "km/h",
    "See images/pic.png",
    "10 kg",
    "COVID-19",
    "Mr. Smith",
    "你好",
    "好",
    "请访问 https://example.org",
    "请访问https://example.org",
    "价格是3.5元",
]


@pytest.mark.parametrize("text", NOTHING)
def test_nothing_to_translate(text):
    assert nothing_to_translate(text)


@pytest.mark.parametrize("text", WORDS)
def test_any_word_is_translated(text):
    assert not nothing_to_translate(text)


def test_segmentation_keeps_such_sentences_and_translates_the_rest():
    text = "Thank you very much. https://example.org/path?q=1\nprint(result)\n42\nSee you tomorrow."
    segments = segment_text(text)
    assert "".join(s.text for s in segments) == text
    assert [s.sentence for s in segments if s.translate] == ["Thank you very much.", "See you tomorrow."]


def test_the_engine_gives_them_back_unchanged_without_decoding(bundle_dir):
    from engine.pipeline.translator import Translator

    translator = Translator(bundle_dir, precision="int8")
    kept = ["https://example.org/path?q=1", "john@example.org", "print(result)", "42", "{name}"]
    results = list(translator.translate_segments([*kept, "Thank you very much."]))
    assert [r.text for r in results[:-1]] == kept  # the fixture model made up a Chinese sentence for each
    assert all(r.sentences == [] and r.stats.source_tokens == 0 for r in results[:-1])  # nothing was decoded
    assert results[-1].text == "非常感谢。"
    whole = translator.translate("Thank you very much.\nhttps://example.org/path?q=1\n")
    assert whole.text == "非常感谢。\nhttps://example.org/path?q=1\n"


def test_the_fast_path_agrees_with_the_full_rule(monkeypatch):
    import random
    import re

    from engine.text import verbatim

    pieces = [*NOTHING, *WORDS, "the", "Hello,", "www.", "iPhone", "`git log main`", "{{ user name }}", "%(x)s", "I"]
    rng = random.Random(26)
    texts = [" ".join(rng.sample(pieces, rng.randint(1, 4))) for _ in range(3000)]
    fast = [nothing_to_translate(t) for t in texts]
    monkeypatch.setattr(verbatim, "_PLAIN_WORD", re.compile(r"(?!)"))  # never matches: the full rule only
    assert [nothing_to_translate(t) for t in texts] == fast
