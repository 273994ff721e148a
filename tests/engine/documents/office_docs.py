"""Real-looking Word, PowerPoint and OpenDocument files for the format tests, made with the oracle libraries
(python-docx, python-pptx, odfpy), and the made-up translations they are rendered with."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence

from engine.documents.model import Extracted

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
V = "urn:schemas-microsoft-com:vml"

FOOTNOTES_XML = (
    f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:footnotes xmlns:w="{W}">'
    '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
    '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p>'
    "</w:footnote>"
    '<w:footnote w:id="1"><w:p><w:pPr><w:pStyle w:val="FootnoteText"/></w:pPr><w:r><w:rPr>'
    '<w:vertAlign w:val="superscript"/></w:rPr><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> I like green tea.'
    "</w:t></w:r></w:p></w:footnote></w:footnotes>"
).encode()


def make_docx() -> bytes:
    """A Word document with most of what a real one has: headings, a sentence split over bold/italic runs, a table,
    a header and footer, a footnote, a comment, a hyperlink, a tab and a line break, fields, a tracked deletion and
    a text box."""
    from docx import Document
    from docx.opc.constants import CONTENT_TYPE as CT
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml import parse_xml
    from docx.shared import Inches, Pt

    doc = Document()
    doc.add_heading("Good morning, everyone!", level=1)
    split = doc.add_paragraph("The weather ")
    bold = split.add_run("is very")
    bold.bold = True
    bold.font.size = Pt(14)
    italic = split.add_run(" nice.")
    italic.italic = True
    doc.add_heading("It is raining today.", level=2)
    tabbed = doc.add_paragraph()
    tabbed.paragraph_format.tab_stops.add_tab_stop(Inches(2))  # a w:tab in w:pPr: a tab stop, not a tab
    run = tabbed.add_run("Thank you very much.")
    run.add_tab()
    run.add_text("See you tomorrow.")
    run.add_break()
    run.add_text("Can you help me?")
    commented = doc.add_paragraph("I forgot my password.")
    doc.add_comment(commented.runs[0], text="Please send me the information.", author="Reviewer", initials="R")
    table = doc.add_table(rows=2, cols=2)
    for row, texts in zip(table.rows, (("I like green tea.", "She does not eat meat."), ("Who is that man?", ""))):
        for cell, text in zip(row.cells, texts):
            cell.text = text
    doc.sections[0].header.paragraphs[0].text = "Where is the train station?"
    doc.sections[0].footer.paragraphs[0].text = "How much is this book?"
    # A hyperlink (its run is a run of the paragraph), a simple field and a complex field (codes untouched).
    link_id = doc.part.relate_to("https://example.com/", RT.HYPERLINK, is_external=True)
    linked = doc.add_paragraph("Please open ")
    linked._p.append(
        parse_xml(
            f'<w:hyperlink xmlns:w="{W}" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/'
            f'relationships" r:id="{link_id}"><w:r><w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr>'
            "<w:t>the window</w:t></w:r></w:hyperlink>"
        )
    )
    linked.add_run(".")
    fields = doc.add_paragraph("Page ")
    fields._p.append(parse_xml(f'<w:fldSimple xmlns:w="{W}" w:instr=" PAGE "><w:r><w:t>1</w:t></w:r></w:fldSimple>'))
    for xml in (
        '<w:r><w:fldChar w:fldCharType="begin"/></w:r>',
        '<w:r><w:instrText xml:space="preserve"> DATE \\@ "MMMM d" </w:instrText></w:r>',
        '<w:r><w:fldChar w:fldCharType="separate"/></w:r>',
        "<w:r><w:t>January one</w:t></w:r>",
        '<w:r><w:fldChar w:fldCharType="end"/></w:r>',
    ):
        fields._p.append(parse_xml(xml.replace("<w:r>", f'<w:r xmlns:w="{W}">', 1)))
    # Tracked changes: the deleted text stays as it was, the inserted text is translated.
    tracked = doc.add_paragraph("I am not hungry.")
    tracked._p.append(
        parse_xml(
            f'<w:del xmlns:w="{W}" w:id="91" w:author="A" w:date="2024-01-01T00:00:00Z"><w:r>'
            "<w:delText> Deleted words.</w:delText></w:r></w:del>"
        )
    )
    tracked._p.append(
        parse_xml(
            f'<w:ins xmlns:w="{W}" w:id="92" w:author="A" w:date="2024-01-01T00:00:00Z"><w:r>'
            '<w:t xml:space="preserve"> Why are you late?</w:t></w:r></w:ins>'
        )
    )
    # A text box: its paragraph is a unit of its own.
    boxed = doc.add_paragraph("Before the box. ")
    boxed._p.append(
        parse_xml(
            f'<w:r xmlns:w="{W}" xmlns:v="{V}"><w:pict><v:shape id="box1" style="width:100pt;height:50pt">'
            "<v:textbox><w:txbxContent><w:p><w:r><w:t>The taxi is waiting outside.</w:t></w:r></w:p>"
            "</w:txbxContent></v:textbox></v:shape></w:pict></w:r>"
        )
    )
    boxed.add_run("After the box.")
    # A footnote (python-docx cannot make one: the part is built by hand) referenced from the last paragraph.
    footnotes = Part(PackURI("/word/footnotes.xml"), CT.WML_FOOTNOTES, FOOTNOTES_XML, doc.part.package)
    doc.part.relate_to(footnotes, RT.FOOTNOTES)
    noted = doc.add_paragraph("I take the bus to work.")
    noted._p.append(
        parse_xml(
            f'<w:r xmlns:w="{W}"><w:rPr><w:vertAlign w:val="superscript"/></w:rPr><w:footnoteReference w:id="1"/></w:r>'
        )
    )
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def fake_translations(extracted: Extracted) -> list[list[str]]:
    """Made-up translations, one per run: fixed runs verbatim, the others `译<unit>.<run>`."""
    return [
        [run.text if run.fixed else f"译{i}.{j}" for j, run in enumerate(unit.runs)]
        for i, unit in enumerate(extracted.units)
    ]


def members(data: bytes) -> dict[str, bytes]:
    """Every zip member's name and bytes, in order."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def changed_members(before: bytes, after: bytes) -> set[str]:
    """Names of the members whose bytes differ; the member lists must be the same, in the same order."""
    old, new = members(before), members(after)
    assert list(old) == list(new)
    return {name for name in old if old[name] != new[name]}


def raw_members(data: bytes) -> dict[str, tuple[int, int, int, tuple[int, ...], bytes]]:
    """Each member's stored form: compression, CRC, compressed size, date_time, extra field."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            info.filename: (info.compress_type, info.CRC, info.compress_size, info.date_time, info.extra)
            for info in archive.infolist()
        }


def sources(extracted: Extracted) -> list[str]:
    return [unit.source for unit in extracted.units]


def texts_of(runs: Sequence[object]) -> list[str]:
    return [run.text for run in runs]  # type: ignore[attr-defined]


A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def make_pptx() -> bytes:
    """A presentation: a title slide, a bullet slide with a sentence split over a bold run and a line break, a table,
    a grouped shape, a slide-number field, and speaker notes."""
    from lxml import etree
    from pptx import Presentation
    from pptx.util import Inches, Pt

    prs = Presentation()
    title = prs.slides.add_slide(prs.slide_layouts[0])
    title.shapes.title.text = "Good morning, everyone!"
    title.placeholders[1].text = "Hello, how are you?"
    bullets = prs.slides.add_slide(prs.slide_layouts[1])
    bullets.shapes.title.text = "It is raining today."
    frame = bullets.placeholders[1].text_frame
    frame.text = "I like green tea."
    split = frame.add_paragraph()
    split.level = 1
    first = split.add_run()
    first.text = "The weather "
    bold = split.add_run()
    bold.text = "is very nice."
    bold.font.bold = True
    bold.font.size = Pt(28)
    broken = frame.add_paragraph()
    broken.add_run().text = "See you tomorrow."
    broken.add_line_break()
    broken.add_run().text = "Can you help me?"
    # A field (the slide number) in its own paragraph, after some text: fixed.
    numbered = frame.add_paragraph()
    numbered.add_run().text = "Slide "
    field = etree.SubElement(numbered._p, f"{{{A}}}fld", id="{B6F15528-21DE-4FAA-801E-634DDDAF4B2B}", type="slidenum")
    etree.SubElement(field, f"{{{A}}}t").text = "2"
    table = bullets.shapes.add_table(2, 2, Inches(1), Inches(5), Inches(4), Inches(1)).table
    for (row, col), text in {
        (0, 0): "Who is that man?",
        (0, 1): "I am not hungry.",
        (1, 0): "Why are you late?",
    }.items():
        table.cell(row, col).text = text
    group = bullets.shapes.add_group_shape()
    box = group.shapes.add_textbox(Inches(5), Inches(1), Inches(2), Inches(1))
    box.text_frame.text = "The taxi is waiting outside."
    bullets.notes_slide.notes_text_frame.text = "Please speak more slowly."
    out = io.BytesIO()
    prs.save(out)
    return out.getvalue()


def make_odt() -> bytes:
    """An OpenDocument text: a heading, a sentence split over a bold span, spaces and a tab, a footnote, a comment,
    a list, a table, and a page header and footer."""
    from odf import dc, office, table, text
    from odf.opendocument import OpenDocumentText
    from odf.style import Footer, Header, MasterPage, PageLayout, Style, TextProperties

    doc = OpenDocumentText()
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    doc.automaticstyles.addElement(bold)
    layout = PageLayout(name="Page")
    doc.automaticstyles.addElement(layout)
    master = MasterPage(name="Standard", pagelayoutname=layout)
    header, footer = Header(), Footer()
    header.addElement(text.P(text="Where is the train station?"))
    footer.addElement(text.P(text="How much is this book?"))
    master.addElement(header)
    master.addElement(footer)
    doc.masterstyles.addElement(master)

    doc.text.addElement(text.H(outlinelevel=1, text="Good morning, everyone!"))
    split = text.P(text="The weather ")
    split.addElement(text.Span(stylename=bold, text="is very"))
    split.addText(" nice.")
    doc.text.addElement(split)
    spaced = text.P(text="Thank you")
    spaced.addElement(text.S(c=3))
    spaced.addText("very much.")
    spaced.addElement(text.Tab())
    spaced.addText("See you tomorrow.")
    spaced.addElement(text.LineBreak())
    spaced.addText("Can you help me?")
    doc.text.addElement(spaced)
    noted = text.P(text="I take the bus to work.")
    note = text.Note(id="ftn1", noteclass="footnote")
    note.addElement(text.NoteCitation(text="1"))
    body = text.NoteBody()
    body.addElement(text.P(text="I like green tea."))
    note.addElement(body)
    noted.addElement(note)
    doc.text.addElement(noted)
    commented = text.P(text="I forgot my password.")
    annotation = office.Annotation()
    annotation.addElement(dc.Creator(text="Reviewer"))
    annotation.addElement(text.P(text="Please send me the information."))
    commented.addElement(annotation)
    doc.text.addElement(commented)
    items = text.List()
    for sentence in ("Who is that man?", "Why are you late?"):
        item = text.ListItem()
        item.addElement(text.P(text=sentence))
        items.addElement(item)
    doc.text.addElement(items)
    grid = table.Table(name="Table1")
    grid.addElement(table.TableColumn(numbercolumnsrepeated=2))
    row = table.TableRow()
    for sentence in ("She does not eat meat.", "I am not hungry."):
        cell = table.TableCell()
        cell.addElement(text.P(text=sentence))
        row.addElement(cell)
    grid.addElement(row)
    doc.text.addElement(grid)
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()
