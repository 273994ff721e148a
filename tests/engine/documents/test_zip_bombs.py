"""Decompression bombs by ratio and by total (issue 27): refused while inflating, fast, in bounded memory.

A 221 KB .docx of 60 MB parts (each under the old 64 MB floor of the ratio rule) took 1.1 GB and over 150 s; a
550 KB one sent to /translate_file took the server to 2.3 GB for 68 s. These bombs are built the same way, one
megabyte at a time (the test never holds a part whole), and read in a child process whose peak RSS is measured.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

from engine.documents.formats import _zip, docx, epub
from engine.documents.model import DocumentError
from tests.engine.documents.office_docs import make_docx

REPO = Path(__file__).resolve().parents[3]
W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_TYPES = (
    '<?xml version="1.0" encoding="UTF-8"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>{}</Types>'
)
_HEADER_TYPE = (
    '<Override PartName="/word/header{}.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"/>'
)
_PARAGRAPH = b"<w:p><w:r><w:t>All work and no play makes Jack a dull boy.</w:t></w:r></w:p>"


def _part(member, megabytes: int, root: bytes, vary: bool) -> None:
    member.write(b'<?xml version="1.0"?><' + root + b' xmlns:w="' + W.encode() + b'"><w:body>')
    count = (1 << 20) // len(_PARAGRAPH)
    # numbered paragraphs: deflate's 32 kB window sees text, not one repeat
    numbered = b"".join(_PARAGRAPH.replace(b"boy.", b"boy %d." % n) for n in range(count)) if vary else b""
    chunk = numbered or _PARAGRAPH * count
    for _ in range(megabytes):
        member.write(chunk)
    member.write(b"</w:body></" + root + b">")


def word_document(parts: int, megabytes: int, *, vary: bool = False) -> bytes:
    """A .docx whose body and `parts` headers each hold `megabytes` MB of one repeated paragraph (about 280:1), or
    with `vary` of numbered paragraphs (deflate then gets about 30:1, as real text does)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1 if vary else 9) as archive:
        archive.writestr("[Content_Types].xml", _TYPES.format("".join(_HEADER_TYPE.format(i) for i in range(parts))))
        for name, root in [("word/document.xml", b"w:document")] + [
            (f"word/header{i}.xml", b"w:hdr") for i in range(parts)
        ]:
            with archive.open(name, "w") as member:
                _part(member, megabytes, root, vary)
    return buffer.getvalue()


def _read_in_child(path: Path, reader: str = "docx") -> dict:
    """Read `path` with a format in a fresh interpreter: its peak RSS growth over the import, time and outcome."""
    code = textwrap.dedent(
        f"""
        import json, resource, sys, time
        from engine.documents.formats import {reader} as fmt
        data = open(sys.argv[1], "rb").read()
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        start = time.perf_counter()
        try:
            units = len(fmt.read(data).units)
            error = None
        except Exception as exc:
            units, error = 0, f"{{type(exc).__name__}}: {{exc}}"
        grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
        print(json.dumps({{"seconds": time.perf_counter() - start, "grown_mb": grown / 1024, "units": units,
                          "error": error}}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], cwd=REPO, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(sys.platform == "win32", reason="resource.getrusage")
def test_a_docx_of_60_mb_parts_is_refused_fast_in_bounded_memory(tmp_path):
    bomb = word_document(parts=4, megabytes=60)
    assert len(bomb) < 1_200_000  # 300 MB of XML in about 1 MB
    assert all(info.file_size < _zip.BOMB_MIN_BYTES for info in zipfile.ZipFile(io.BytesIO(bomb)).infolist())
    path = tmp_path / "bomb.docx"
    path.write_bytes(bomb)
    outcome = _read_in_child(path)
    assert outcome["error"].startswith("DocumentError: this Word document is a zip bomb (word/document.xml unpacks")
    assert outcome["seconds"] < 5
    assert outcome["grown_mb"] < 100  # was 1.1 GB; the bytes read stop at 200 times the compressed size


@pytest.mark.skipif(sys.platform == "win32", reason="resource.getrusage")
def test_parts_under_the_ratio_stop_at_the_read_limit(tmp_path, monkeypatch):
    """A part that deflates like real text (no bomb by ratio) but is larger than READ_LIMIT: refused at the limit,
    before anything is parsed (parts that pass it together are refused the same way: the next test)."""
    data = word_document(parts=0, megabytes=70, vary=True)
    infos = zipfile.ZipFile(io.BytesIO(data)).infolist()
    assert all(info.file_size < _zip.BOMB_RATIO * info.compress_size for info in infos)
    path = tmp_path / "big.docx"
    path.write_bytes(data)
    outcome = _read_in_child(path)
    assert outcome["error"] == (
        "DocumentError: this Word document holds more than 64 MB of text and markup (unpacked); Qiao translates "
        "documents up to that size: split it into smaller files"
    )
    assert outcome["grown_mb"] < 200  # the 64 MB read, nothing parsed


def test_an_accepted_document_is_read_whole():
    data = make_docx()
    assert docx.read(data).units  # a real document is far from the limits


def test_the_ratio_is_judged_while_inflating(monkeypatch):
    """A member is stopped as soon as it passes RATIO_FLOOR at more than BOMB_RATIO times its compressed size:
    never inflated whole first."""
    monkeypatch.setattr(_zip, "RATIO_FLOOR", 1 << 20)
    seen = []
    real_open = zipfile.ZipFile.open

    def spying_open(self, name, *args, **kwargs):
        stream = real_open(self, name, *args, **kwargs)
        real_read = stream.read

        def read(n=-1):
            seen.append(n)
            return real_read(n)

        stream.read = read
        return stream

    monkeypatch.setattr(zipfile.ZipFile, "open", spying_open)
    data = word_document(parts=0, megabytes=40)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo("word/document.xml")
    with pytest.raises(DocumentError, match="zip bomb"):
        docx.read(data)
    stopped_at = _zip.BOMB_RATIO * info.compress_size  # about 30 of the 40 MB
    assert -1 not in seen  # a megabyte at a time
    assert len(seen) <= stopped_at // (1 << 20) + 5 < 40  # [Content_Types].xml, then stopped at the ratio


def test_the_limit_counts_a_member_read_twice_once(monkeypatch):
    monkeypatch.setattr(_zip, "READ_LIMIT", 3 << 20)
    archive = _zip.ZipArchive(word_document(parts=0, megabytes=2, vary=True), "Word document")
    first = archive.read("word/document.xml")
    assert archive.read("word/document.xml") == first  # rendering reads a part again
    monkeypatch.setattr(_zip, "READ_LIMIT", 1 << 20)
    with pytest.raises(DocumentError, match="more than 1 MB of text"):
        archive.read("word/document.xml")


def test_an_epub_chapter_bomb_is_refused():
    from tests.engine.documents.test_epub import build, members

    chapter = b"<html><body>" + b"<p>All work and no play.</p>" * 400_000 + b"</body></html>"  # 11 MB, ~1000:1
    with pytest.raises(DocumentError, match="zip bomb"):
        epub.read(build(members({"OEBPS/text/chapter2.xhtml": chapter})))
