"""PowerPoint presentations: slides and notes read from the original bytes, translations spliced back, and
python-pptx (the oracle) finds the same presentation with only the texts changed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from engine.documents import registry
from engine.documents.formats import pptx
from engine.documents.inline import distribute
from tests.engine.documents.office_docs import changed_members, fake_translations, make_pptx, raw_members, sources

pptx_lib = pytest.importorskip("pptx")


@pytest.fixture(scope="module")
def original() -> bytes:
    return make_pptx()


def _paragraphs(prs) -> list:
    """Every paragraph of every slide's shapes (groups and tables included), then the notes, in order."""
    found = []

    def shapes(collection):
        for shape in collection:
            if shape.shape_type is not None and shape.shape_type == 6:  # a group
                yield from shapes(shape.shapes)
            else:
                yield shape

    for slide in prs.slides:
        for shape in shapes(slide.shapes):
            if shape.has_text_frame:
                found.extend(shape.text_frame.paragraphs)
            elif getattr(shape, "has_table", False) and shape.has_table:
                for row in shape.table.rows:
                    for cell in row.cells:
                        found.extend(cell.text_frame.paragraphs)
    for slide in prs.slides:
        if slide.has_notes_slide:
            found.extend(slide.notes_slide.notes_text_frame.paragraphs)
    return found


def test_registry_finds_the_format():
    assert registry.get("pptx") is pptx.FORMAT
    assert registry.for_path(Path("talk.pptx")) is pptx.FORMAT


def test_units_are_paragraphs_of_slides_then_notes(original):
    extracted = pptx.read(original)
    assert sources(extracted) == [
        "Good morning, everyone!",
        "Hello, how are you?",
        "It is raining today.",
        "I like green tea.",
        "The weather is very nice.",
        "See you tomorrow.\nCan you help me?",
        "Slide 2",
        "Who is that man?",
        "I am not hungry.",
        "Why are you late?",
        "The taxi is waiting outside.",  # in a group
        "Please speak more slowly.",  # the notes
    ]
    assert [(run.text, run.fixed) for run in extracted.units[6].runs] == [("Slide ", False), ("2", True)]
    assert [run.fixed for run in extracted.units[5].runs] == [False, True, False]


def test_identity_round_trip_is_the_same_file(original):
    extracted = pptx.read(original)
    assert extracted.render([None] * len(extracted.units), target="zh") == original
    same = [[run.text for run in unit.runs] for unit in extracted.units]
    assert changed_members(original, extracted.render(same, target="zh")) == set()


def test_rendered_presentation_has_the_same_structure_and_only_new_texts(original):
    extracted = pptx.read(original)
    out = extracted.render(fake_translations(extracted), target="zh")
    before, after = pptx_lib.Presentation(io.BytesIO(original)), pptx_lib.Presentation(io.BytesIO(out))
    assert len(after.slides) == len(before.slides)
    for old_slide, new_slide in zip(before.slides, after.slides, strict=True):
        assert len(new_slide.shapes) == len(old_slide.shapes)
        assert new_slide.slide_layout.name == old_slide.slide_layout.name
    old_paragraphs, new_paragraphs = _paragraphs(before), _paragraphs(after)
    assert len(new_paragraphs) == len(old_paragraphs)
    for old, new in zip(old_paragraphs, new_paragraphs, strict=True):
        assert new.level == old.level
        assert len(new.runs) == len(old.runs)
        for old_run, new_run in zip(old.runs, new.runs, strict=True):
            assert (new_run.font.bold, new_run.font.size) == (old_run.font.bold, old_run.font.size)
    texts = [paragraph.text for paragraph in new_paragraphs]
    assert texts[0] == "译0.0" and texts[1] == "译1.0"
    split = new_paragraphs[4]
    assert [run.text for run in split.runs] == ["译4.0", "译4.1"] and split.runs[1].font.bold
    assert split.runs[1].font.size.pt == 28 and split.level == 1
    assert texts[5] == "译5.0\v译5.2"  # python-pptx shows a line break as a vertical tab
    assert texts[6] == "译6.0" + "2"  # the slide-number field is unchanged
    table = next(shape for shape in after.slides[1].shapes if shape.has_table).table
    assert [[cell.text for cell in row.cells] for row in table.rows] == [["译7.0", "译8.0"], ["译9.0", ""]]
    assert after.slides[1].notes_slide.notes_text_frame.text == "译11.0"
    assert changed_members(original, out) == {
        "ppt/slides/slide1.xml",
        "ppt/slides/slide2.xml",
        "ppt/notesSlides/notesSlide1.xml",
    }
    old_raw, new_raw = raw_members(original), raw_members(out)
    for name in set(old_raw) - changed_members(original, out):
        assert new_raw[name] == old_raw[name]  # layouts, masters, themes: copied as they were


def test_spaces_are_kept_without_markup(original):
    extracted = pptx.read(original)
    translations: list = [None] * len(extracted.units)
    translations[4] = [" 天气 ", " 很好 "]
    out = extracted.render(translations, target="zh")
    split = _paragraphs(pptx_lib.Presentation(io.BytesIO(out)))[4]
    assert [run.text for run in split.runs] == [" 天气 ", " 很好 "]
    assert b"xml:space" not in out  # DrawingML keeps spaces by itself


def test_end_to_end_with_the_tiny_model(bundle_dir, original):
    from engine.pipeline.translator import Translator

    translator = Translator(Path(bundle_dir))
    extracted = pptx.read(original)
    translations: list = []
    for unit in extracted.units:
        translations.append(distribute(unit, translator.translate(unit.source).text) if unit.translatable else None)
    out = extracted.render(translations, target="zh")
    after = pptx_lib.Presentation(io.BytesIO(out))
    title = after.slides[0].shapes.title.text
    assert title == translator.translate("Good morning, everyone!").text
    assert any("\u4e00" <= ch <= "\u9fff" for ch in title)
    assert after.slides[1].notes_slide.notes_text_frame.text == translator.translate("Please speak more slowly.").text


# -- code (issue 27 item 1): pandoc writes it as Courier runs, LibreOffice as Courier New ------------------------


def _code_presentation() -> bytes:
    """Slides shaped as pandoc 2.17 and LibreOffice 7.4 write code, and a code shape whose list style sets the font."""
    from lxml import etree
    from pptx import Presentation
    from pptx.util import Inches

    a = "http://schemas.openxmlformats.org/drawingml/2006/main"
    prs = Presentation()
    slide = prs.slides.add_slide(prs.slide_layouts[6])
    frame = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(2)).text_frame
    paragraph = frame.paragraphs[0]
    for text, font in (("Run ", None), ("make test", "Courier"), (" before you come.", None)):
        run = paragraph.add_run()
        run.text = text
        if font:
            run.font.name = font
    block = frame.add_paragraph()  # a code block: every run in Courier New (LibreOffice) with syntax colours
    for text in ("print", "(", '"Good morning, everyone!"', ")"):
        run = block.add_run()
        run.text = text
        run.font.name = "Courier New"
    shape = slide.shapes.add_textbox(Inches(1), Inches(4), Inches(6), Inches(2)).text_frame
    shape.text = "The printer is not working."  # in the shape's monospace list style: code
    prose = shape.add_paragraph()
    prose.add_run().text = "Thank you very much."
    prose.runs[0].font.name = "Calibri"  # its own font wins over the shape's
    defaults = shape.add_paragraph()  # the paragraph's own default font: prose again
    defaults.add_run().text = "See you tomorrow."
    body = shape._txBody
    style = body.find(f"{{{a}}}lstStyle")
    level = etree.SubElement(etree.SubElement(style, f"{{{a}}}lvl1pPr"), f"{{{a}}}defRPr")
    etree.SubElement(level, f"{{{a}}}latin", typeface="Consolas")
    ppr = defaults._p.get_or_add_pPr()
    etree.SubElement(etree.SubElement(ppr, f"{{{a}}}defRPr"), f"{{{a}}}latin", typeface="Georgia")
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def test_code_in_a_monospace_font_stays_code():
    """pandoc's .pptx code block came back translated (打印机坏了。) and its inline code `make test` was lost."""
    data = _code_presentation()
    extracted = pptx.read(data)
    assert sources(extracted) == ["Run make test before you come.", "Thank you very much.", "See you tomorrow."]
    assert [(run.text, run.fixed) for run in extracted.units[0].runs] == [
        ("Run ", False),
        ("make test", True),
        (" before you come.", False),
    ]
    out = extracted.render(fake_translations(extracted), target="zh")
    texts = [p.text for p in _paragraphs(pptx_lib.Presentation(io.BytesIO(out)))]
    assert texts[1] == 'print("Good morning, everyone!")' and texts[2] == "The printer is not working."
    assert "make test" in texts[0] and "Run" not in texts[0]
