"""SubRip subtitles: numbers and timings kept exactly, a sentence over several cues translated as one and shared
back among them, markup kept around the text, long lines re-wrapped."""

from __future__ import annotations

import codecs
import unicodedata
from pathlib import Path

import pytest
import srt as srt_lib

from engine.documents import registry
from engine.documents.formats import srt
from engine.documents.model import DocumentError
from engine.pipeline.translator import Translator
from tests.engine.documents.text_support import CORPUS, assert_fuzz_safe, identity, mapped, translated, upper

TEN = """\
1
00:00:01,000 --> 00:00:03,000
Good morning, everyone!

2
00:00:03,500 --> 00:00:05,000
We are going to

3
00:00:05,000 --> 00:00:06,200
Beijing

4
00:00:06,200 --> 00:00:08,000
next week.

5
00:00:09,000 --> 00:00:11,000
<i>This coffee costs</i>
<i>5 dollars.</i>

6
00:00:12,000 --> 00:00:14,000 X1:100 X2:600 Y1:50 Y2:80
{\\an8}The museum is closed on Mondays.

7
00:00:15,000 --> 00:00:16,000
♪ ♪

8
00:00:17,000 --> 00:00:18,500
The children are playing

9
00:00:18,500 --> 00:00:20,000
in the park.

10
00:00:20.500 --> 00:00:23,000
Thanks for your help, see you soon!
"""

ZH = {
    "Good morning, everyone!": "大家早上好！",
    "We are going to Beijing next week.": "我们下周去北京。",
    "This coffee costs 5 dollars.": "这杯咖啡要5美元。",
    "The museum is closed on Mondays.": "博物馆周一闭馆。",
    "The children are playing in the park.": "孩子们在公园里玩。",
    "Thanks for your help, see you soon!": "谢谢你的帮助，回头见！",
}


def cue_texts(data: bytes) -> list[str]:
    return [sub.content for sub in srt_lib.parse(data.decode("utf-8-sig"))]


def timings(data: bytes) -> list[tuple]:
    return [(sub.index, sub.start, sub.end, sub.proprietary) for sub in srt_lib.parse(data.decode("utf-8-sig"))]


def width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def test_cues_are_grouped_into_sentences():
    doc = srt.read(TEN.encode())
    assert [unit.source for unit in doc.units] == list(ZH)
    # a sentence over several cues is shared by length (each cue keeps its part); a one-cue sentence by meaning
    assert [unit.split for unit in doc.units] == ["align", "length", "align", "align", "length", "align"]
    # one run per cue (inner markup aside): the three cues of the second sentence
    assert [run.text for run in doc.units[1].runs] == ["We are going to ", "Beijing ", "next week."]
    # italics closed and opened again at the line break: the translator sees one clean line
    assert [(run.text, run.fixed) for run in doc.units[2].runs] == [("This coffee costs 5 dollars.", False)]


def test_identity_gives_back_the_same_bytes():
    for data in (TEN.encode(), codecs.BOM_UTF8 + TEN.replace("\n", "\r\n").encode(), TEN.encode("utf-16")):
        doc = srt.read(data)
        assert len(doc.units) == 6
        assert doc.render(identity(doc), target="zh") == data


def test_render_changes_only_cue_text():
    doc = srt.read(TEN.encode())
    out = doc.render(upper(doc), target="en").decode()
    expected = TEN
    for old, new in [
        ("Good morning, everyone!", "GOOD MORNING, EVERYONE!"),
        ("We are going to", "WE ARE GOING TO"),
        ("Beijing", "BEIJING"),
        ("next week.", "NEXT WEEK."),
        # rewritten cues are re-wrapped: this one fits on one line, in one pair of italics
        ("<i>This coffee costs</i>\n<i>5 dollars.</i>", "<i>THIS COFFEE\nCOSTS 5 DOLLARS.</i>"),
        ("{\\an8}The museum is closed on Mondays.", "{\\an8}THE MUSEUM IS CLOSED ON MONDAYS."),
        ("The children are playing", "THE CHILDREN ARE PLAYING"),
        ("in the park.", "IN THE PARK."),
        ("Thanks for your help, see you soon!", "THANKS FOR YOUR HELP, SEE YOU SOON!"),
    ]:
        assert old in expected
        expected = expected.replace(old, new)
    assert out == expected


def test_a_sentence_over_three_cues_is_shared_among_them():
    doc = srt.read(TEN.encode())
    out = doc.render(mapped(doc, ZH), target="zh")
    texts = cue_texts(out)
    assert texts[1:4] == ["我们下周", "去北", "京。"]
    assert texts[0] == "大家早上好！"
    assert texts[4] == "<i>这杯咖啡\n要5美元。</i>"  # two lines in, two lines out
    assert texts[5] == "{\\an8}博物馆周一闭馆。"
    assert texts[6] == "♪ ♪"
    assert "".join(texts[7:9]) == "孩子们在公园里玩。" and all(texts[7:9])
    assert timings(out) == timings(TEN.encode())
    assert "00:00:20.500 --> 00:00:23,000" in out.decode()  # written as it was, not as srt.compose would


def test_srt_compose_would_not_give_the_file_back():
    # why rendering splices instead of composing: the library rewrites what it parsed
    assert srt_lib.compose(list(srt_lib.parse(TEN))) != TEN


def test_chinese_cues_are_joined_without_a_space():
    data = "1\n00:00:01,000 --> 00:00:02,000\n我们下周\n\n2\n00:00:02,000 --> 00:00:03,000\n去北京。\n".encode()
    doc = srt.read(data)
    assert [unit.source for unit in doc.units] == ["我们下周去北京。"]
    out = doc.render([["We are going to", "Beijing next week."]], target="en")
    assert cue_texts(out) == ["We are going to", "Beijing next week."]


def test_long_translations_are_wrapped_into_two_lines():
    doc = srt.read(TEN.encode())
    for long_zh, first_ends in [
        ("请在晚上6点以后给我打电话，我会给你发一封电子邮件。", "，"),  # broken after the comma
        ("这座桥建于1937年，这条河流经老城区，上海的夏天又热又潮湿。", None),  # no comma fits: between characters
    ]:
        new = [None] * len(doc.units)
        new[3] = [long_zh]
        lines = cue_texts(doc.render(new, target="zh"))[5].split("\n")
        assert len(lines) == 2
        assert lines[0].startswith("{\\an8}")
        lines[0] = lines[0].removeprefix("{\\an8}")
        assert "".join(lines) == long_zh
        assert all(width(line) <= 32 for line in lines)
        if first_ends:
            assert lines[0].endswith(first_ends)
    english = [None] * len(doc.units)
    english[0] = ["Good morning to every one of you, and welcome to the museum of the city."]
    first = cue_texts(doc.render(english, target="en"))[0].split("\n")
    assert len(first) == 2 and all(len(line) <= 42 for line in first)
    assert " ".join(first) == english[0][0]


def test_no_cue_is_left_empty():
    doc = srt.read(TEN.encode())
    new = [None] * len(doc.units)
    new[1] = ["我们下周去北京。", "", ""]
    texts = cue_texts(doc.render(new, target="zh"))
    assert all(texts[1:4]) and "".join(texts[1:4]) == "我们下周去北京。"
    new[1] = ["", " ", ""]  # nothing came back: the cues keep their text rather than go blank
    assert doc.render(new, target="zh") == TEN.encode()
    new[1] = ["好", "", ""]  # too short to share: the cues left without text keep theirs
    assert cue_texts(doc.render(new, target="zh"))[1:4] == ["好", "Beijing", "next week."]


def test_a_long_pause_ends_a_sentence():
    data = b"1\n00:00:01,000 --> 00:00:02,000\nI was going\n\n2\n00:00:09,000 --> 00:00:10,000\nhome\n"
    assert [unit.source for unit in srt.read(data).units] == ["I was going", "home"]


@pytest.mark.parametrize(
    "data",
    [
        b"Just some text, not subtitles.\n",
        b"1\n00:00:01,000 -> 00:00:02,000\nBroken arrow\n",
        b"\x00\x01\x02\x03",
    ],
)
def test_what_is_not_srt_is_refused(data):
    with pytest.raises(DocumentError):
        srt.read(data)


STRAY = """\
1
00:00:01,000 --> 00:00:02,000
Good morning, everyone!

This line is not in any cue.

2
00:00:03,000 --> 00:00:04,000
Thank you very much.
"""


def test_a_stray_line_is_kept_in_place_reported_and_never_given_to_a_cue():
    """Issue 27: the srt library put the stray line into cue 1 (it ends at a blank line), so it was joined, shared out
    by length into cue 2 and deleted from its place, with exit 0."""
    doc = srt.read(STRAY.encode())
    assert [unit.source for unit in doc.units] == ["Good morning, everyone!", "Thank you very much."]
    assert doc.warnings == (
        "line 5: text outside any cue ('This line is not in any cue.') was kept as it was, not translated",
    )
    out = doc.render([["大家早上好！"], ["非常感谢。"]], target="zh").decode()
    assert out == STRAY.replace("Good morning, everyone!", "大家早上好！").replace("Thank you very much.", "非常感谢。")
    assert cue_texts(out.encode())[1] == "非常感谢。"


def test_a_stray_line_stops_a_sentence_from_running_on():
    data = STRAY.replace("Good morning, everyone!", "We are going to").encode()
    assert [unit.source for unit in srt.read(data).units] == ["We are going to", "Thank you very much."]


def test_a_damaged_timing_is_kept_verbatim_with_its_text():
    damaged = TEN[:-200] + "\n\ngarbage between cues\n\n" + TEN[-200:]  # cuts cue 7's timing in two
    doc = srt.read(damaged.encode())
    assert len(doc.units) == 6 and doc.warnings
    assert all("kept as it was" in w for w in doc.warnings)
    assert "garbage between cues" in doc.warnings[0]
    out = doc.render(upper(doc), target="en").decode()
    assert "7\n00:00:15\n\ngarbage between cues\n\n,000 --> 00:00:16,000\n♪ ♪" in out  # byte for byte
    assert "THE CHILDREN ARE PLAYING" in out and "garbage between cues" in out


def test_many_stray_places_are_counted_not_listed():
    data = "".join(f"{i}\n00:00:{i:02d},000 --> 00:00:{i:02d},500\nCue {i}.\n\nstray {i}\n\n" for i in range(1, 16))
    warnings = srt.read(data.encode()).warnings
    assert len(warnings) == 11 and "5 more" in warnings[-1]


def test_multi_line_cues_keep_their_line_count():
    """Issue 27: a cue's lines were joined into one."""
    data = (
        b"1\n00:00:01,000 --> 00:00:04,000\nI do not know\nwhat you mean.\n\n"
        b"2\n00:00:05,000 --> 00:00:09,000\nThree lines of text\nin this one cue\nfor a test.\n\n"
        b"3\n00:00:10,000 --> 00:00:11,000\nOne line.\n"
    )
    doc = srt.read(data)
    assert [unit.source for unit in doc.units] == [
        "I do not know what you mean.",  # translated as one text
        "Three lines of text in this one cue for a test.",
        "One line.",
    ]
    out = doc.render([["我不知道你的意思。"], ["这个字幕里有三行文字用于测试。"], ["一行。"]], target="zh")
    texts = cue_texts(out)
    assert texts[0].split("\n") == ["我不知道", "你的意思。"]
    assert len(texts[1].split("\n")) == 3 and texts[1].replace("\n", "") == "这个字幕里有三行文字用于测试。"
    assert texts[2] == "一行。"
    english = cue_texts(srt.read(out).render([["I do not know what you mean."], None, None], target="en"))
    assert english[0] == "I do not know\nwhat you mean."


def test_a_cue_is_re_broken_after_punctuation_rather_than_inside_a_word():
    """Issue 27 item 5: 'I like green tea.' / 'See you tomorrow.' came back as 我喜欢绿 / 茶。明天见。 (the even
    widths alone; 绿茶 is one word)."""
    data = b"1\n00:00:04,000 --> 00:00:06,000\nI like green tea.\nSee you tomorrow.\n"
    assert cue_texts(srt.read(data).render([["我喜欢绿茶。明天见。"]], target="zh")) == ["我喜欢绿茶。\n明天见。"]


def test_a_short_translation_is_not_broken_into_tiny_lines():
    data = b"1\n00:00:01,000 --> 00:00:02,000\nYes, I\nthink so.\n"
    assert cue_texts(srt.read(data).render([["是的。"]], target="zh")) == ["是的。"]


DIALOGUE = """\
1
00:00:01,000 --> 00:00:03,000
- Where is the train station?
- Thank you very much.

2
00:00:04,000 --> 00:00:06,000
<i>-Good morning, everyone!</i>
<i>-See you tomorrow.</i>

3
00:00:07,000 --> 00:00:08,000
-5 degrees outside
"""


def test_dialogue_lines_are_separate_texts_each_on_its_own_line_after_its_dash():
    """Issue 27: '- A' / '- B' was one line '- A - B' and one text for the model."""
    doc = srt.read(DIALOGUE.encode())
    assert [unit.source for unit in doc.units] == [
        "Where is the train station?",
        "Thank you very much.",
        "Good morning, everyone!",
        "See you tomorrow.",
        "-5 degrees outside",  # a minus, not a speaker's dash
    ]
    new = [[CORPUS[unit.source]] if unit.source in CORPUS else None for unit in doc.units]
    texts = cue_texts(doc.render(new, target="zh"))
    assert texts[0] == f"- {CORPUS['Where is the train station?']}\n- {CORPUS['Thank you very much.']}"
    assert texts[1] == f"<i>-{CORPUS['Good morning, everyone!']}</i>\n<i>-{CORPUS['See you tomorrow.']}</i>"
    assert doc.render(identity(doc), target="zh") == DIALOGUE.encode()


def test_a_dialogue_cue_is_not_grouped_with_its_neighbours():
    data = (
        b"1\n00:00:01,000 --> 00:00:02,000\nI was going to\n\n"
        b"2\n00:00:02,000 --> 00:00:03,000\n- the station\n- and you\n\n"
        b"3\n00:00:03,000 --> 00:00:04,000\nwere not there\n"
    )
    assert [unit.source for unit in srt.read(data).units] == [
        "I was going to",
        "the station",
        "and you",
        "were not there",
    ]


TAGS = (
    "1\n00:00:01,000 --> 00:00:02,000\nThe <b>computer</b> is on the <i>desk</i>.\n\n"
    '2\n00:00:03,000 --> 00:00:04,000\nWe are going to <font color="#ffff00">Beijing</font>\n\n'
    "3\n00:00:04,000 --> 00:00:05,000\nnext week.\n\n"
    "4\n00:00:06,000 --> 00:00:07,000\nI <3 green tea > coffee.\n"
)


def test_tags_inside_a_cue_are_markup_the_model_never_sees():
    """Issue 27 item 3: `<b>`, `<i>` and `<font>` reached the model as text (a fixed run it read as context)."""
    doc = srt.read(TAGS.encode())
    assert [unit.source for unit in doc.units] == [
        "The computer is on the desk.",
        "We are going to Beijing next week.",
        "I <3 green tea > coffee.",  # not a tag: text the model reads, kept verbatim
    ]
    assert [run.text for run in doc.units[0].runs if run.markup] == ["<b>", "</b>", "<i>", "</i>"]
    assert [run.text for run in doc.units[1].runs if run.markup] == ['<font color="#ffff00">']  # </font>: the cue's end
    assert [(run.text, run.markup) for run in doc.units[2].runs if run.fixed] == [("<3 green tea >", False)]
    assert doc.render(identity(doc), target="zh") == TAGS.encode()
    texts = cue_texts(doc.render(mapped(doc, {"We are going to Beijing next week.": "我们下周去北京。"}), target="zh"))
    assert texts[1].replace('<font color="#ffff00">', "").replace("</font>", "") + texts[2] == "我们下周去北京。"
    assert texts[1].startswith("我们") and texts[1].endswith("</font>") and texts[2]


def test_bold_lands_on_the_word_it_was_on_in_a_one_cue_sentence():
    """A one-cue sentence is shared by meaning, as HTML is: each tagged word's own translation is found in the
    sentence's (by length the bold took 保 and left 存 outside)."""
    from engine.documents.inline import distribute, runs_alone

    doc = srt.read(b"1\n00:00:01,000 --> 00:00:02,000\nClick <b>Save</b> to keep the file.\n")
    unit = doc.units[0]
    own = {"Click ": "点击", "Save": "保存", " to keep the file.": "保留文件。"}
    assert unit.split == "align" and [unit.runs[i].text for i in runs_alone(unit)] == list(own)
    hints = [own.get(run.text) if not run.fixed else None for run in unit.runs]
    out = doc.render([distribute(unit, "点击保存以保留文件。", hints)], target="zh")
    assert cue_texts(out) == ["点击<b>保存</b>以保留文件。"]


def test_the_job_reports_what_it_kept_and_writes_it_back(tmp_path):
    from engine.documents.job import DocumentJob, DocumentOptions
    from engine.options import TranslationOptions
    from tests.engine.documents.fakes import SpyTranslator

    source = tmp_path / "film.srt"
    source.write_text(STRAY, encoding="utf-8")
    result = DocumentJob(source, DocumentOptions(), TranslationOptions(), target_lang="zh").run(SpyTranslator())
    assert result.error is None and not result.partial
    assert result.warnings == srt.read(STRAY.encode()).warnings
    assert "This line is not in any cue." in result.output.read_text(encoding="utf-8")


def test_an_empty_file_has_no_units():
    doc = srt.read(b"")
    assert doc.units == () and doc.render([], target="zh") == b""


def test_the_registry_finds_it():
    assert registry.for_path(Path("film.SRT")) is srt.FORMAT


def test_fuzzed_input_is_refused_or_read_never_a_crash():
    assert assert_fuzz_safe(srt.read, TEN.encode(), seed=3) > 10


@pytest.fixture(scope="module")
def en_zh(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def test_end_to_end_with_the_tiny_model(en_zh):
    data = (
        b"1\r\n00:00:01,000 --> 00:00:02,500\r\nGood morning, everyone!\r\n\r\n"
        b"2\r\n00:00:03,000 --> 00:00:04,000\r\nThe children are playing\r\n\r\n"
        b"3\r\n00:00:04,000 --> 00:00:05,500\r\nin the park.\r\n\r\n"
        b"4\r\n00:00:06,000 --> 00:00:08,000\r\n<i>See you tomorrow.</i>\r\n"
    )
    doc = srt.read(data)
    out = doc.render(translated(doc, en_zh), target="zh")
    texts = cue_texts(out)
    assert texts[0] == CORPUS["Good morning, everyone!"]
    assert "".join(texts[1:3]) == CORPUS["The children are playing in the park."] and all(texts[1:3])
    assert texts[3] == f"<i>{CORPUS['See you tomorrow.']}</i>"
    assert timings(out) == timings(data)
    assert out.count(b"\r\n") == data.count(b"\r\n")


def test_dialogue_end_to_end_with_the_tiny_model(en_zh):
    data = b"1\n00:00:01,000 --> 00:00:03,000\n- Good morning, everyone!\n- See you tomorrow.\n"
    doc = srt.read(data)
    texts = cue_texts(doc.render(translated(doc, en_zh), target="zh"))
    assert texts == [f"- {CORPUS['Good morning, everyone!']}\n- {CORPUS['See you tomorrow.']}"]
