"""Plain text: paragraphs are the units, and everything around them — encoding, BOM, line endings, indentation,
blank lines — comes back exactly as it was."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from engine.documents import registry
from engine.documents.formats import txt
from engine.documents.formats._textcodec import decode
from engine.documents.model import DocumentError
from engine.pipeline.translator import Translator
from tests.engine.documents.text_support import CORPUS, assert_fuzz_safe, identity, translated, upper

LETTER = (
    "Dear team,\n"
    "\n"
    "    The meeting starts at 3 o'clock.\n"
    "Please print this document   \n"
    "before you come.  \n"
    "\n"
    "\n"
    "\tThe printer is not working.\n"
    "   \n"
    "Thanks for your help, see you soon!"
)


def test_paragraphs_are_units_and_a_wrapped_paragraph_is_one():
    doc = txt.read(LETTER.encode())
    assert [unit.source for unit in doc.units] == [
        "Dear team,",
        "The meeting starts at 3 o'clock.\nPlease print this document   \nbefore you come.",
        "The printer is not working.",
        "Thanks for your help, see you soon!",
    ]
    assert all(len(unit.runs) == 1 and not unit.runs[0].fixed for unit in doc.units)


def test_render_changes_only_the_paragraphs():
    doc = txt.read(LETTER.encode())
    assert doc.render(upper(doc), target="zh").decode() == (
        "DEAR TEAM,\n"
        "\n"
        "    THE MEETING STARTS AT 3 O'CLOCK.\n"
        "PLEASE PRINT THIS DOCUMENT   \n"
        "BEFORE YOU COME.  \n"
        "\n"
        "\n"
        "\tTHE PRINTER IS NOT WORKING.\n"
        "   \n"
        "THANKS FOR YOUR HELP, SEE YOU SOON!"
    )


def test_untranslated_units_stay_and_wrong_shapes_are_refused():
    doc = txt.read(LETTER.encode())
    new = [None, ["会议3点开始。请打印这份文件。"], None, None]
    out = doc.render(new, target="zh").decode()
    assert out == LETTER.replace(doc.units[1].source, "会议3点开始。请打印这份文件。")
    with pytest.raises(DocumentError):
        doc.render(new[:2], target="zh")
    with pytest.raises(DocumentError):
        doc.render([None, ["a", "b"], None, None], target="zh")


def test_a_file_without_blank_lines_is_cut_where_paragraphs_may_end():
    novel = "".join("　　我喜欢绿茶。今天在下雨，\r\n火车站在哪里？\r\n" for _ in range(30))  # 60 lines, no blank one
    doc = txt.read(novel.encode("gb18030"))
    assert [unit.source for unit in doc.units] == ["我喜欢绿茶。今天在下雨，\r\n火车站在哪里？"] * 30
    assert doc.render(identity(doc), target="en") == novel.encode("gb18030")
    short = "One wrapped line\nthat goes on.\nAnother sentence.\n"  # a normal block stays one unit
    assert [unit.source for unit in txt.read(short.encode()).units] == [short.strip()]


def test_a_book_on_one_line_is_cut_after_its_sentences():
    """Issue 27: a 5 MB one-paragraph .txt was one unit over the engine's 1,000,000-character limit, refused whole
    (the result was a copy of the English). It is cut into units of at most MAX_UNIT_CHARS after sentences, the
    blanks between them kept as they were."""
    text = ("The quick brown fox jumps over the lazy dog. " * 120_000).strip()  # 5.4 MB, one line
    doc = txt.read(text.encode())
    assert len(doc.units) > 1000 and all(len(unit.source) <= txt.MAX_UNIT_CHARS for unit in doc.units)
    assert all(unit.source.endswith("dog.") and unit.source.startswith("The") for unit in doc.units)
    assert doc.render(identity(doc), target="zh") == text.encode()
    assert doc.render(upper(doc), target="en") == text.upper().encode()
    chinese = "我们下周去北京。" * 2000  # no blanks between sentences: none is added or lost
    doc = txt.read(chinese.encode())
    assert len(doc.units) == 4 and "".join(unit.source for unit in doc.units) == chinese
    for text in ("word " * 5000, "x" * 9000):  # no sentence end: after a blank, else at the limit
        doc = txt.read(text.encode())
        assert all(len(unit.source) <= txt.MAX_UNIT_CHARS for unit in doc.units)
        assert doc.render(identity(doc), target="zh") == text.encode()


def test_line_endings_of_every_kind_are_kept():
    source = "First line\r\nwraps on.\r\n\r\nOld Mac\rparagraph.\r\rUnix one.\n\nLast, no newline"
    doc = txt.read(source.encode())
    assert [unit.source for unit in doc.units] == [
        "First line\r\nwraps on.",
        "Old Mac\rparagraph.",
        "Unix one.",
        "Last, no newline",
    ]
    assert doc.render(identity(doc), target="zh") == source.encode()
    out = doc.render(upper(doc), target="zh").decode()
    assert out == "FIRST LINE\r\nWRAPS ON.\r\n\r\nOLD MAC\rPARAGRAPH.\r\rUNIX ONE.\n\nLAST, NO NEWLINE"


def test_line_breaks_in_a_translation_use_the_paragraphs_own_ending():
    doc = txt.read(b"One.\r\nTwo.\r\n\r\nThree.\r\n")
    out = doc.render([["Eins.\nZwei."], ["Drei\r\nund\rvier."]], target="en")
    assert out == b"Eins.\r\nZwei.\r\n\r\nDrei\r\nund\r\nvier.\r\n"


SAMPLE = "第一章 总则\r\n\r\n我喜欢绿茶。今天在下雨。\r\n火车站在哪里？\r\n"
BIG5_SAMPLE = "第一章 總則\r\n\r\n我喜歡綠茶。今天在下雨。\r\n火車站在哪裡？這本書多少錢？\r\n"


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [
        ("utf-8", b""),
        ("utf-8", codecs.BOM_UTF8),
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-32-le", codecs.BOM_UTF32_LE),
        ("utf-32-be", codecs.BOM_UTF32_BE),
        ("gb18030", b""),
        ("big5", b""),
    ],
)
def test_encodings_are_detected_kept_and_round_trip(encoding, bom):
    source = SAMPLE if encoding != "big5" else BIG5_SAMPLE
    data = bom + source.encode(encoding)
    doc = txt.read(data)
    assert doc.units[0].source in ("第一章 总则", "第一章 總則")
    assert doc.render(identity(doc), target="en") == data
    out = doc.render([["Chapter 1"], ["I like green tea."]], target="en")
    assert out.startswith(bom)
    assert out[len(bom) :].decode(encoding) == "Chapter 1\r\n\r\nI like green tea.\r\n"


def test_cp1252_stays_cp1252_until_the_translation_needs_more():
    source = "Caf\u00e9 \u201cMonde\u201d is open, na\u00efve r\u00e9sum\u00e9 \u2014 \u00a9 2024.\r\n\r\n"
    source += "The soup is too salty.\r\n"
    data = source.encode("cp1252")
    doc = txt.read(data)
    assert decode(data).encoding == "cp1252"
    assert doc.units[0].source == "Caf\u00e9 \u201cMonde\u201d is open, na\u00efve r\u00e9sum\u00e9 \u2014 \u00a9 2024."
    assert doc.render(identity(doc), target="en") == data
    english = doc.render(upper(doc), target="en")
    assert english == source.upper().encode("cp1252")
    # Chinese cannot be written in cp1252: the whole file becomes UTF-8 (no BOM), the untouched text included.
    chinese = doc.render([None, ["汤太咸了。"]], target="zh")
    assert not chinese.startswith(codecs.BOM_UTF8)
    assert chinese.decode("utf-8") == source.replace("The soup is too salty.", "汤太咸了。")


def test_a_bom_is_kept_even_where_the_text_is_ascii():
    data = codecs.BOM_UTF8 + b"Hello, how are you?\n"
    doc = txt.read(data)
    assert doc.render([["你好，你最近怎么样？"]], target="zh") == codecs.BOM_UTF8 + "你好，你最近怎么样？\n".encode()


@pytest.mark.parametrize(
    "data",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00",
        b"text with a NUL\x00 inside",
        codecs.BOM_UTF16_LE + "odd".encode("utf-16-le") + b"\x00",  # truncated mid-character
        codecs.BOM_UTF8 + b"\xff\xfe broken",
        bytes(range(1, 32)) * 20,  # control characters
    ],
)
def test_binary_and_damaged_files_are_refused(data):
    with pytest.raises(DocumentError):
        txt.read(data)


def test_empty_and_blank_files_have_no_units():
    for data in (b"", b"\n\n  \r\n\t\n"):
        doc = txt.read(data)
        assert doc.units == ()
        assert doc.render([], target="zh") == data


def test_the_registry_finds_it():
    assert registry.for_path(Path("notes.TXT")) is txt.FORMAT
    assert registry.get("txt").read is txt.read


def test_fuzzed_input_is_refused_or_read_never_a_crash():
    valid = ("\ufeff" + LETTER.replace("\n", "\r\n") + "\n\n" + SAMPLE).encode("utf-8")
    assert assert_fuzz_safe(txt.read, valid, seed=1) > 20


@pytest.fixture(scope="module")
def en_zh(bundle_dir):
    return Translator(bundle_dir, precision="fp32", threads=1)


def test_end_to_end_with_the_tiny_model(en_zh):
    sentences = [
        "Good morning, everyone!",
        "The weather is very nice.",
        "Please open the window.",
        "I am learning Chinese.",
    ]
    source = "\r\n\r\n".join(["  " + sentences[0], *sentences[1:]]) + "\r\n"
    doc = txt.read(source.encode("utf-16"))
    out = doc.render(translated(doc, en_zh), target="zh").decode("utf-16")
    expected = "\r\n\r\n".join(["  " + CORPUS[sentences[0]], *(CORPUS[s] for s in sentences[1:])]) + "\r\n"
    assert out == expected


def test_end_to_end_zh_to_en_keeps_gb18030(zh_en_bundle_dir):
    zh_en = Translator(zh_en_bundle_dir, precision="fp32", threads=1)
    data = "我喜欢绿茶。\r\n\r\n　　今天在下雨。\r\n".encode("gb18030")
    doc = txt.read(data)
    out = doc.render(translated(doc, zh_en), target="en")
    assert out == "I like green tea.\r\n\r\n　　It is raining today.\r\n".encode("gb18030")
