"""Word documents as pandoc and LibreOffice write them (issue 27): runs split at every space do not split the inline
model, code stays code, and images' alt texts are translated."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import docx as docx_lib
import pytest

from engine.documents.formats import docx
from engine.documents.inline import distribute, runs_alone
from tests.engine.documents.producer_shapes import (
    BOLD,
    ITALIC,
    LIBREOFFICE_STYLES,
    make_docx,
    pandoc_image,
    pandoc_link,
    pandoc_paragraph,
    pandoc_run,
    pandoc_words,
)

SENTENCE = pandoc_paragraph(
    pandoc_words("The ")
    + pandoc_run("computer", BOLD)
    + pandoc_words(" is on the ")
    + pandoc_run("desk", ITALIC)
    + pandoc_run(".")
)
LINKED = pandoc_paragraph(pandoc_words("Please open ") + pandoc_link("the window") + pandoc_run("."))
CODE_BLOCK = pandoc_paragraph(
    '<w:r><w:rPr><w:rStyle w:val="KeywordTok" /></w:rPr><w:t xml:space="preserve">def</w:t></w:r>'
    '<w:r><w:rPr><w:rStyle w:val="NormalTok" /></w:rPr><w:t xml:space="preserve"> hello():</w:t></w:r>'
    "<w:r><w:br /></w:r>"
    '<w:r><w:rPr><w:rStyle w:val="NormalTok" /></w:rPr><w:t xml:space="preserve">    print(&quot;Hello world&quot;)'
    "</w:t></w:r>",
    style="SourceCode",
)
INLINE_CODE = pandoc_paragraph(
    pandoc_words("Use ") + pandoc_run("print()", '<w:rStyle w:val="VerbatimChar" />') + pandoc_words(" to print.")
)


def runs(unit) -> list[tuple[str, bool]]:
    return [(run.text, run.fixed) for run in unit.runs]


def test_pandocs_space_runs_do_not_split_the_sentence():
    doc = docx.read(make_docx(SENTENCE + LINKED))
    # Before: The|" "|computer|" "|is on the|" "|desk|. and Please|" "|open|" "|the|" "|window|. — every word a run
    # of its own (the link's three runs among eight), so the link's share of the translation could be empty.
    assert runs(doc.units[0]) == [
        ("The ", False),
        ("computer", False),
        (" is on the ", False),
        ("desk", False),
        (".", False),
    ]
    assert runs(doc.units[1]) == [("Please open ", False), ("the window", False), (".", False)]
    assert doc.units[0].source == "The computer is on the desk."


def test_merged_runs_write_their_text_to_the_first_and_empty_the_others():
    data = make_docx(LINKED)
    doc = docx.read(data)
    out = doc.render([["请打开", "窗口", "。"]], target="zh")
    body = zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml").decode()
    texts = re.findall(r"<w:t[^>]*>([^<]*)</w:t>", body)
    assert texts == ["请打开", "", "", "", "窗口", "", "", "。"]
    paragraph = docx_lib.Document(io.BytesIO(out)).paragraphs[0]
    assert paragraph.text == "请打开窗口。"
    assert [link.text for link in paragraph.hyperlinks] == ["窗口"]
    assert docx_lib.Document(io.BytesIO(out)).paragraphs[0].hyperlinks[0].address == "https://example.com/docs"


def test_runs_merge_only_with_identical_formatting_and_nothing_between():
    body = pandoc_paragraph(
        pandoc_run("one", BOLD)
        + pandoc_run(" two", BOLD)  # merged: same formatting, next to each other
        + '<w:proofErr w:type="spellStart"/>'
        + pandoc_run(" three", BOLD)  # merged: a spelling mark between runs is not formatting
        + '<w:bookmarkStart w:id="1" w:name="x"/>'
        + pandoc_run(" four", BOLD)  # kept apart: a bookmark starts between them
        + pandoc_run(" five", "<w:b />")  # kept apart: other formatting
        + "<w:r><w:tab/></w:r>"
        + pandoc_run("six")
        + pandoc_run(" seven")
    )
    doc = docx.read(make_docx(body))
    assert runs(doc.units[0]) == [
        ("one two three", False),
        (" four", False),
        (" five", False),
        ("\t", True),
        ("six seven", False),
    ]


def test_code_in_pandocs_styles_is_kept():
    data = make_docx(CODE_BLOCK + INLINE_CODE)
    doc = docx.read(data)
    # The "Source Code" paragraph is no unit at all; the "Verbatim Char" run is fixed (context for the model).
    assert [unit.source for unit in doc.units] == ["Use print() to print."]
    assert runs(doc.units[0]) == [("Use ", False), ("print()", True), (" to print.", False)]
    out = doc.render([distribute(doc.units[0], "用print()打印。")], target="zh")
    paragraphs = docx_lib.Document(io.BytesIO(out)).paragraphs
    assert paragraphs[0].text == 'def hello():\n    print("Hello world")'
    assert [run.text for run in paragraphs[1].runs if run.text] == ["用", "print()", "打印。"]


def test_code_in_libreoffices_styles_and_monospace_fonts_is_kept():
    body = (
        '<w:p><w:pPr><w:pStyle w:val="PreformattedText"/></w:pPr><w:r><w:rPr><w:rStyle w:val="SourceText"/>'
        "</w:rPr><w:t>def hello():</w:t></w:r></w:p>"
        '<w:p><w:pPr><w:pStyle w:val="TextBody"/></w:pPr><w:r><w:rPr></w:rPr><w:t xml:space="preserve">Use </w:t>'
        '</w:r><w:r><w:rPr><w:rStyle w:val="SourceText"/></w:rPr><w:t>print()</w:t></w:r><w:r><w:rPr></w:rPr>'
        '<w:t xml:space="preserve"> or </w:t></w:r><w:r><w:rPr><w:rFonts w:ascii="Courier New" w:hAnsi="Courier New"/>'
        '</w:rPr><w:t>echo</w:t></w:r><w:r><w:rPr><w:rFonts w:ascii="Liberation Mono" w:hAnsi="Liberation Mono"/>'
        '</w:rPr><w:t xml:space="preserve"> hi</w:t></w:r><w:r><w:rPr></w:rPr>'
        '<w:t xml:space="preserve"> to print.</w:t></w:r></w:p>'
    )
    doc = docx.read(make_docx(body, LIBREOFFICE_STYLES))
    assert len(doc.units) == 1
    assert runs(doc.units[0]) == [
        ("Use ", False),
        ("print()", True),
        (" or ", False),
        ("echo", True),
        (" hi", True),
        (" to print.", False),
    ]


def test_a_document_in_a_monospace_default_font_is_still_translated():
    styles = (
        '<w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/><w:rPr>'
        '<w:rFonts w:ascii="Courier New" w:hAnsi="Courier New"/></w:rPr></w:style>'
    )
    doc = docx.read(make_docx(pandoc_paragraph(pandoc_run("I like green tea."), style="Normal"), styles))
    assert runs(doc.units[0]) == [("I like green tea.", False)]


def test_an_images_description_and_title_are_translated():
    image = pandoc_paragraph(pandoc_image("A cat on &quot;the&quot; desk", "The computer is on the desk."))
    doc = docx.read(make_docx(SENTENCE + image))
    assert [unit.source for unit in doc.units] == [
        "The computer is on the desk.",
        'A cat on "the" desk',
        "The computer is on the desk.",
    ]
    out = doc.render([None, ['桌子上的"猫"\n'], ["电脑在桌子上。"]], target="zh")
    body = zipfile.ZipFile(io.BytesIO(out)).read("word/document.xml")
    ElementTree.fromstring(body)  # still well-formed
    pr = re.search(rb"<wp:docPr [^>]*>", body).group().decode()
    assert pr == '<wp:docPr descr="桌子上的&quot;猫&quot;&#10;" title="电脑在桌子上。" id="22" name="Picture" />'
    assert b'<pic:cNvPr descr="cat.png"' in body  # the file name pandoc puts there is not alt text


def test_a_pandoc_document_end_to_end_with_the_tiny_model(bundle_dir):
    from engine.pipeline.translator import Translator

    translator = Translator(Path(bundle_dir))
    data = make_docx(SENTENCE + LINKED + CODE_BLOCK + pandoc_paragraph(pandoc_image("I like green tea.", "")))
    doc = docx.read(data)
    translations: list = [None] * len(doc.units)
    for i, unit in enumerate(doc.units):
        if not unit.translatable:
            continue
        alone = runs_alone(unit)
        texts = [unit.source, *(unit.runs[r].text for r in alone)]
        results = [r.text for r in translator.translate_segments(texts)]
        hints: list = [None] * len(unit.runs)
        for r, text in zip(alone, results[1:], strict=True):
            hints[r] = text
        translations[i] = distribute(unit, results[0], hints if alone else None)
    out = docx_lib.Document(io.BytesIO(doc.render(translations, target="zh")))
    sentence, linked, code = out.paragraphs[:3]
    assert sentence.text == translator.translate("The computer is on the desk.").text
    assert [run.text for run in sentence.runs if run.bold] and all(run.text for run in sentence.runs if run.bold)
    assert linked.text == translator.translate("Please open the window.").text
    assert [link.text for link in linked.hyperlinks] != [""]  # the link keeps words, so it is still there
    assert code.text == 'def hello():\n    print("Hello world")'
    body = zipfile.ZipFile(io.BytesIO(doc.render(translations, target="zh"))).read("word/document.xml").decode()
    assert f'descr="{translator.translate("I like green tea.").text}"' in body


@pytest.mark.parametrize("styles", ["", LIBREOFFICE_STYLES])
def test_styles_by_id_alone_are_enough(styles):
    """Without a styles part (or without the style in it), the ids pandoc and LibreOffice use still mean code."""
    doc = docx.read(make_docx(CODE_BLOCK + INLINE_CODE, styles))
    assert [unit.source for unit in doc.units] == ["Use print() to print."]
