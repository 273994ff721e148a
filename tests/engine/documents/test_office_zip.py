"""The zip writer under the Office formats: untouched members copied byte for byte, changed ones deflated anew."""

from __future__ import annotations

import io
import zipfile

import pytest

from engine.documents.formats import _xml
from engine.documents.formats._zip import ZipArchive
from engine.documents.model import DocumentError


class _Unseekable(io.RawIOBase):
    """A stream zipfile cannot seek back in: it then writes data descriptors after each member."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.buffer += data
        return len(data)


def _sample(stream: bool = False, zip64: bool = False) -> bytes:
    target = _Unseekable() if stream else io.BytesIO()
    with zipfile.ZipFile(target, "w") as archive:
        archive.comment = b"archive comment"
        stored = zipfile.ZipInfo("mimetype", date_time=(2020, 1, 2, 3, 4, 6))
        archive.writestr(stored, b"application/x-test", compress_type=zipfile.ZIP_STORED)
        for index in range(3):
            info = zipfile.ZipInfo(f"part{index}.xml", date_time=(2021, 5, 6, 7, 8, 10))
            info.external_attr = 0o644 << 16
            info.comment = b"member comment"
            with archive.open(info, "w", force_zip64=zip64) as member:
                member.write(f"<a>{'text ' * 200}{index}</a>".encode())
        archive.writestr("image.png", bytes(range(256)) * 4, compress_type=zipfile.ZIP_STORED)
    return bytes(target.buffer) if stream else target.getvalue()


def _stored_forms(data: bytes) -> list[tuple]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None
        return [
            (i.filename, i.compress_type, i.CRC, i.compress_size, i.date_time, i.external_attr, i.comment, i.flag_bits)
            for i in archive.infolist()
        ]


@pytest.mark.parametrize(("stream", "zip64"), [(False, False), (True, False), (False, True)])
def test_rewrite_copies_untouched_members_byte_for_byte(stream, zip64):
    data = _sample(stream, zip64)
    archive = ZipArchive(data)
    unchanged = archive.rewrite({})
    assert _stored_forms(unchanged) == _stored_forms(data)
    assert zipfile.ZipFile(io.BytesIO(unchanged)).comment == b"archive comment"
    if not zip64:
        assert unchanged == data  # local headers, data, descriptors and central records alike

    out = archive.rewrite({"part1.xml": b"<a>new</a>"})
    before, after = _stored_forms(data), _stored_forms(out)
    assert [row[0] for row in after] == [row[0] for row in before]  # same order
    for old, new in zip(before, after, strict=True):
        if old[0] != "part1.xml":
            assert new == old
    with zipfile.ZipFile(io.BytesIO(out)) as result:
        assert result.read("part1.xml") == b"<a>new</a>"
        info = result.getinfo("part1.xml")
        assert info.compress_type == zipfile.ZIP_DEFLATED and info.date_time == (2021, 5, 6, 7, 8, 10)
        assert info.external_attr == 0o644 << 16 and info.comment == b"member comment"
        original = zipfile.ZipFile(io.BytesIO(data))
        for name in ("mimetype", "part0.xml", "part2.xml", "image.png"):
            assert result.read(name) == original.read(name)
    # Bytes of an untouched member's local record appear unchanged in the output.
    original = zipfile.ZipFile(io.BytesIO(data))
    info = original.getinfo("image.png")
    raw = data[info.header_offset : info.header_offset + 30 + len("image.png") + len(info.extra) + info.compress_size]
    assert raw in out


def test_rewrite_can_move_and_store_a_member():
    data = _sample()
    archive = ZipArchive(data)
    out = archive.rewrite({}, stored=("part2.xml",), first="part2.xml")
    with zipfile.ZipFile(io.BytesIO(out)) as result:
        assert result.namelist()[0] == "part2.xml"
        assert result.getinfo("part2.xml").compress_type == zipfile.ZIP_STORED
        assert result.read("part2.xml") == zipfile.ZipFile(io.BytesIO(data)).read("part2.xml")


def test_rewrite_refuses_unknown_members():
    with pytest.raises(DocumentError, match=r"nope\.xml"):
        ZipArchive(_sample()).rewrite({"nope.xml": b""})


def test_splice_and_escape():
    data = b"<a>one</a><b>two</b>"
    assert _xml.splice(data, [(13, 16, b"2"), (3, 6, b"1"), (0, 0, b"<?x?>")]) == b"<?x?><a>1</a><b>2</b>"
    with pytest.raises(ValueError):
        _xml.splice(data, [(3, 6, b""), (4, 5, b"")])
    assert _xml.escape("a & <b> \r 中\x07") == "a &amp; &lt;b&gt; &#13; 中".encode()
    assert _xml.escape("中", "iso-8859-1") == b"&#20013;"


def test_start_tag_end_skips_quoted_brackets():
    data = b"<w:t a=\">\" b='/>'>x</w:t><w:br/>"
    assert _xml.start_tag_end(data, 0) == (data.index(b"x"), False)
    assert _xml.start_tag_end(data, data.index(b"<w:br")) == (len(data), True)


def test_scan_reports_offsets_and_refuses_dtds():
    class Texts(_xml.Handler):
        def __init__(self) -> None:
            self.found: list[tuple[str, int]] = []

        def text(self, text: str) -> None:
            self.found.append((text, self.at()))

    data = b'<?xml version="1.0"?><a xmlns="urn:x"><b>one</b>two</a>'
    handler = Texts()
    assert _xml.scan(data, handler, "part.xml") == "utf-8"
    assert handler.found == [("one", data.index(b"one")), ("two", data.index(b"two"))]
    doctype = b"<!DOCTYPE html><html>x</html>"
    with pytest.raises(DocumentError, match="DTD"):
        _xml.scan(doctype, _xml.Handler(), "page.xhtml")
    assert _xml.scan(doctype, _xml.Handler(), "page.xhtml", allow_doctype=True) == "utf-8"
    with pytest.raises(DocumentError, match="DTD"):
        _xml.scan(b'<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>', _xml.Handler(), "a.xml", allow_doctype=True)


def test_rewrite_adds_members_and_can_put_one_first():
    data = _sample()
    archive = ZipArchive(data)
    out = archive.rewrite({}, added={"extra.txt": b"added"})
    with zipfile.ZipFile(io.BytesIO(out)) as result:
        assert result.testzip() is None
        assert result.namelist() == [*archive.names, "extra.txt"]
        assert result.read("extra.txt") == b"added"
        assert result.getinfo("extra.txt").date_time == (1980, 1, 1, 0, 0, 0)
    assert out.startswith(data[: zipfile.ZipFile(io.BytesIO(data)).start_dir])  # the old members, byte for byte
    out = archive.rewrite({}, added={"中.txt": b"x"}, stored=("中.txt",), first="中.txt")
    with zipfile.ZipFile(io.BytesIO(out)) as result:
        assert result.namelist() == ["中.txt", *archive.names]
        assert result.getinfo("中.txt").compress_type == zipfile.ZIP_STORED
        assert result.read("中.txt") == b"x"
    with pytest.raises(DocumentError, match="already in"):
        archive.rewrite({}, added={"mimetype": b"x"})


def test_a_stored_member_loses_its_extra_field_and_data_descriptor():
    extra = b"\x55\x54\x05\x00\x01\x00\x00\x00\x00"  # an "extended timestamp" field
    for stream in (False, True):  # written to a stream, a member gets a data descriptor
        target = _Unseekable() if stream else io.BytesIO()
        with zipfile.ZipFile(target, "w") as archive:
            info = zipfile.ZipInfo("mimetype", (2020, 1, 2, 3, 4, 6))
            info.extra = extra
            archive.writestr(info, b"application/x-test", compress_type=zipfile.ZIP_STORED)
            archive.writestr("part.xml", b"<a/>")
        data = bytes(target.buffer) if stream else target.getvalue()
        assert data[28:30] == b"\x09\x00" and bool(data[6] & 0x8) == stream  # the extra field, the descriptor
        out = ZipArchive(data).rewrite({}, stored=("mimetype",), first="mimetype")
        assert out[26:30] == b"\x08\x00\x00\x00"  # name length 8, no extra field
        assert out[30:38] == b"mimetype" and out[38:56] == b"application/x-test"
        with zipfile.ZipFile(io.BytesIO(out)) as result:
            assert result.testzip() is None
            info = result.getinfo("mimetype")
            assert info.compress_type == zipfile.ZIP_STORED and not info.flag_bits & 0x8
            assert info.date_time == (2020, 1, 2, 3, 4, 6)
    bare = _sample()  # its mimetype is already bare: copied as it was
    assert ZipArchive(bare).rewrite({}, stored=("mimetype",), first="mimetype") == bare


def test_caps_and_the_encrypted_message_can_be_set_per_archive():
    data = _sample()
    with pytest.raises(DocumentError, match="at most 3"):
        ZipArchive(data, max_members=3)
    with pytest.raises(DocumentError, match="zip bomb"):
        ZipArchive(data, max_total_bytes=1000)
    encrypted = bytearray(data)
    at = encrypted.find(b"PK\x01\x02")
    encrypted[at + 8] |= 0x1
    with pytest.raises(DocumentError, match="password"):
        ZipArchive(bytes(encrypted))
    with pytest.raises(DocumentError, match="DRM"):
        ZipArchive(bytes(encrypted), encrypted="DRM")


def test_verify_names_a_damaged_member():
    data = bytearray(_sample())
    ZipArchive(bytes(data)).verify()
    info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("image.png")
    at = info.header_offset + 30 + len(info.filename) + len(info.extra) + 10
    data[at] ^= 0xFF
    archive = ZipArchive(bytes(data))  # reading the directory does not inflate anything
    with pytest.raises(DocumentError, match=r"image\.png"):
        archive.verify()
