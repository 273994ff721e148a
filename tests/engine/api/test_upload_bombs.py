"""A zip bomb sent to a running `qiao serve` (issue 27, Documents 9, the API half): refused fast, the server's peak
memory bounded. At cd519ae a 428 KB .docx of two 60 MB parts took the server to 1.27 GB for 56 s before it answered
400 ("exceeds text limit"); a 550 KB one, 2.3 GB for 68 s."""

from __future__ import annotations

import sys
import time
import uuid

import pytest

from tests.engine.documents.test_zip_bombs import word_document

from .serving import Served, allow_loopback

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads the server's /proc/PID/status")


def _multipart(name: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    fields = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{key}"\r\n\r\n{value}\r\n'.encode()
        for key, value in (("source", "en"), ("target", "zh"))
    )
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    )
    return (
        fields + head.encode() + data + f"\r\n--{boundary}--\r\n".encode(),
        f"multipart/form-data; boundary={boundary}",
    )


def test_a_docx_bomb_upload_is_refused_fast_in_bounded_server_memory(monkeypatch):
    import http.client
    import json

    allow_loopback(monkeypatch)
    bomb = word_document(parts=1, megabytes=60)  # 120 MB of XML in about 430 KB
    assert len(bomb) < 500_000
    body, content_type = _multipart("bomb.docx", bomb)
    server = Served([])
    try:
        before = server.rss_kb("VmHWM")
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        start = time.monotonic()
        conn.request("POST", "/translate_file", body=body, headers={"Content-Type": content_type})
        reply = conn.getresponse()
        answer = json.loads(reply.read())
        seconds = time.monotonic() - start
        conn.close()
        grown_mb = (server.rss_kb("VmHWM") - before) / 1024
    finally:
        assert server.stop() == 0
    assert reply.status == 400 and "zip bomb" in answer["error"], answer
    assert seconds < 10, seconds  # was 56 s
    assert grown_mb < 200, grown_mb  # was 1.2 GB over the idle server; measured here: about 50 MB
