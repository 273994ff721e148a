"""OpenDocument texts as pandoc and LibreOffice write them (issue 27): code blocks and code spans stay code."""

from __future__ import annotations

import io
import zipfile

from engine.documents.formats import odt
from engine.documents.inline import distribute
from tests.engine.documents.producer_shapes import make_odt

PANDOC_BODY = (
    '<text:p text:style-name="First_20_paragraph">The <text:span text:style-name="T1">computer</text:span> is on the '
    '<text:span text:style-name="T2">desk</text:span>.</text:p>'
    '<text:p text:style-name="P1">def hello():</text:p>'
    '<text:p text:style-name="P1"><text:s text:c="4" />print(&quot;Hello world&quot;)</text:p>'
    '<text:p text:style-name="First_20_paragraph">Use <text:span text:style-name="Source_Text">print()</text:span> '
    "to print.</text:p>"
)
# LibreOffice 7.4 (its .odt of pandoc's .docx): code in "Source_20_Text" spans of "Preformatted Text" children, and
# a span in a Liberation Mono automatic style.
LIBREOFFICE_AUTOMATIC = (
    '<style:style style:name="P2" style:family="paragraph" style:parent-style-name="Preformatted_20_Text">'
    '<style:paragraph-properties fo:margin-top="0in" /></style:style>'
    '<style:style style:name="T3" style:family="text"><style:text-properties style:font-name="Liberation Mono" />'
    "</style:style>"
)
LIBREOFFICE_STYLES = (
    '<office:font-face-decls><style:font-face style:name="Liberation Mono" '
    'svg:font-family="&apos;Liberation Mono&apos;" style:font-family-generic="modern" style:font-pitch="fixed"/>'
    "</office:font-face-decls><office:styles>"
    '<style:style style:name="Standard" style:family="paragraph" style:class="text"/>'
    '<style:style style:name="Preformatted_20_Text" style:display-name="Preformatted Text" style:family="paragraph" '
    'style:parent-style-name="Standard" style:class="html"/>'
    '<style:style style:name="Source_20_Text" style:display-name="Source Text" style:family="text"/>'
    "</office:styles>"
)
LIBREOFFICE_BODY = (
    '<text:p text:style-name="P2"><text:bookmark text:name="cb1-1"/><text:span text:style-name="Source_20_Text">'
    "def hello():</text:span></text:p>"
    '<text:p text:style-name="Text_20_body">Use <text:span text:style-name="Source_20_Text">print()</text:span> or '
    '<text:span text:style-name="T3">echo hi</text:span> to print.</text:p>'
)


def runs(unit) -> list[tuple[str, bool]]:
    return [(run.text, run.fixed) for run in unit.runs]


def test_pandocs_code_block_and_code_span_are_kept():
    doc = odt.read(make_odt(PANDOC_BODY))
    # Before: "def hello():" and 'print("Hello world")' were units of their own, translated.
    assert [unit.source for unit in doc.units if unit.translatable] == [
        "The computer is on the desk.",
        "Use print() to print.",
    ]
    assert runs(doc.units[-1]) == [("Use ", False), ("print()", True), (" to print.", False)]
    translations = [distribute(u, "用print()打印。") if u.source.startswith("Use") else None for u in doc.units]
    content = zipfile.ZipFile(io.BytesIO(doc.render(translations, target="zh"))).read("content.xml").decode()
    assert '<text:p text:style-name="P1">def hello():</text:p>' in content
    assert '<text:span text:style-name="Source_Text">print()</text:span>' in content


def test_libreoffices_code_styles_and_monospace_fonts_are_kept():
    doc = odt.read(make_odt(LIBREOFFICE_BODY, LIBREOFFICE_AUTOMATIC, LIBREOFFICE_STYLES))
    assert [unit.source for unit in doc.units if unit.translatable] == ["Use print() or echo hi to print."]
    unit = next(unit for unit in doc.units if unit.translatable)
    assert runs(unit) == [("Use ", False), ("print()", True), (" or ", False), ("echo hi", True), (" to print.", False)]


def test_a_text_in_a_monospace_standard_style_is_still_translated():
    styles = (
        '<office:font-face-decls><style:font-face style:name="Courier New" style:font-pitch="fixed"/>'
        '</office:font-face-decls><office:styles><style:style style:name="Standard" style:family="paragraph">'
        '<style:text-properties style:font-name="Courier New"/></style:style></office:styles>'
    )
    doc = odt.read(make_odt('<text:p text:style-name="Standard">I like green tea.</text:p>', "", styles))
    assert runs(doc.units[0]) == [("I like green tea.", False)]


# LibreOffice 7.4 (its .odt of pandoc's .docx): an image's alt text as the frame's svg:title and svg:desc.
DRAW_NS = 'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"'
IMAGE_BODY = (
    '<text:p text:style-name="Text_20_body">Text with '
    f'<draw:frame {DRAW_NS} draw:name="Image2" text:anchor-type="as-char" svg:width="0.1in" svg:height="0.1in">'
    '<draw:image xlink:href="Pictures/1.png" xlink:type="simple"/><svg:title>I like green tea.</svg:title>'
    "<svg:desc>The computer is on the desk.</svg:desc></draw:frame> inline.</text:p>"
    '<text:p text:style-name="P2"><text:span text:style-name="Source_20_Text">make test '
    f'<draw:frame {DRAW_NS} draw:name="Image3"><draw:image xlink:href="Pictures/1.png"/>'
    "<svg:desc>See you tomorrow.</svg:desc></draw:frame></text:span></text:p>"
)


def test_image_alt_text_is_translated():
    """Issue 27 item 7 in .odt: svg:title and svg:desc stayed English while HTML's alt and Word's descr were
    translated. Each is a unit of its own, also where the image sits in code."""
    doc = odt.read(make_odt(IMAGE_BODY, LIBREOFFICE_AUTOMATIC, LIBREOFFICE_STYLES))
    assert [unit.source for unit in doc.units if unit.translatable] == [
        "Text with  inline.",  # the frame sat between the spaces
        "I like green tea.",
        "The computer is on the desk.",
        "See you tomorrow.",
    ]
    new = {"I like green tea.": "我喜欢<绿茶>&。", "The computer is on the desk.": "电脑在桌子上。",
           "See you tomorrow.": "明天见。"}  # fmt: skip
    translations = [[new[unit.source]] if unit.source in new else None for unit in doc.units]
    content = zipfile.ZipFile(io.BytesIO(doc.render(translations, target="zh"))).read("content.xml").decode()
    assert "<svg:title>我喜欢&lt;绿茶&gt;&amp;。</svg:title><svg:desc>电脑在桌子上。</svg:desc>" in content
    assert "<svg:desc>明天见。</svg:desc>" in content and "make test " in content
    assert 'draw:name="Image2"' in content and 'xlink:href="Pictures/1.png"' in content
