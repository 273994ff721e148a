"""WebVTT: the header, NOTE, STYLE and REGION blocks, cue identifiers, timings and settings stay byte for byte; cue
text is grouped into sentences as in SRT, with markup and character references kept."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from engine.documents import registry
from engine.documents.formats import vtt
from engine.documents.model import DocumentError
from engine.pipeline.translator import Translator
from tests.engine.documents.text_support import CORPUS, assert_fuzz_safe, identity, mapped, translated, upper

SAMPLE = """\
WEBVTT - Qiao sample
Kind: captions
Language: en

STYLE
::cue(.yellow) { color: yellow }

NOTE This comment is not translated,
even over two lines.

REGION
id:fred width:40% lines:3

intro
00:00:01.000 --> 00:00:03.000 align:start position:10% region:fred
<v Roger>Good morning, everyone!

00:03.500 --> 00:05.000
We are going to

00:05.000 --> 00:08.000 line:0
<c.yellow>Beijing</c> next week.

NOTE
A note between cues.

cue-4
01:00:09.000 --> 01:00:11.000
Tom &amp; Jerry like green tea.

00:00:12.000 --> 00:00:14.000
<00:00:12.000>The museum <00:00:13.000>is closed on Mondays.
"""

ZH = {
    "Good morning, everyone!": "大家早上好！",
    "We are going to Beijing next week.": "我们下周去北京。",
    "Tom & Jerry like green tea.": "Tom & Jerry <喜欢> 绿茶。",
    "The museum is closed on Mondays.": "博物馆周一闭馆。",
}


def test_only_cue_text_becomes_units():
    """Cue tags and timestamps are markup: kept in place, never seen by the model (it read `Beijing</c> next`)."""
    doc = vtt.read(SAMPLE.encode())
    assert [unit.source for unit in doc.units] == list(ZH)
    assert [(run.text, run.fixed, run.markup) for run in doc.units[1].runs] == [
        ("We are going to ", False, False),
        ("Beijing", False, False),
        ("</c>", True, True),
        (" next week.", False, False),
    ]
    assert [(run.text, run.markup) for run in doc.units[3].runs if run.fixed] == [("<00:00:13.000>", True)]
    assert [(run.text, run.fixed) for run in doc.units[2].runs] == [("Tom & Jerry like green tea.", False)]


def test_identity_gives_back_the_same_bytes():
    for data in (
        SAMPLE.encode(),
        codecs.BOM_UTF8 + SAMPLE.replace("\n", "\r\n").encode(),
        SAMPLE.replace("\n", "\r").encode("utf-16"),
    ):
        doc = vtt.read(data)
        assert len(doc.units) == 4
        assert doc.render(identity(doc), target="zh") == data


def test_render_changes_only_cue_text():
    doc = vtt.read(SAMPLE.replace("\n", "\r\n").encode())
    out = doc.render(upper(doc), target="en").decode()
    expected = SAMPLE
    for old, new in [
        ("<v Roger>Good morning, everyone!", "<v Roger>GOOD MORNING, EVERYONE!"),
        ("We are going to\n", "WE ARE GOING TO\n"),
        ("<c.yellow>Beijing</c> next week.", "<c.yellow>BEIJING</c> NEXT WEEK."),
        ("Tom &amp; Jerry like green tea.", "TOM &amp; JERRY LIKE GREEN TEA."),
        ("The museum <00:00:13.000>is closed on Mondays.", "THE MUSEUM <00:00:13.000>IS CLOSED ON MONDAYS."),
    ]:
        assert old in expected
        expected = expected.replace(old, new)
    assert out == expected.replace("\n", "\r\n")


def test_translations_are_escaped_and_markup_kept():
    doc = vtt.read(SAMPLE.encode())
    out = doc.render(mapped(doc, ZH), target="zh").decode()
    assert "<v Roger>大家早上好！\n" in out
    assert "\nTom &amp; Jerry &lt;喜欢&gt; 绿茶。\n" in out
    # Both karaoke times kept, in order (the model dropped them); the translation is shared out around them.
    karaoke = out.split("00:00:12.000 --> 00:00:14.000\n")[1].split("\n")[0]
    assert karaoke.startswith("<00:00:12.000>") and karaoke.count("<00:00:13.000>") == 1
    assert karaoke.replace("<00:00:12.000>", "").replace("<00:00:13.000>", "") == "博物馆周一闭馆。"
    assert "01:00:09.000 --> 01:00:11.000\n" in out
    head = SAMPLE[: SAMPLE.index("intro")]
    assert out.startswith(head + "intro\n00:00:01.000 --> 00:00:03.000 align:start position:10% region:fred\n")
    assert "NOTE\nA note between cues.\n\ncue-4\n" in out
    # the sentence over two cues: both get text, in order
    second = out.split("00:03.500 --> 00:05.000\n")[1].split("\n")[0]
    third = out.split("00:05.000 --> 00:08.000 line:0\n")[1].split("\n")[0]
    assert second and third.startswith("<c.yellow>")
    assert (second + third.removeprefix("<c.yellow>")).replace("</c>", "") == "我们下周去北京。"


@pytest.mark.parametrize(
    "data",
    [
        b"1\n00:00:01,000 --> 00:00:02,000\nThis is SRT.\n",
        b"WEBVTTX\n\n00:01.000 --> 00:02.000\nHi\n",
        b"",
        b"\x00WEBVTT",
    ],
)
def test_what_is_not_webvtt_is_refused(data):
    with pytest.raises(DocumentError):
        vtt.read(data)


def test_malformed_cues_are_left_as_they_are_and_reported():
    data = b"WEBVTT\n\n00:01.000 --> 00:xx\nBroken timing\n\nno timing at all\n\n00:02.000 --> 00:03.000\nFine.\n"
    doc = vtt.read(data)
    assert [unit.source for unit in doc.units] == ["Fine."]
    assert doc.render([["好。"]], target="zh") == data.replace(b"Fine.", "好。".encode())
    assert doc.warnings == (
        "line 3: a cue whose timing cannot be read ('00:01.000 --> 00:xx') was kept as it was, not translated",
        "line 6: text outside any cue ('no timing at all') was kept as it was, not translated",
    )


def test_a_cue_right_after_another_is_a_cue_of_its_own():
    """A timing line inside a cue's block starts the next cue (the spec's parser): it was silently left untranslated."""
    data = b"WEBVTT\n\n00:01.000 --> 00:02.000\nThank you very much.\n00:02.000 --> 00:03.000\nSee you tomorrow.\n"
    doc = vtt.read(data)
    assert [unit.source for unit in doc.units] == ["Thank you very much.", "See you tomorrow."]
    assert doc.warnings == ()


def test_multi_line_and_dialogue_cues_keep_their_lines():
    data = (
        b"WEBVTT\n\n00:01.000 --> 00:04.000\nI do not know\nwhat you mean.\n\n"
        b"00:05.000 --> 00:06.000\n- Where is the train station?\n- Thank you very much.\n"
    )
    doc = vtt.read(data)
    assert [unit.source for unit in doc.units] == [
        "I do not know what you mean.",
        "Where is the train station?",
        "Thank you very much.",
    ]
    out = doc.render([["我不知道你的意思。"], ["火车站在哪里？"], ["非常感谢。"]], target="zh").decode()
    assert "\n我不知道\n你的意思。\n" in out
    assert out.endswith("\n- 火车站在哪里？\n- 非常感谢。\n")


def test_cue_tags_are_placed_by_meaning_in_a_one_cue_sentence():
    """<c.key>, <u> and a timestamp inside one cue: markup the model never sees, put back around the words they
    marked (each run's own translation found in the sentence's, as HTML does)."""
    from engine.documents.inline import distribute, runs_alone

    data = b"WEBVTT\n\n00:01.000 --> 00:02.000\n<v Li>Click <c.key>Save</c> to <00:01.500>keep <u>the file</u>.\n"
    doc = vtt.read(data)
    unit = doc.units[0]
    assert unit.source == "Click Save to keep the file."
    assert [run.text for run in unit.runs if run.markup] == ["<c.key>", "</c>", "<00:01.500>", "<u>", "</u>"]
    own = {"Click ": "点击", "Save": "保存", " to ": "以", "keep ": "保留", "the file": "文件"}
    assert unit.split == "align" and [unit.runs[i].text for i in runs_alone(unit)] == list(own)
    hints = [own.get(run.text) if not run.fixed else None for run in unit.runs]
    out = doc.render([distribute(unit, "点击保存以保留文件。", hints)], target="zh").decode()
    assert out.endswith("\n<v Li>点击<c.key>保存</c>以<00:01.500>保留<u>文件</u>。\n")


def test_the_registry_finds_it():
    assert registry.for_path(Path("talk.vtt")) is vtt.FORMAT


def test_fuzzed_input_is_refused_or_read_never_a_crash():
    assert assert_fuzz_safe(vtt.read, SAMPLE.encode(), seed=4) > 20


@pytest.fixture(scope="module")
def en_zh(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def test_end_to_end_with_the_tiny_model(en_zh):
    data = (
        b"WEBVTT\n\nNOTE made for the test\n\n"
        b"1\n00:00:01.000 --> 00:00:02.500\n<v Li>Nice to meet you.\n\n"
        b"2\n00:00:03.000 --> 00:00:04.000 align:end\nMy name is\n\n"
        b"3\n00:00:04.000 --> 00:00:05.000\nLi Ming.\n"
    )
    doc = vtt.read(data)
    out = doc.render(translated(doc, en_zh), target="zh").decode()
    assert out.startswith("WEBVTT\n\nNOTE made for the test\n\n1\n00:00:01.000 --> 00:00:02.500\n")
    assert f"<v Li>{CORPUS['Nice to meet you.']}\n" in out
    second = out.split("align:end\n")[1].split("\n")[0]
    third = out.split("00:00:04.000 --> 00:00:05.000\n")[1].split("\n")[0]
    assert second and third and second + third == CORPUS["My name is Li Ming."]
