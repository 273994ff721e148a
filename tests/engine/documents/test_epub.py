"""engine.documents.formats.epub: a book's chapters translated, every other member copied unchanged."""

from __future__ import annotations

import io
import random
import struct
import zipfile
import zlib

import pytest
from lxml import etree  # test oracle only: the app never imports lxml

from engine.documents import registry
from engine.documents.formats import epub
from engine.documents.model import DocumentError
from tests.engine.documents.markup_helpers import TRANSLATED_ATTRS, made_up, translate

CONTAINER = b"""<?xml version="1.0" encoding="UTF-8"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
  <rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles>
</container>
"""

OPF = b"""<?xml version="1.0" encoding="UTF-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
  <metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
    <dc:identifier id="id">urn:uuid:12345678-1234-1234-1234-123456789abc</dc:identifier>
    <dc:title>Everyday sentences</dc:title>
    <dc:language>en</dc:language>
    <meta property="dcterms:modified">2024-01-01T00:00:00Z</meta>
  </metadata>
  <manifest>
    <item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>
    <item id="c1" href="text/chapter%201.xhtml" media-type="application/xhtml+xml"/>
    <item id="c2" href="text/chapter2.xhtml" media-type="application/xhtml+xml"/>
    <item id="css" href="style.css" media-type="text/css"/>
    <item id="cover" href="images/cover.jpg" media-type="image/jpeg" properties="cover-image"/>
    <item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>
  </manifest>
  <spine toc="ncx"><itemref idref="c1"/><itemref idref="c2"/></spine>
</package>
"""

NAV = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="en" xml:lang="en">
<head><title>Contents</title></head>
<body>
  <nav epub:type="toc"><ol>
    <li><a href="text/chapter%201.xhtml">Good morning, everyone!</a></li>
    <li><a href="text/chapter2.xhtml">It is raining today.</a></li>
  </ol></nav>
</body>
</html>
"""

CHAPTER_1 = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en" xml:lang="en">
<head><title>Good morning, everyone!</title><link rel="stylesheet" type="text/css" href="../style.css"/></head>
<body>
  <h1>Good morning, everyone!</h1>
  <p>Hello, how are you? <em>Thank you very much.</em></p>
  <p>Please <b>open the window</b>.</p>
  <img src="../images/cover.jpg" alt="I like green tea."/>
  <pre>See you tomorrow. &amp; kept</pre>
</body>
</html>
"""

CHAPTER_2 = """<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml" lang="en">
<head><title>It is raining today.</title></head>
<body>
  <h1>It is raining today.</h1>
  <p>The weather is very nice.<br/>It will snow tomorrow.</p>
  <script type="text/javascript"><![CDATA[ if (a < b) { go(); } ]]></script>
  <p><span translate="no">Qiao</span> Where is the train station?</p>
</body>
</html>
"""

NCX = b"""<?xml version="1.0" encoding="UTF-8"?>
<ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1"><head/><docTitle><text>Everyday</text></docTitle>
<navMap><navPoint id="p1"><navLabel><text>Good morning, everyone!</text></navLabel>
<content src="text/chapter%201.xhtml"/></navPoint></navMap></ncx>
"""

COVER = bytes(range(256)) * 40  # stands for a JPEG: binary, must come back byte for byte
MIMETYPE_BYTES = b"application/epub+zip"
CONTENT = ("OEBPS/nav.xhtml", "OEBPS/text/chapter 1.xhtml", "OEBPS/text/chapter2.xhtml")


def members(extra: dict[str, bytes] | None = None) -> dict[str, bytes]:
    found = {
        "mimetype": b"application/epub+zip",
        "META-INF/container.xml": CONTAINER,
        "OEBPS/content.opf": OPF,
        "OEBPS/nav.xhtml": NAV.encode(),
        "OEBPS/text/chapter 1.xhtml": CHAPTER_1.encode(),
        "OEBPS/text/chapter2.xhtml": CHAPTER_2.encode(),
        "OEBPS/style.css": b"body { font-family: serif; } /* Thank you very much. */",
        "OEBPS/images/cover.jpg": COVER,
        "OEBPS/toc.ncx": NCX,
    }
    found.update(extra or {})
    return found


def build(files: dict[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in (files or members()).items():
            method = zipfile.ZIP_STORED if name in ("mimetype", "OEBPS/images/cover.jpg") else zipfile.ZIP_DEFLATED
            archive.writestr(zipfile.ZipInfo(name, (2024, 5, 6, 7, 8, 10)), data, compress_type=method)
    return out.getvalue()


def unpack(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {info.filename: archive.read(info) for info in archive.infolist()}


def tags(xhtml: bytes) -> list[tuple]:
    """Element structure as an XML parser sees it (the result must still be well-formed XHTML)."""
    root = etree.fromstring(xhtml)
    return [
        (element.tag, sorted((k, v) for k, v in element.attrib.items() if k.rsplit("}", 1)[-1] not in TRANSLATED_ATTRS))
        for element in root.iter()
    ]


def test_units_come_from_the_manifests_xhtml_documents():
    book = epub.read(build())
    assert [unit.source for unit in book.units] == [
        "Everyday sentences",
        "Contents",
        "Good morning, everyone!",
        "It is raining today.",
        "Good morning, everyone!",
        "Good morning, everyone!",
        "Hello, how are you? Thank you very much.",
        "Please open the window.",
        "I like green tea.",
        "It is raining today.",
        "It is raining today.",
        "The weather is very nice.",
        "It will snow tomorrow.",
        "Qiao Where is the train station?",
        "Everyday",
        "Good morning, everyone!",
    ]


def test_identity_round_trip_keeps_every_member():
    data = build()
    book = epub.read(data)
    out = book.render([None] * len(book.units), target="zh")
    assert unpack(out) == members()


def test_translated_book_keeps_its_structure():
    data = build()
    book = epub.read(data)
    out = book.render(made_up(book), target="zh")
    with zipfile.ZipFile(io.BytesIO(out)) as archive:
        infos = archive.infolist()
        assert infos[0].filename == "mimetype"
        assert infos[0].compress_type == zipfile.ZIP_STORED
        assert archive.testzip() is None
        assert [info.filename for info in infos] == list(members())
        assert [info.date_time for info in infos] == [(2024, 5, 6, 7, 8, 10)] * len(infos)
        assert archive.getinfo("OEBPS/images/cover.jpg").compress_type == zipfile.ZIP_STORED
    # mimetype first in the bytes too: an EPUB reader checks the file's first bytes
    assert out[30:38] == b"mimetype" and out[38:58] == b"application/epub+zip"
    original, result = members(), unpack(out)
    for name in original:
        if name in CONTENT:
            assert result[name] != original[name]
            assert tags(result[name]) == tags(original[name])
        elif name == "OEBPS/content.opf":
            expected = original[name].replace(b"<dc:language>en</dc:language>", b"<dc:language>zh</dc:language>")
            title = "<dc:title>«EVERYDAY SENTENCES»&lt;&amp;&gt;</dc:title>".encode()
            assert result[name] == expected.replace(b"<dc:title>Everyday sentences</dc:title>", title)
        elif name == "OEBPS/toc.ncx":
            label = "<text>«GOOD MORNING, EVERYONE!»&lt;&amp;&gt;</text>".encode()
            assert result[name] == original[name].replace(b"<text>Good morning, everyone!</text>", label).replace(
                b"<text>Everyday</text>", "<text>«EVERYDAY»&lt;&amp;&gt;</text>".encode()
            )
            assert tags(result[name]) == tags(original[name])
        else:
            assert result[name] == original[name], name
    chapter = result["OEBPS/text/chapter2.xhtml"].decode()
    assert "<![CDATA[ if (a < b) { go(); } ]]>" in chapter
    assert '<span translate="no">Qiao</span>' in chapter
    assert 'lang="zh"' in chapter
    assert "<pre>See you tomorrow. &amp; kept</pre>" in result["OEBPS/text/chapter 1.xhtml"].decode()


def test_registry_knows_the_format(tmp_path):
    assert registry.for_path(tmp_path / "book.EPUB").name == "epub"


def test_drm_is_refused():
    encryption = b"""<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
        xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
        <enc:EncryptionMethod Algorithm="http://www.w3.org/2001/04/xmlenc#aes128-cbc"/>
        <enc:CipherData><enc:CipherReference URI="OEBPS/text/chapter2.xhtml"/></enc:CipherData>
        </enc:EncryptedData></encryption>"""
    with pytest.raises(DocumentError, match="DRM"):
        epub.read(build(members({"META-INF/encryption.xml": encryption})))
    with pytest.raises(DocumentError, match="DRM"):
        epub.read(build(members({"META-INF/rights.xml": b"<rights/>"})))


def test_font_obfuscation_is_not_drm():
    encryption = b"""<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container"
        xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>
        <enc:EncryptionMethod Algorithm="http://www.idpf.org/2008/embedding"/>
        <enc:CipherData><enc:CipherReference URI="OEBPS/fonts/a.otf"/></enc:CipherData>
        </enc:EncryptedData></encryption>"""
    book = epub.read(build(members({"META-INF/encryption.xml": encryption})))
    assert len(book.units) == 16


def test_encrypted_zip_member_is_refused():
    data = bytearray(build())
    # Set the "encrypted" flag of every entry in the central directory (what zipfile reads).
    at = data.find(b"PK\x01\x02")
    while at >= 0:
        (flags,) = struct.unpack_from("<H", data, at + 8)
        struct.pack_into("<H", data, at + 8, flags | 0x1)
        at = data.find(b"PK\x01\x02", at + 4)
    with pytest.raises(DocumentError, match="encrypted"):
        epub.read(bytes(data))


@pytest.mark.parametrize("name", ["../evil.xhtml", "/etc/passwd", "OEBPS/../../x", "C:/x", "a\\..\\..\\b"])
def test_member_names_outside_the_archive_are_refused(name):
    with pytest.raises(DocumentError, match="outside"):
        epub.read(build(members({name: b"x"})))


def test_zip_bombs_are_refused(monkeypatch):
    monkeypatch.setattr(epub, "MAX_UNCOMPRESSED", 1024 * 1024)
    with pytest.raises(DocumentError, match="zip bomb"):
        epub.read(build(members({"OEBPS/huge.bin": bytes(2 * 1024 * 1024)})))
    monkeypatch.setattr(epub, "MAX_MEMBERS", 20)
    with pytest.raises(DocumentError, match="files inside"):
        epub.read(build(members({f"OEBPS/f{i}.txt": b"" for i in range(20)})))


def test_not_an_epub():
    with pytest.raises(DocumentError, match="container"):
        epub.read(build({"mimetype": b"application/epub+zip", "a.txt": b"x"}))
    with pytest.raises(DocumentError, match="not an EPUB"):
        epub.read(build(members({"mimetype": b"application/vnd.oasis.opendocument.text"})))
    with pytest.raises(DocumentError, match="zip"):
        epub.read(b"PK\x03\x04 not really")


def test_missing_mimetype_is_added_first():
    files = members()
    del files["mimetype"]
    book = epub.read(build(files))
    out = book.render([None] * len(book.units), target="zh")
    assert next(iter(unpack(out))) == "mimetype"


def test_damaged_member_is_a_document_error():
    data = bytearray(build())
    at = bytes(data).find(b"PK\x03\x04", 100)  # some member after mimetype: flip bytes in its data
    data[at + 60 : at + 64] = b"\xff\xff\xff\xff"
    with pytest.raises(DocumentError):
        epub.read(bytes(data))


# -- fuzz: never a traceback ------------------------------------------------------------------------------------


def _survives(data: bytes) -> None:
    try:
        book = epub.read(data)
    except DocumentError:
        return
    out = book.render(made_up(book), target="zh")
    with zipfile.ZipFile(io.BytesIO(out)) as archive:
        assert archive.infolist()[0].filename == "mimetype"


def test_fuzz_truncations():
    data = build()
    for end in range(0, len(data), max(1, len(data) // 150)):
        _survives(data[:end])


@pytest.mark.parametrize("seed", range(60))
def test_fuzz_flipped_bytes(seed):
    rng = random.Random(seed)
    data = bytearray(build())
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    _survives(bytes(data))


@pytest.mark.parametrize("seed", range(10))
def test_fuzz_random_bytes(seed):
    rng = random.Random(seed)
    _survives(b"PK\x03\x04" + bytes(rng.randrange(256) for _ in range(rng.randint(0, 2000))))


def test_fuzz_garbage_chapter():
    rng = random.Random(3)
    garbage = bytes(rng.randrange(256) for _ in range(3000))
    _survives(build(members({"OEBPS/text/chapter2.xhtml": garbage})))
    deep = b"<html><body>" + b"<div>" * 10_000 + b"Hello" + b"</div>" * 10_000 + b"</body></html>"
    book = epub.read(build(members({"OEBPS/text/chapter2.xhtml": deep})))
    assert "Hello" in [unit.source for unit in book.units]


# -- code marked only by a stylesheet's monospace class (LibreOffice 7.4's EPUB) ---------------------------------

LO_CSS = b"""/* LibreOffice 7.4 (libepubgen) writes one class per automatic style */
.span2 {
}

.span4 {
  font-family: 'Courier New';
  font-size: 10.0000pt;
}

.span5 { font-weight: bold; }
@media screen { p.listing, .other { font: 10pt "Menlo", monospace } }
.serif, .note span { font-family: Georgia, serif }
"""
LO_CHAPTER = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><head>'
    b'<link href="../style.css" rel="stylesheet" type="text/css"/></head><body class="body0">'
    b'<p class="para2"><span class="span2">Run </span><span class="span4">make test</span><span class="span2"> '
    b'before you come, and </span><span class="span5">read</span><span class="span2"> the guide.</span></p>'
    b'<p class="para3"><span class="span4">print(&quot;Good morning, everyone!&quot;)</span></p>'
    b'<p class="listing">The printer is not working.</p>'
    b'<p class="serif">The weather is very nice.</p></body></html>'
)


def test_code_classes_are_the_stylesheets_monospace_classes():
    from engine.documents.formats._code import code_classes

    assert code_classes(LO_CSS.decode()) == {"span4", "listing", "other"}
    assert code_classes("/* .a { font-family: Menlo } */ .b { font-family: 'Liberation Mono' !important }") == {"b"}
    assert (
        code_classes(".a { color: red } .b:hover { font-family: Courier } div > .c { font-family: Courier }") == set()
    )


@pytest.mark.parametrize("css", ["{" * 2_000_000, "}" * 2_000_000, "/*" * 1_000_000, "a" * 5_000_000, ".a{" * 500_000])
def test_a_hostile_stylesheet_is_read_in_bounded_time(css):
    import time

    from engine.documents.formats._code import code_classes

    start = time.perf_counter()
    assert code_classes(css) == set()
    assert time.perf_counter() - start < 2


def test_code_marked_by_a_monospace_class_stays_code():
    """Issue 27 item 1: LibreOffice's EPUB marks code only by a class its CSS sets in Courier New; its code block
    came back translated (打印机坏了。) and its inline code was lost."""
    data = build(members({"OEBPS/style.css": LO_CSS, "OEBPS/text/chapter2.xhtml": LO_CHAPTER}))
    book = epub.read(data)
    units = [unit for unit in book.units if "guide" in unit.source or "weather" in unit.source]
    assert [unit.source for unit in book.units if "print(" in unit.source or "printer" in unit.source] == []
    assert [(run.text, run.fixed) for run in units[0].runs if run.fixed] == [("make test", True)]
    assert units[1].source == "The weather is very nice."  # a serif class is not code
    out = unpack(book.render(made_up(book), target="zh"))["OEBPS/text/chapter2.xhtml"]
    for kept in (b'<span class="span4">make test</span>', b"print(&quot;Good morning, everyone!&quot;)",
                 b'<p class="listing">The printer is not working.</p>'):  # fmt: skip
        assert kept in out
    assert b"The weather is very nice." not in out and b"before you come" not in out
    # without the stylesheet the same chapter's code is text to translate, as it was before
    plain = epub.read(build(members({"OEBPS/text/chapter2.xhtml": LO_CHAPTER})))
    assert any("print(" in unit.source for unit in plain.units)


# -- end to end with the tiny en→zh model -----------------------------------------------------------------------


def test_end_to_end_with_the_tiny_model(bundle_dir):
    from engine.pipeline.translator import Translator

    book = epub.read(build())
    out = unpack(book.render(translate(book, Translator(bundle_dir)), target="zh"))
    chapter = out["OEBPS/text/chapter2.xhtml"].decode()
    for known in ("今天在下雨。", "天气很好。", "明天会下雪。"):
        assert known in chapter
    assert "大家早上好！" in out["OEBPS/nav.xhtml"].decode()
    assert "<text>大家早上好！</text>" in out["OEBPS/toc.ncx"].decode()
    for name in CONTENT:
        assert tags(out[name]) == tags(members()[name])


def test_directory_entries_are_kept():
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members().items():
            archive.writestr(name, data)
        archive.writestr(zipfile.ZipInfo("OEBPS/fonts/"), b"")
    book = epub.read(out.getvalue())
    with zipfile.ZipFile(io.BytesIO(book.render(made_up(book), target="zh"))) as archive:
        assert archive.getinfo("OEBPS/fonts/").is_dir()


# -- the zip: untouched members copied as they were -------------------------------------------------------------


def _local_record(data: bytes, name: str) -> tuple[int, bytes]:
    """(extra field length in the local header, compressed bytes) of member `name`, as they lie in `data`."""
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(name)
    name_len, extra_len = struct.unpack_from("<HH", data, info.header_offset + 26)
    start = info.header_offset + 30 + name_len + extra_len
    return extra_len, data[start : start + info.compress_size]


def test_untouched_members_keep_their_compressed_bytes():
    style = "".join(f".c{i} {{ margin: {i}px; color: #{i * 7919 % 0xFFFFFF:06x}; }}\n" for i in range(400)).encode()
    files = members({"OEBPS/style.css": style})
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files.items():
            stored = name in ("mimetype", "OEBPS/images/cover.jpg")
            method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            # level 1: compressing the member again (at zlib's default level) would give other bytes
            archive.writestr(name, data, compress_type=method, compresslevel=1)
    data = out.getvalue()
    _, original_css = _local_record(data, "OEBPS/style.css")
    compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
    assert compressor.compress(style) + compressor.flush() != original_css  # so the check below can fail

    book = epub.read(data)
    result = book.render(made_up(book), target="zh")
    assert unpack(result)["OEBPS/style.css"] == style
    for name in ("mimetype", "META-INF/container.xml", "OEBPS/style.css", "OEBPS/images/cover.jpg"):
        assert _local_record(result, name) == _local_record(data, name), name
    for name in (*CONTENT, "OEBPS/content.opf", "OEBPS/toc.ncx"):
        assert _local_record(result, name) != _local_record(data, name), name


def test_mimetype_is_written_first_stored_and_without_an_extra_field():
    timestamp = struct.pack("<HHBI", 0x5455, 5, 1, 1_700_000_000)  # an "extended timestamp" extra field
    for method in (zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as archive:
            for name, data in members().items():
                if name != "mimetype":
                    archive.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
            info = zipfile.ZipInfo("mimetype", (2024, 5, 6, 7, 8, 10))
            info.extra = timestamp
            archive.writestr(info, MIMETYPE_BYTES, compress_type=method)  # last, compressed or with an extra field
        data = out.getvalue()
        assert _local_record(data, "mimetype")[0] == len(timestamp)
        book = epub.read(data)
        result = book.render([None] * len(book.units), target="zh")
        with zipfile.ZipFile(io.BytesIO(result)) as archive:
            first = archive.infolist()[0]
            assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
            assert first.date_time == (2024, 5, 6, 7, 8, 10)
            assert archive.testzip() is None
        assert _local_record(result, "mimetype") == (0, MIMETYPE_BYTES)
        assert result[30:38] == b"mimetype" and result[38:58] == MIMETYPE_BYTES
        assert unpack(result) == members()


def test_a_damaged_image_fails_the_read():
    data = bytearray(build())
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("OEBPS/images/cover.jpg")
    at = info.header_offset + 30 + len(info.filename) + 100
    data[at : at + 4] = bytes(4) if data[at : at + 4] != bytes(4) else b"\xff" * 4
    with pytest.raises(DocumentError, match=r"cover\.jpg"):
        epub.read(bytes(data))


def test_a_truncated_book_says_so():
    with pytest.raises(DocumentError, match="damaged or not an EPUB book at all"):
        epub.read(build()[:-30])
