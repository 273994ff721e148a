import re

import pytest

from engine.text.segment import Segmentation, has_letters, segment_text
from engine.text.verbatim import nothing_to_translate

SAMPLES = [
    "",
    "One sentence.",
    "Dr. Smith arrived at 3.30 p.m. He was late! Was he?",
    "First paragraph. Second sentence.\n\nSecond paragraph.\r\n  Indented line.\n",
    "Trailing spaces.   \n\n\n",
    "Visit https://example.org/a.b?c=d. Then leave.",
    "😀 Emoji first. Then words.",
    "no punctuation at all",
]


def test_segments_rebuild_the_text_exactly():
    for text in SAMPLES:
        assert "".join(s.text for s in segment_text(text)) == text


def test_sentences_and_layout():
    segs = segment_text("Dr. Smith arrived at 3.30 p.m. He was late! Was he?\n\nYes.")
    sentences = [s.text for s in segs if s.translate]
    assert sentences == ["Dr. Smith arrived at 3.30 p.m.", "He was late!", "Was he?", "Yes."]
    gaps = [s for s in segs if not s.translate]
    assert [g.inline_gap for g in gaps] == [True, True, False, False]


def test_text_without_letters_is_not_translated():
    assert not has_letters("12:30 — 😀 !!!")
    assert has_letters("é") and has_letters("你")
    segs = segment_text("12345")
    assert [s.translate for s in segs] == [False]


# -- hard-wrapped lines -------------------------------------------------------------------------------------------
EMAIL = (
    "Hi Anna,\n"
    "\n"
    "Thanks for sending the report. I read it on the train this morning and I think\n"
    "the section on costs needs another look, because the figures for the second\n"
    "quarter do not match the ones we agreed on last week. I also talked to\n"
    "John about it.\n"
    "\n"
    "Best regards,\n"
    "Tom\n"
)
PDF = (
    "Machine trans-\n"
    "lation has improved a great deal in recent years, and neural models now\n"
    "produce fluent output for many language pairs such as\n"
    "English and Chinese, e.g.\n"
    "in news.\n"
)
LISTS = (
    "Before you start:\n"
    "- download the installer from the\n"
    "  website\n"
    "- restart the computer\n"
    "* check the version\n"
    "• open the settings\n"
    "1. first step\n"
    "2) second step\n"
    "a) one more\n"
)
CODE = (
    "Run this:\n"
    "\n"
    "    result = compute(alpha,\n"
    "        beta)\n"
    "    print(result)\n"
    "\n"
    "```\n"
    "for item in items\n"
    "and more of it\n"
    "```\n"
    "if (ready) {\n"
    "  start();\n"
    "}\n"
)
POEM = (
    "Shall I compare thee to a summer's day?\n"
    "Thou art more lovely and more temperate,\n"
    "Rough winds do shake the darling buds of May,\n"
    "And summer's lease hath all too short a date\n"
)
HEADINGS = "# Setup\nthe tool needs Python\nRESULTS\nwere good\nIntroduction\nThe system has three parts.\n"
WRAPPED_SAMPLES = [EMAIL, PDF, LISTS, CODE, POEM, HEADINGS, EMAIL.replace("\n", "\r\n"), "a\n\u2029b\u2028c"]


BREAK = re.compile("[\r\n\u2028\u2029]")


def sentences(text: str, join: bool = True) -> list[str]:
    return [s.sentence for s in segment_text(text, join) if s.translate]


def test_segments_rebuild_wrapped_text_exactly_either_way():
    for text in SAMPLES + WRAPPED_SAMPLES:
        for join in (True, False):
            segs = segment_text(text, join)
            assert "".join(s.text for s in segs) == text
            for s in segs:
                if s.source is not None:  # a joined sentence: its source span holds the line breaks
                    assert BREAK.search(s.text) and not BREAK.search(s.source)
                    assert s.translate or nothing_to_translate(s.source)  # "b c": single letters are kept


def test_wrapped_email_paragraph_is_joined_into_sentences():
    assert sentences(EMAIL) == [
        "Hi Anna,",
        "Thanks for sending the report.",
        "I read it on the train this morning and I think the section on costs needs another look, because the "
        "figures for the second quarter do not match the ones we agreed on last week.",
        "I also talked to John about it.",  # "to" cannot end a sentence: the capitalised name continues it
        "Best regards,",  # a short salutation line is a line, not a wrap
        "Tom",
    ]


def test_pdf_hyphenated_break_is_joined_without_the_hyphen():
    assert sentences(PDF) == [
        "Machine translation has improved a great deal in recent years, and neural models now produce fluent "
        "output for many language pairs such as English and Chinese, e.g. in news."
    ]
    assert sentences("A well-\nKnown name.") == ["A well-Known name."]  # not a wrap hyphen: kept, no space


def test_joining_can_be_turned_off():
    assert sentences(PDF, join=False)[0] == "Machine trans-"
    assert len(sentences(PDF, join=False)) == 5  # one per line
    assert all("\n" not in s.text for s in segment_text(EMAIL, False) if s.translate)


def test_list_items_stay_separate_and_their_wrapped_lines_join():
    assert sentences(LISTS) == [
        "Before you start:",
        "- download the installer from the website",
        "- restart the computer",
        "* check the version",
        "• open the settings",
        "first step",
        "2) second step",
        "a) one more",
    ]


def test_code_is_kept_line_by_line():
    got = sentences(CODE)
    for line in ("result = compute(alpha,", "beta)", "for item in items", "and more of it"):
        assert line in got
    assert "if (ready) {" in got
    # A line that is only code is its own segment, kept verbatim (engine.text.verbatim), never sent to the model.
    kept = [s.text.strip() for s in segment_text(CODE) if not s.translate]
    assert "print(result)" in kept and "start();" in kept
    assert "print(result)" not in got and "start();" not in got


def test_poetry_and_headings_keep_their_lines():
    assert len(sentences(POEM)) == 4
    assert sentences(HEADINGS) == [
        "# Setup",
        "the tool needs Python",
        "RESULTS",
        "were good",
        "Introduction",
        "The system has three parts.",
    ]


def test_crlf_wrapped_lines_join_and_keep_the_other_breaks():
    text = "This sentence is wrapped\r\nover two lines.\r\nNext one.\r\n\r\nNew paragraph.\r\n"
    segs = segment_text(text)
    assert [s.sentence for s in segs if s.translate] == [
        "This sentence is wrapped over two lines.",
        "Next one.",
        "New paragraph.",
    ]
    assert [s.text for s in segs if not s.translate] == ["\r\n", "\r\n", "\r\n", "\r\n"]


def test_sentences_on_joined_lines_keep_their_gaps():
    segs = segment_text("It rained all day and\nwe stayed in. Then it stopped\nand we left.")
    assert [s.sentence for s in segs if s.translate] == [
        "It rained all day and we stayed in.",
        "Then it stopped and we left.",
    ]
    gap = next(s for s in segs if not s.translate)
    assert gap.text == " " and gap.inline_gap


# -- a Chinese source ---------------------------------------------------------------------------------------------
ZH = Segmentation("zh", spaced=False)
ZH_SAMPLES = [
    "你好。我是学生！",
    "他说：“你好。”然后走了。",
    "等等……我来了。好的！",
    "我用Python写代码。It works. 很好？",
    "价格是3.5元。真的吗？！是的",
    "第一句。  第二句。\n\n第三段",
]


def test_chinese_segments_rebuild_the_text_exactly():
    for text in ZH_SAMPLES:
        for join in (True, False):
            assert "".join(s.text for s in segment_text(text, join, ZH)) == text


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("你好。我是学生！", ["你好。", "我是学生！"]),
        ("他说：“你好。”然后走了。", ["他说：“你好。”", "然后走了。"]),  # the closing quote stays with its sentence
        ("等等……我来了。好的！", ["等等……我来了。", "好的！"]),  # …… is a pause, not an end
        ("我用Python写代码。It works. 很好？", ["我用Python写代码。", "It works.", "很好？"]),  # mixed Latin
        ("价格是3.5元。真的吗？！是的", ["价格是3.5元。", "真的吗？！", "是的"]),  # decimals are not ends
        ("你好吗?我很好!", ["你好吗?", "我很好!"]),  # half-width marks end sentences too
    ],
)
def test_chinese_sentences(text, sentences):
    assert [s.text for s in segment_text(text, True, ZH) if s.translate] == sentences


def test_two_chinese_sentences_have_an_empty_inline_gap_for_the_joiner():
    segs = segment_text("你好。我是学生！", True, ZH)
    assert [(s.text, s.translate, s.inline_gap) for s in segs] == [
        ("你好。", True, False),
        ("", False, True),
        ("我是学生！", True, False),
    ]


def test_segmentation_comes_from_the_pair():
    from engine.languages import default_pair

    assert Segmentation.of(default_pair("zh", "en")) == ZH
    assert Segmentation.of(default_pair("en", "zh")) == Segmentation("en", spaced=True)


LINE = "本办法适用于所有在本市居住的居民以及在本市工作"


def test_wrapped_chinese_lines_join_with_nothing():
    text = f"{LINE}\n的外来人员。"
    segs = segment_text(text, True, ZH)
    assert [s.sentence for s in segs if s.translate] == [f"{LINE}的外来人员。"]
    assert "".join(s.text for s in segs) == text


@pytest.mark.parametrize(
    "text",
    [
        f"第一章 总则\n{LINE}的外来人员。",  # a short heading line keeps its break
        f"{LINE}。\n{LINE}。",  # a line that ends a sentence
        f"一、{LINE}\n二、{LINE}",  # list items
        f"{LINE}\n\n{LINE}",  # paragraphs
    ],
)
def test_chinese_line_breaks_that_are_structure_stay(text):
    segs = segment_text(text, True, ZH)
    assert all(s.source is None for s in segs)  # nothing joined
    assert sum(s.translate for s in segs) == 2


def test_a_chinese_paragraph_wrapped_over_three_lines_joins_into_one_sentence():
    text = f"  {LINE}\n{LINE}\n结束了。"
    segs = segment_text(text, True, ZH)
    assert [s.sentence for s in segs if s.translate] == [f"{LINE}{LINE}结束了。"]


def test_a_break_between_two_latin_words_in_chinese_text_keeps_a_space():
    text = f"{LINE}用Python\nscript写的工具。"
    assert [s.sentence for s in segment_text(text, True, ZH) if s.translate] == [f"{LINE}用Python script写的工具。"]


def test_a_single_line_is_not_classified(monkeypatch):
    """Line kinds only decide joins between lines: one line (a typed sentence, a pasted paragraph) has none to
    decide, so its kind is not worked out (~50 µs a paragraph); two lines still are."""
    from engine.text import wrapping

    line = "The committee will publish its final report on the new railway line early next spring."
    kinds: list[str] = []
    real_kind = wrapping._kind
    monkeypatch.setattr(wrapping, "_kind", lambda content, fence: kinds.append(content) or real_kind(content, fence))
    assert [s.text for s in segment_text(line) if s.translate] == [line]
    assert kinds == []
    assert [s.text for s in segment_text(line + "\nand on.") if s.translate] == [line, "and on."]
    assert kinds == [line, "and on."]
