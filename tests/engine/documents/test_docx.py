"""Word documents: paragraphs and runs read from the original bytes, translations spliced back, and python-docx
(the oracle) finds the same document with only the texts changed."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from engine.documents import registry
from engine.documents.formats import docx
from engine.documents.inline import distribute
from engine.documents.model import DocumentError
from tests.engine.documents.office_docs import (
    W,
    changed_members,
    fake_translations,
    make_docx,
    members,
    raw_members,
    sources,
)

docx_lib = pytest.importorskip("docx")


@pytest.fixture(scope="module")
def original() -> bytes:
    return make_docx()


def _w_texts(part: bytes, tag: str = "t") -> list[str]:
    from lxml import etree

    return [node.text or "" for node in etree.fromstring(part).iter(f"{{{W}}}{tag}")]


def test_registry_finds_the_format():
    assert registry.get("docx") is docx.FORMAT
    assert registry.for_path(Path("Report.DOCX")) is docx.FORMAT


def test_units_are_paragraphs_in_reading_order(original):
    extracted = docx.read(original)
    assert sources(extracted) == [
        "Good morning, everyone!",
        "The weather is very nice.",
        "It is raining today.",
        "Thank you very much.\tSee you tomorrow.\nCan you help me?",
        "I forgot my password.",
        "I like green tea.",
        "She does not eat meat.",
        "Who is that man?",
        "Please open the window.",  # the hyperlink's run is a run of its paragraph
        "Page 1January one",  # field results are text; field codes are not
        "I am not hungry. Why are you late?",  # inserted text is text; deleted text is not
        "Before the box. After the box.",
        "The taxi is waiting outside.",  # the text box's paragraph: its own unit, after the one holding it
        "I take the bus to work.",
        "Where is the train station?",  # header
        "How much is this book?",  # footer
        " I like green tea.",  # footnote
    ]
    split = extracted.units[1]
    assert [run.text for run in split.runs] == ["The weather ", "is very", " nice."]
    tabbed = extracted.units[3]
    assert [(run.text, run.fixed) for run in tabbed.runs if run.fixed] == [("\t", True), ("\n", True)]
    assert all(unit.split == "align" for unit in extracted.units)
    # Comments are not translated.
    assert not any("Please send me the information." in source for source in sources(extracted))


def test_identity_round_trip_is_the_same_file(original):
    extracted = docx.read(original)
    assert docx.read(original).render([None] * len(extracted.units), target="zh") == original


def test_rendered_document_has_the_same_structure_and_only_new_texts(original):
    extracted = docx.read(original)
    translations = fake_translations(extracted)
    out = extracted.render(translations, target="zh")
    before, after = docx_lib.Document(io.BytesIO(original)), docx_lib.Document(io.BytesIO(out))

    assert len(after.paragraphs) == len(before.paragraphs)
    assert len(after.tables) == len(before.tables) == 1
    assert len(after.tables[0].rows) == 2 and len(after.tables[0].columns) == 2
    for old, new in zip(before.paragraphs, after.paragraphs, strict=True):
        assert new.style.name == old.style.name
        assert len(new.runs) == len(old.runs)
        for old_run, new_run in zip(old.runs, new.runs, strict=True):
            assert (new_run.bold, new_run.italic, new_run.font.size) == (
                old_run.bold,
                old_run.italic,
                old_run.font.size,
            )
    split = after.paragraphs[1]
    assert [run.text for run in split.runs] == ["译1.0", "译1.1", "译1.2"]
    assert split.runs[1].bold and split.runs[1].font.size.pt == 14 and split.runs[2].italic
    assert after.paragraphs[0].style.name == "Heading 1" and after.paragraphs[0].text == "译0.0"
    # Tab and line break stay in their run, between the new texts.
    assert after.paragraphs[3].runs[0].text == "译3.0\t译3.2\n译3.4"
    assert after.tables[0].cell(0, 1).text == "译6.0" and after.tables[0].cell(1, 1).text == ""
    assert after.sections[0].header.paragraphs[0].text == "译14.0"
    assert after.sections[0].footer.paragraphs[0].text == "译15.0"

    old_parts, new_parts = members(original), members(out)
    # Comments, field codes and deleted text are untouched; so is every part that holds no translated text.
    assert changed_members(original, out) == {
        "word/document.xml",
        "word/header1.xml",
        "word/footer1.xml",
        "word/footnotes.xml",
    }
    assert _w_texts(new_parts["word/comments.xml"]) == ["Please send me the information."]
    assert _w_texts(new_parts["word/document.xml"], "instrText") == [' DATE \\@ "MMMM d" ']
    assert _w_texts(new_parts["word/document.xml"], "delText") == [" Deleted words."]
    assert _w_texts(new_parts["word/footnotes.xml"]) == ["译16.0"]
    assert "译12.0" in _w_texts(new_parts["word/document.xml"])  # the text box
    # Untouched members keep their stored form exactly (compression, CRC, timestamps, extra fields).
    old_raw, new_raw = raw_members(original), raw_members(out)
    for name in set(old_parts) - changed_members(original, out):
        assert new_raw[name] == old_raw[name]


def test_only_the_texts_change_in_the_xml(original):
    """Outside the w:t contents, document.xml is byte for byte what it was (namespaces, attributes, rPr)."""
    extracted = docx.read(original)
    same = [[run.text for run in unit.runs] for unit in extracted.units]
    out = extracted.render(same, target="zh")
    assert members(out)["word/document.xml"] == members(original)["word/document.xml"]
    assert members(out) == members(original)


def test_spaces_at_the_edges_are_preserved(original):
    extracted = docx.read(original)
    translations: list = [None] * len(extracted.units)
    translations[0] = ["  leading and trailing  "]
    translations[1] = [" a", "b ", " c"]
    out = extracted.render(translations, target="en")
    after = docx_lib.Document(io.BytesIO(out))
    assert after.paragraphs[0].text == "  leading and trailing  "
    assert [run.text for run in after.paragraphs[1].runs] == [" a", "b ", " c"]
    assert b'xml:space="preserve"> a<' in members(out)["word/document.xml"]


def test_markup_in_translations_is_escaped(original):
    extracted = docx.read(original)
    translations: list = [None] * len(extracted.units)
    translations[0] = ["<b>&amp; \x01 </w:t>"]
    after = docx_lib.Document(io.BytesIO(extracted.render(translations, target="zh")))
    assert after.paragraphs[0].text == "<b>&amp;  </w:t>"  # the control character XML forbids is dropped


def test_wrong_translation_shapes_are_refused(original):
    extracted = docx.read(original)
    with pytest.raises(DocumentError):
        extracted.render([None], target="zh")
    translations: list = [None] * len(extracted.units)
    translations[1] = ["only one"]
    with pytest.raises(DocumentError):
        extracted.render(translations, target="zh")


def test_other_zip_documents_are_refused(original):
    pptx = pytest.importorskip("pptx")
    buffer = io.BytesIO()
    pptx.Presentation().save(buffer)
    with pytest.raises(DocumentError, match="not a Word document"):
        docx.read(buffer.getvalue())
    plain = io.BytesIO()
    with zipfile.ZipFile(plain, "w") as archive:
        archive.writestr("hello.txt", "hi")
    with pytest.raises(DocumentError):
        docx.read(plain.getvalue())


def test_end_to_end_with_the_tiny_model(bundle_dir, original):
    from engine.pipeline.translator import Translator

    translator = Translator(Path(bundle_dir))
    extracted = docx.read(original)
    wanted = [i for i, unit in enumerate(extracted.units) if unit.translatable]
    results = list(translator.translate_segments([extracted.units[i].source for i in wanted]))
    translations: list = [None] * len(extracted.units)
    for i, result in zip(wanted, results, strict=True):
        translations[i] = distribute(extracted.units[i], result.text)
    out = extracted.render(translations, target="zh")
    after = docx_lib.Document(io.BytesIO(out))
    heading = translator.translate("Good morning, everyone!").text
    assert after.paragraphs[0].text == heading and any("\u4e00" <= ch <= "\u9fff" for ch in heading)
    split = after.paragraphs[1]
    # The runs share the sentence's one translation (how: engine.documents.inline), each keeping its formatting.
    assert [run.text for run in split.runs] == translations[1] and len(split.runs) == 3
    assert "".join(translations[1]) == translator.translate("The weather is very nice.").text
    assert split.runs[1].bold and split.runs[2].italic
    assert after.tables[0].cell(0, 0).text == translator.translate("I like green tea.").text
    assert after.sections[0].header.paragraphs[0].text == translator.translate("Where is the train station?").text


def _big_docx(paragraphs: int = 5000) -> bytes:
    """A ~300-page document as Word writes it (revision ids, fonts, sizes, languages on every run):
    `paragraphs` paragraphs of 20 words, every third with a sentence split over bold and italic runs."""
    from docx import Document

    buffer = io.BytesIO()
    Document().save(buffer)
    sentence = "The meeting starts at 3 o'clock and we are going to Beijing next week with my brother and"
    ppr = '<w:pPr><w:spacing w:after="120" w:line="276" w:lineRule="auto"/><w:jc w:val="both"/></w:pPr>'
    rpr = (
        '<w:rFonts w:ascii="Calibri" w:hAnsi="Calibri" w:cs="Arial"/><w:sz w:val="22"/><w:szCs w:val="22"/>'
        '<w:lang w:val="en-GB"/>'
    )
    run = '<w:r w:rsidRPr="00112233"><w:rPr>'
    body = []
    for i in range(paragraphs):
        open_p = f'<w:p w:rsidR="00A1{i:04X}" w:rsidRDefault="00A1B2C3" w:rsidP="00D4E5F6">{ppr}'
        if i % 3 == 0:
            body.append(
                f'{open_p}{run}{rpr}</w:rPr><w:t xml:space="preserve">{i} {sentence} </w:t>'
                f"</w:r>{run}<w:b/>{rpr}</w:rPr><w:t>bold words</w:t></w:r>"
                f'{run}<w:i/>{rpr}</w:rPr><w:t xml:space="preserve"> in italics.</w:t></w:r>'
                "</w:p>"
            )
        else:
            body.append(f"{open_p}{run}{rpr}</w:rPr><w:t>{i} {sentence} me.</w:t></w:r></w:p>")
    document = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document xmlns:w="{W}"><w:body>'
        + "".join(body)
        + "<w:sectPr/></w:body></w:document>"
    ).encode()
    parts = members(buffer.getvalue())
    parts["word/document.xml"] = document
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in parts.items():
            archive.writestr(name, content)
    return out.getvalue()


_MEASURE = """
import json, resource, sys, time, tracemalloc
from engine.documents.formats import docx
data = open(sys.argv[1], "rb").read()


def once():
    start = time.perf_counter()
    extracted = docx.read(data)
    read_s = time.perf_counter() - start
    translations = [[run.text if run.fixed else "译文" * 8 for run in unit.runs] for unit in extracted.units]
    start = time.perf_counter()
    out = extracted.render(translations, target="zh")
    return len(extracted.units), read_s, time.perf_counter() - start, len(out)


units, read_s, render_s, size = once()
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
once()
heap = tracemalloc.get_traced_memory()[1]
print(json.dumps({"units": units, "read_s": round(read_s, 2), "render_s": round(render_s, 2), "out_bytes": size,
                  "peak_rss_mib": round(rss / 1024, 1), "peak_heap_mib": round(heap / 2**20, 1)}))
"""


def test_a_300_page_document_reads_and_renders_in_seconds(tmp_path):
    data = _big_docx()
    xml_size = len(members(data)["word/document.xml"])
    path = tmp_path / "big.docx"
    path.write_bytes(data)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path)], capture_output=True, text=True, check=True, cwd=Path.cwd()
    )
    figures = json.loads(done.stdout)
    print(f"docx 5000 paragraphs, document.xml {xml_size / 1e6:.1f} MB: {figures}")
    assert figures["units"] == 5000
    assert figures["read_s"] + figures["render_s"] < 20, figures  # a few seconds on a quiet machine
    # Python allocations during read + render: the archive, the part and its new copy, the units; a small multiple.
    assert figures["peak_heap_mib"] * 2**20 < 8 * xml_size, figures
    assert time.perf_counter() - started < 60


def _with_document(original: bytes, transform) -> bytes:
    parts = members(original)
    parts["word/document.xml"] = transform(parts["word/document.xml"])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in parts.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def test_strict_open_xml_is_read_too(original):
    strict = _with_document(
        original, lambda xml: xml.replace(W.encode(), b"http://purl.oclc.org/ooxml/wordprocessingml/main")
    )
    assert sources(docx.read(strict))[:2] == ["Good morning, everyone!", "The weather is very nice."]


def test_an_existing_xml_space_is_not_doubled(original):
    marked = _with_document(
        original, lambda xml: xml.replace(b"<w:t>Good morning", b'<w:t xml:space="default">Good morning')
    )
    extracted = docx.read(marked)
    translations: list = [None] * len(extracted.units)
    translations[0] = [" spaced "]
    out = extracted.render(translations, target="en")
    assert docx_lib.Document(io.BytesIO(out)).paragraphs[0].runs[0].text.strip() == "spaced"  # well-formed


def test_a_part_in_a_legacy_encoding_gets_character_references(original):
    def to_latin1(xml: bytes) -> bytes:
        declared = xml.replace(b"encoding='UTF-8'", b"encoding='ISO-8859-1'", 1)
        assert declared != xml
        return declared.decode("utf-8").encode("latin-1")

    extracted = docx.read(_with_document(original, to_latin1))
    translations: list = [None] * len(extracted.units)
    translations[0] = ["早上好 café"]
    out = extracted.render(translations, target="zh")
    assert b"&#26089;" in members(out)["word/document.xml"] and b"caf\xe9" in members(out)["word/document.xml"]
    assert docx_lib.Document(io.BytesIO(out)).paragraphs[0].text == "早上好 café"


@pytest.mark.parametrize("model", ["bundle_dir", "bergamot_bundle_dir"])
def test_a_line_break_comes_back_once_with_a_real_model(original, model, request):
    """make_docx's "Thank you very much.<w:tab/>See you tomorrow.<w:br/>Can you help me?" through a real model (the
    tiny opus-mt and the tiny Firefox one): the translation keeps the line, and its "\\n" was left in the text
    before the <w:br/>, so Word showed a newline inside the run as well as the break."""
    from engine.api.documents import translate_document
    from engine.pipeline.translator import Translator

    translator = Translator(request.getfixturevalue(model))

    def translate(texts: list[str]) -> list[str]:
        return [t.text for t in translator.translate_segments(texts)]

    out = translate_document(docx.FORMAT, original, translate, "zh")
    texts = _w_texts(members(out)["word/document.xml"])
    assert texts != _w_texts(members(original)["word/document.xml"])  # translated
    assert [t for t in texts if "\n" in t] == []
    assert len(_w_texts(members(out)["word/document.xml"], "br")) == len(
        _w_texts(members(original)["word/document.xml"], "br")
    )
