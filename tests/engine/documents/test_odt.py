"""OpenDocument texts: paragraphs and headings read from the original bytes, translations spliced back, and odfpy
(the oracle) finds the same document with only the texts changed."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from engine.documents import registry
from engine.documents.formats import odt
from engine.documents.inline import distribute
from engine.documents.model import DocumentError
from tests.engine.documents.office_docs import changed_members, fake_translations, make_odt, members, sources

odf = pytest.importorskip("odf")


@pytest.fixture(scope="module")
def original() -> bytes:
    return make_odt()


def _load(data: bytes):
    from odf.opendocument import load

    return load(io.BytesIO(data))


def _texts(doc, element) -> list[str]:
    from odf import teletype

    return [teletype.extractText(node) for node in doc.getElementsByType(element)]


def _shape(doc) -> dict[str, int]:
    from odf import office, table, text

    kinds = {
        "p": text.P,
        "h": text.H,
        "span": text.Span,
        "s": text.S,
        "tab": text.Tab,
        "line-break": text.LineBreak,
        "note": text.Note,
        "annotation": office.Annotation,
        "list-item": text.ListItem,
        "cell": table.TableCell,
    }
    return {name: len(doc.getElementsByType(kind)) for name, kind in kinds.items()}


def test_registry_finds_the_format():
    assert registry.get("odt") is odt.FORMAT
    assert registry.for_path(Path("letter.odt")) is odt.FORMAT


def test_units_are_paragraphs_and_headings(original):
    extracted = odt.read(original)
    assert sources(extracted) == [
        "Good morning, everyone!",
        "The weather is very nice.",
        "Thank you   very much.\tSee you tomorrow.\nCan you help me?",
        "I take the bus to work.1",  # the note's citation is a fixed run of its paragraph…
        "I like green tea.",  # …and the note's body a unit of its own
        "I forgot my password.",  # the comment is not part of it
        "Who is that man?",
        "Why are you late?",
        "She does not eat meat.",
        "I am not hungry.",
        "Where is the train station?",  # styles.xml: the page header
        "How much is this book?",  # and footer
    ]
    assert [run.text for run in extracted.units[1].runs] == ["The weather ", "is very", " nice."]
    assert [run.fixed for run in extracted.units[2].runs] == [False, True, False, True, False, True, False]
    assert extracted.units[3].runs[-1].fixed


def test_identity_round_trip_is_the_same_file(original):
    extracted = odt.read(original)
    assert extracted.render([None] * len(extracted.units), target="zh") == original


def test_rendered_document_has_the_same_structure_and_only_new_texts(original):
    from odf import office, text

    extracted = odt.read(original)
    out = extracted.render(fake_translations(extracted), target="zh")
    before, after = _load(original), _load(out)
    assert _shape(after) == _shape(before)
    headings = _texts(after, text.H)
    assert headings == ["译0.0"]
    spans = _texts(after, text.Span)
    assert spans == ["译1.1"]
    assert [str(span.getAttribute("stylename")) for span in after.getElementsByType(text.Span)] == ["Bold"]
    assert _texts(after, office.Annotation) == _texts(before, office.Annotation)  # the comment is unchanged
    assert _texts(after, text.NoteCitation) == ["1"]
    assert _texts(after, text.NoteBody) == ["译4.0"]
    assert changed_members(original, out) == {"content.xml", "styles.xml"}
    with zipfile.ZipFile(io.BytesIO(out)) as archive:
        first = archive.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
    content = members(out)["content.xml"].decode()
    assert '<text:p>译2.0<text:s text:c="3"/>译2.2<text:tab/>译2.4<text:line-break/>译2.6</text:p>' in content
    styles = members(out)["styles.xml"].decode()
    assert "<text:p>译10.0</text:p>" in styles and "<text:p>译11.0</text:p>" in styles


def test_a_mimetype_out_of_place_is_put_first_and_stored(original):
    parts = members(original)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in [*[n for n in parts if n != "mimetype"], "mimetype"]:
            archive.writestr(name, parts[name])
    extracted = odt.read(buffer.getvalue())
    out = extracted.render([None] * len(extracted.units), target="zh")
    with zipfile.ZipFile(io.BytesIO(out)) as archive:
        first = archive.infolist()[0]
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert archive.read("mimetype") == parts["mimetype"]
        assert {name: archive.read(name) for name in archive.namelist()} == parts


def test_other_documents_are_refused(original):
    parts = members(original)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        archive.writestr("content.xml", parts["content.xml"])
    with pytest.raises(DocumentError, match="not an OpenDocument text"):
        odt.read(buffer.getvalue())
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in parts.items():
            if name == "META-INF/manifest.xml":
                content = content.replace(b"</manifest:manifest>", b"<manifest:encryption-data/></manifest:manifest>")
            archive.writestr(name, content)
    with pytest.raises(DocumentError, match="password"):
        odt.read(buffer.getvalue())


def test_end_to_end_with_the_tiny_model(bundle_dir, original):
    from odf import text

    from engine.pipeline.translator import Translator

    translator = Translator(Path(bundle_dir))
    extracted = odt.read(original)
    translations = [
        distribute(unit, translator.translate(unit.source).text) if unit.translatable else None
        for unit in extracted.units
    ]
    after = _load(extracted.render(translations, target="zh"))
    heading = _texts(after, text.H)[0]
    assert heading == translator.translate("Good morning, everyone!").text
    assert any("\u4e00" <= ch <= "\u9fff" for ch in heading)
    assert translator.translate("Who is that man?").text in _texts(after, text.P)
