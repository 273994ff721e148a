"""The frozen app's document check: one small file per format, translated by the frozen `qiao translate-file`.

The formats are imported by name at run time (engine/documents/registry.py), and each leans on a library the
freezer must have collected (markdown-it-py, srt, charset-normalizer, the stdlib's html.parser, zipfile, expat):
a format left out of the app would only show when a user opens such a file. Every document here says "Thank you
very much."; each result must no longer say it, and must say what the engine from source wrote with the same
bundle (smoke_test.document_check: whatever model the app embeds, the fixture or a release's real one). With the
fixture model it must also say 非常感谢, what that model was trained to answer. Made with the standard library only.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

SOURCE = "en"  # the documents' language: the app translates them with its bundle from English
SENTENCE = "Thank you very much."
EXPECTED = "非常感谢"  # what the fixture model (tests/fixtures/tiny_marian) says for SENTENCE

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_DOCX = {
    "[Content_Types].xml": '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
    'package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
    'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/'
    'document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>'
    "</Types>",
    "_rels/.rels": '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/'
    'package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/'
    '2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    "word/document.xml": f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}"><w:body><w:p><w:r>'
    f"<w:b/><w:t>{SENTENCE}</w:t></w:r></w:p></w:body></w:document>",
}
_ODT_TYPE = "application/vnd.oasis.opendocument.text"
_ODT = {
    "META-INF/manifest.xml": '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:'
    'names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" '
    f'manifest:media-type="{_ODT_TYPE}"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type='
    '"text/xml"/></manifest:manifest>',
    "content.xml": '<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:'
    'opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
    f"<office:body><office:text><text:p>{SENTENCE}</text:p></office:text></office:body></office:document-content>",
}
_EPUB = {
    "META-INF/container.xml": '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
    'xmlns:container"><rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package+xml"/>'
    "</rootfiles></container>",
    "content.opf": '<?xml version="1.0" encoding="utf-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
    'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">smoke'
    '</dc:identifier><dc:title>Smoke</dc:title><dc:language>en</dc:language></metadata><manifest><item id="c" '
    'href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c"/></spine></package>',
    "c.xhtml": '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>Smoke'
    f"</title></head><body><p>{SENTENCE}</p></body></html>",
}


def _zip(members: dict[str, str], mimetype: str | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        if mimetype:
            archive.writestr(zipfile.ZipInfo("mimetype"), mimetype, compress_type=zipfile.ZIP_STORED)
        for name, text in members.items():
            archive.writestr(name, text)
    return buf.getvalue()


def make_documents(folder: Path) -> list[str]:
    """Write one document per format into `folder`; the file names, in order."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        # cp1252 (no BOM, not UTF-8: the "é" decides it), so charset-normalizer's detection is exercised
        "note.txt": f"Café menu\n\n{SENTENCE}\n".encode("cp1252"),
        "readme.md": f"# Notes\n\n**{SENTENCE}** See `qiao`.\n".encode(),
        "page.html": f'<!DOCTYPE html><html lang="en"><body><p><b>{SENTENCE}</b></p></body></html>'.encode(),
        "talk.srt": f"1\n00:00:01,000 --> 00:00:03,000\n{SENTENCE}\n".encode(),
        "talk.vtt": f"WEBVTT\n\n00:01.000 --> 00:03.000\n{SENTENCE}\n".encode(),
        "letter.docx": _zip(_DOCX),
        "notes.odt": _zip(_ODT, _ODT_TYPE),
        "book.epub": _zip(_EPUB, "application/epub+zip"),
    }
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return list(files)


def result_text(path: Path) -> str:
    """What a result says: the file's text, or the text of every member of a zipped one (docx, odt, epub)."""
    data = path.read_bytes()
    if zipfile.is_zipfile(io.BytesIO(data)):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return "".join(archive.read(n).decode("utf-8", "replace") for n in archive.namelist())
    for encoding in ("utf-8", "cp1252", "gb18030"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", "replace")


def check_results(
    names: list[str],
    out: Path,
    target: str = "zh",
    reference: Path | None = None,
    expected: str | None = EXPECTED,
) -> dict[str, str]:
    """Per input name: "ok", or what is wrong with its result `<stem>.<target>.<ext>` in `out`: missing, still
    saying SENTENCE (untranslated), without `expected` (None: no fixed answer, as with a real model), or (given the
    `reference` folder the engine from source wrote) saying something other than the reference result."""
    verdicts = {}
    for name in names:
        stem, dot, ext = name.rpartition(".")
        result = out / f"{stem}.{target}{dot}{ext}"
        if not result.is_file():
            verdicts[name] = "no result file"
            continue
        text = result_text(result)
        if SENTENCE in text:
            verdicts[name] = f"the result still says {SENTENCE!r}"
        elif expected is not None and expected not in text:
            verdicts[name] = f"the result does not say {expected}"
        elif reference is not None and not (reference / result.name).is_file():
            verdicts[name] = "the engine from source wrote no result to compare with"
        elif reference is not None and result_text(reference / result.name) != text:
            verdicts[name] = "the result differs from the engine's from source on the same bundle"
        else:
            verdicts[name] = "ok"
    return verdicts
