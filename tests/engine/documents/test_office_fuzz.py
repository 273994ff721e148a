"""Broken, hostile and damaged Office files: always a DocumentError with a message, never another exception."""

from __future__ import annotations

import io
import random
import struct
import warnings
import zipfile
import zlib

import pytest

from engine.documents.formats import _zip, docx, odt, pptx
from engine.documents.model import DocumentError
from tests.engine.documents.office_docs import fake_translations, make_docx, make_odt, make_pptx, members

FORMATS = {"docx": (docx, make_docx), "pptx": (pptx, make_pptx), "odt": (odt, make_odt)}


@pytest.fixture(scope="module")
def samples() -> dict[str, bytes]:
    return {name: make() for name, (_module, make) in FORMATS.items()}


def _zip_of(parts: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate names some tests want
        with zipfile.ZipFile(buffer, "w", method) as archive:
            for name, content in parts.items() if isinstance(parts, dict) else parts:
                archive.writestr(name, content)
    return buffer.getvalue()


def _read_and_render(module, data: bytes) -> None:
    """Read `data`; when that works, render it too: either step may refuse, but only with a DocumentError."""
    try:
        extracted = module.read(data)
    except DocumentError as exc:
        assert str(exc)
        return
    try:
        extracted.render(fake_translations(extracted), target="zh")
    except DocumentError as exc:
        assert str(exc)


@pytest.mark.parametrize("name", FORMATS)
def test_random_bytes(name):
    module = FORMATS[name][0]
    rng = random.Random(15)
    for size in (0, 1, 4, 22, 100, 5000):
        with pytest.raises(DocumentError):
            module.read(bytes(rng.randrange(256) for _ in range(size)))
    with pytest.raises(DocumentError):
        module.read(b"PK\x03\x04" + bytes(rng.randrange(256) for _ in range(2000)))


@pytest.mark.parametrize("name", FORMATS)
def test_truncations_at_many_offsets(name, samples):
    module, data = FORMATS[name][0], samples[name]
    rng = random.Random(len(data))
    offsets = {0, 1, 2, 30, len(data) - 1, len(data) - 22, len(data) - 23, *rng.sample(range(len(data)), 60)}
    for offset in sorted(offsets):
        with pytest.raises(DocumentError):
            module.read(data[:offset])


@pytest.mark.parametrize("name", FORMATS)
def test_damaged_bytes_anywhere(name, samples):
    module, data = FORMATS[name][0], samples[name]
    rng = random.Random(7)
    for _ in range(80):
        damaged = bytearray(data)
        for _ in range(rng.choice((1, 3, 20))):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        _read_and_render(module, bytes(damaged))


@pytest.mark.parametrize("name", FORMATS)
def test_corrupt_or_hostile_xml_parts(name, samples):
    module, parts = FORMATS[name][0], members(samples[name])
    target = {"docx": "word/document.xml", "pptx": "ppt/slides/slide1.xml", "odt": "content.xml"}[name]
    for bad in (
        parts[target][: len(parts[target]) // 2],  # cut off
        parts[target].replace(b">", b"", 3),  # not well-formed
        b"",  # empty
        b'<?xml version="1.0"?><!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>',  # a DTD (entity bombs start here)
        "<?xml version='1.0' encoding='utf-16'?><a/>".encode("utf-16"),
        b"\x00\x01\x02 not xml",
    ):
        with pytest.raises(DocumentError, match=target.replace(".", r"\.")):
            module.read(_zip_of({**parts, target: bad}))


def test_the_content_types_part_is_checked(samples):
    parts = members(samples["docx"])
    with pytest.raises(DocumentError, match="Content_Types"):
        docx.read(_zip_of({name: content for name, content in parts.items() if name != "[Content_Types].xml"}))
    with pytest.raises(DocumentError, match="Content_Types"):
        docx.read(_zip_of({**parts, "[Content_Types].xml": b"<Types"}))


def test_a_missing_part_is_named(samples):
    parts = members(samples["docx"])
    with pytest.raises(DocumentError, match=r"word/document\.xml|main document"):
        docx.read(_zip_of({name: content for name, content in parts.items() if name != "word/document.xml"}))


def test_encrypted_office_files_and_members():
    with pytest.raises(DocumentError, match="password"):
        docx.read(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600))
    data = bytearray(_zip_of({"[Content_Types].xml": b"<a/>", "word/document.xml": b"<b/>"}))
    # Set the "encrypted" flag of every member, in the local headers and the central directory.
    for signature, flag_at in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            (flags,) = struct.unpack_from("<H", data, start + flag_at)
            struct.pack_into("<H", data, start + flag_at, flags | 1)
            start += 4
    for module in (docx, pptx, odt):
        with pytest.raises(DocumentError, match="password"):
            module.read(bytes(data))


@pytest.mark.parametrize("bad", ["../evil.xml", "/etc/passwd", "word/../../evil.xml", "C:/evil.xml", "a\\..\\b"])
def test_names_outside_the_document(bad, samples):
    parts = members(samples["docx"])
    with pytest.raises(DocumentError, match="unsafe"):
        docx.read(_zip_of({**parts, bad: b"x"}))


def test_duplicate_names(samples):
    parts = list(members(samples["docx"]).items())
    with pytest.raises(DocumentError, match="two files named"):
        docx.read(_zip_of([*parts, ("word/document.xml", b"<w:document/>")]))


def test_a_zip_bomb_is_refused_before_inflating():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", b"<Types/>")
        with archive.open(zipfile.ZipInfo("word/document.xml"), "w") as member:
            member._compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
            chunk = bytes(1 << 20)
            for _ in range(80):  # 80 MB of zeros: about 80 kB compressed
                member.write(chunk)
    data = buffer.getvalue()
    assert len(data) < 200_000
    with pytest.raises(DocumentError, match="zip bomb"):
        docx.read(data)


def test_declared_sizes_over_the_total_cap_are_refused():
    data = bytearray(_zip_of({f"word/part{i}.xml": b"<a/>" for i in range(3)}))
    start = 0
    while (start := data.find(b"PK\x01\x02", start)) >= 0:
        struct.pack_into("<I", data, start + 24, 600 << 20)  # each claims 600 MB uncompressed
        struct.pack_into("<I", data, start + 20, 300 << 20)  # from 300 MB (not a bomb by ratio)
        start += 4
    with pytest.raises(DocumentError, match="more than"):
        _zip.ZipArchive(bytes(data))


def test_too_many_members(monkeypatch):
    monkeypatch.setattr(_zip, "MAX_MEMBERS", 10)
    with pytest.raises(DocumentError, match="at most 10"):
        _zip.ZipArchive(_zip_of({f"m{i}": b"" for i in range(11)}))


def test_a_damaged_member_is_named(samples):
    data = bytearray(samples["docx"])
    archive = zipfile.ZipFile(io.BytesIO(bytes(data)))
    info = archive.getinfo("word/document.xml")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for offset in range(start + 10, start + 40):
        data[offset] ^= 0x55
    with pytest.raises(DocumentError, match=r"word/document\.xml"):
        docx.read(bytes(data))


@pytest.mark.parametrize("name", FORMATS)
def test_mutated_xml_parts(name, samples):
    """Well-formed or not, odd structures (cut, doubled or swapped stretches of markup) never crash the reader."""
    module, parts = FORMATS[name][0], members(samples[name])
    target = {"docx": "word/document.xml", "pptx": "ppt/slides/slide2.xml", "odt": "content.xml"}[name]
    xml = parts[target]
    rng = random.Random(3)
    for _ in range(60):
        a, b = sorted(rng.sample(range(len(xml)), 2))
        mutated = rng.choice((xml[:a] + xml[b:], xml[:b] + xml[a:b] + xml[b:], xml[:a] + xml[b:] + xml[a:b]))
        _read_and_render(module, _zip_of({**parts, target: mutated}))
