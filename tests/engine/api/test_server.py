"""`qiao serve` for real: a third-party LibreTranslate client (libretranslatepy, from PyPI) talking to it unchanged,
hostile requests over HTTP, the listening socket on 127.0.0.1 only, the command's exit statuses."""

from __future__ import annotations

import http.client
import json
import signal
import socket
import subprocess
import sys
from urllib.error import HTTPError

import pytest

from .serving import ROOT, Served, allow_loopback, listening_addresses

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and /proc")
libretranslatepy = pytest.importorskip("libretranslatepy")


@pytest.fixture(scope="module")
def served():
    server = Served([])
    yield server
    assert server.stop() == 0
    err = "".join(server.stderr_lines)
    assert "Traceback" not in err, err
    assert "qiao: stopped" in err


@pytest.fixture
def loopback(monkeypatch):
    allow_loopback(monkeypatch)


def request(served: Served, method: str, path: str, body: bytes = b"", headers: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, dict(reply.getheaders()), reply.read()
    finally:
        conn.close()


def test_libretranslatepy_works_unchanged(served, loopback):
    lt = libretranslatepy.LibreTranslateAPI(served.url)
    assert lt.translate("Thank you very much.", "en", "zh") == "非常感谢。"
    assert lt.translate("See you tomorrow.", "auto", "zh") == "明天见。"
    languages = lt.languages()
    assert {"code": "en", "name": "English", "targets": ["zh-Hans", "zh-Hant"]} in languages
    # a client that checks its target against /languages (as LibreTranslate lists Chinese today) finds it
    targets = {t for entry in languages for t in entry["targets"]}
    assert {"zh-Hans", "zh-Hant"} <= targets
    assert lt.translate("Thank you very much.", "en", "zh-Hans") == "非常感谢。"
    assert lt.translate("Thank you very much.", "en", "zh") == "非常感谢。"  # "zh" stays accepted
    assert lt.detect("Thank you very much.")[0]["language"] == "en"
    assert lt.detect("非常感谢")[0]["language"] == "zh-Hans"
    with pytest.raises(HTTPError) as info:
        lt.translate("Thank you.", "en", "ja")
    assert info.value.code == 400
    assert json.loads(info.value.read())["error"].startswith("ja is not supported")


def test_the_socket_listens_on_loopback_only(served):
    addresses = listening_addresses(served.port)
    if not addresses and not __import__("pathlib").Path("/proc/net/tcp").exists():
        pytest.skip("no /proc/net/tcp here")
    assert addresses == ["0100007F"]  # 127.0.0.1, little-endian hex; no 0.0.0.0, no IPv6 wildcard


def test_hostile_requests_over_http(served, loopback):
    ok = json.dumps({"q": "Thank you very much.", "source": "en", "target": "zh"}).encode()
    ctype = {"Content-Type": "application/json"}
    status, _, data = request(served, "POST", "/translate", ok, ctype)
    assert (status, json.loads(data)) == (200, {"translatedText": "非常感谢。"})
    status, _, data = request(served, "POST", "/translate", b'{"q": "x", ', ctype)
    assert status == 400 and "Invalid JSON" in json.loads(data)["error"]
    status, _, _ = request(served, "POST", "/translate", ok, {**ctype, "Host": f"evil.example:{served.port}"})
    assert status == 421
    status, headers, _ = request(served, "POST", "/translate", ok, {**ctype, "Origin": "https://evil.example"})
    assert status == 403 and "Access-Control-Allow-Origin" not in headers
    status, _, _ = request(served, "POST", "/translate", b"\xff\xfe\xfa", ctype)
    assert status == 400
    status, _, _ = request(served, "GET", "/nothing")
    assert status == 404
    status, _, _ = request(served, "PUT", "/translate", ok, ctype)
    assert status == 405


def test_a_huge_body_is_413_without_being_read(served, loopback):
    """Content-Length alone says 50 MB; the server answers before the client has sent them."""
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    try:
        head = (
            f"POST /translate HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {50 * 2**20}\r\n\r\n"
        )
        sock.sendall(head.encode() + b'{"q": "' + b"a" * 65536)
        reply = sock.recv(4096).decode("latin-1")
    finally:
        sock.close()
    assert reply.startswith("HTTP/1.1 413"), reply[:200]


def test_a_huge_chunked_body_is_413(served, loopback):
    chunk = b"a" * 2**20
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(2)) + b"0\r\n\r\n"
    headers = {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
    status, _, _ = request(served, "POST", "/translate", body, headers)
    assert status == 413


def test_stream_over_http_arrives_as_events(served, loopback):
    """Sentences nothing else in this module translates (a cached sentence would come back in one piece)."""
    text = "Good morning, everyone! Hello, how are you?"
    body = json.dumps({"q": text, "source": "en", "target": "zh"}).encode()
    status, headers, data = request(served, "POST", "/qiao/stream", body, {"Content-Type": "application/json"})
    assert status == 200 and headers["Content-Type"].startswith("text/event-stream")
    events = [e for e in data.decode().split("\n\n") if e]
    deltas = [json.loads(e[len("data: ") :])["delta"] for e in events[:-1]]
    assert len(deltas) >= 2
    whole = "".join(deltas)
    assert whole == "大家早上好！你好，你最近怎么样？"
    assert events[-1] == "event: done\ndata: " + json.dumps({"translatedText": whole}, ensure_ascii=False)


def test_libretranslate_routes_health_suggest_and_alternatives(served, loopback):
    status, _, data = request(served, "GET", "/health")
    assert (status, json.loads(data)) == (200, {"status": "ok"})
    status, _, data = request(served, "POST", "/suggest", b"q=a&s=b&source=en&target=zh")
    assert (status, json.loads(data)) == (403, {"error": "Suggestions are disabled on this server."})
    body = json.dumps({"q": "Thank you very much.", "source": "en", "target": "zh", "alternatives": 2}).encode()
    status, _, data = request(served, "POST", "/translate", body, {"Content-Type": "application/json"})
    reply = json.loads(data)
    assert status == 200 and reply["translatedText"] == "非常感谢。"
    alternatives = reply["alternatives"]  # the tiny model's beam n-best (was always [])
    assert len(alternatives) == 2 and len(set(alternatives)) == 2 and "非常感谢。" not in alternatives
    assert all(a.startswith("非常") for a in alternatives)


def test_a_file_named_in_chinese_downloads_once(served, loopback):
    """报告.txt got a URL that always 404'd (its name was unquoted twice and compared as latin-1 text)."""
    from urllib.parse import quote, unquote

    from .fakes import multipart

    data, ctype = multipart({"source": "en", "target": "zh"}, {"file": ("报告 100%.txt", b"Thank you very much.\n")})
    status, _, reply = request(served, "POST", "/translate_file", data, {"Content-Type": ctype})
    assert status == 200, reply
    url = json.loads(reply)["translatedFileUrl"]
    path = url.split(str(served.port), 1)[1]
    assert path.isascii() and unquote(path).endswith(".报告 100%.zh.txt")
    status, headers, got = request(served, "GET", path)
    assert status == 200, got
    assert got.decode() == "非常感谢。\n"
    assert f"filename*=UTF-8''{quote('报告 100%.zh.txt')}" in headers["Content-Disposition"]
    status, _, _ = request(served, "GET", path)
    assert status == 404  # served once


def test_translate_file_over_http(served, loopback):
    from .fakes import multipart

    data, ctype = multipart(
        {"source": "en", "target": "zh"},
        {"file": ("t.srt", b"1\n00:00:01,000 --> 00:00:02,000\nThank you very much.\n")},
    )
    status, _, reply = request(served, "POST", "/translate_file", data, {"Content-Type": ctype})
    assert status == 200, reply
    url = json.loads(reply)["translatedFileUrl"]
    status, _, got = request(served, "GET", url.split(str(served.port), 1)[1])
    assert status == 200
    assert got.decode() == "1\n00:00:01,000 --> 00:00:02,000\n非常感谢。\n"


# -- the command --------------------------------------------------------------------------------------------------


def test_api_key_file(tmp_path, loopback):
    key_file = tmp_path / "key"
    key_file.write_text("k-3f9a2c\n")
    key_file.chmod(0o600)
    unicode_file = tmp_path / "unicode-key"
    unicode_file.write_text("钥匙-ключ-k3\n", encoding="utf-8")
    unicode_file.chmod(0o600)
    server = Served(["--api-key-file", str(unicode_file)])
    try:  # a non-ASCII key worked in the body but never as Authorization: Bearer (the header read as latin-1)
        body = json.dumps({"q": "Thank you very much.", "source": "en", "target": "zh"}).encode()
        for key, expected in (("钥匙-ключ-k3", 200), ("钥匙-ключ-k4", 403)):
            headers = {"Content-Type": "application/json", "Authorization": b"Bearer " + key.encode("utf-8")}
            status, _, _ = request(server, "POST", "/translate", body, headers)
            assert status == expected
        lt = libretranslatepy.LibreTranslateAPI(server.url, api_key="钥匙-ключ-k3")
        assert lt.translate("Thank you very much.", "en", "zh") == "非常感谢。"
    finally:
        assert server.stop(signal.SIGTERM) == 0
    server = Served(["--api-key-file", str(key_file)])
    try:
        assert (
            libretranslatepy.LibreTranslateAPI(server.url, api_key="k-3f9a2c").translate(
                "Thank you very much.", "en", "zh"
            )
            == "非常感谢。"
        )
        for key in (None, "k-3f9a2d", "k-3f9a2c "):
            with pytest.raises(HTTPError) as info:
                libretranslatepy.LibreTranslateAPI(server.url, api_key=key).translate("Thank you.", "en", "zh")
            assert info.value.code == 403
    finally:
        assert server.stop(signal.SIGTERM) == 0


def run_serve(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "engine.cli.main", "serve", *args],
        cwd=ROOT,
        env={**__import__("os").environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--host", "0.0.0.0"], 1, "refusing to listen on 0.0.0.0"),
        (["--host", "192.168.1.5"], 1, "add --allow-remote"),
        (["--host", "example.org"], 1, "refusing to listen on example.org"),
        (["--allow-origin", "*"], 2, "is not one web origin"),
        (["--allow-origin", "null"], 2, "is not one web origin"),
        (["--port", "70000"], 2, "out of range"),
        (["--request-timeout", "0"], 2, "use 1 to 3600 seconds"),
        (["--request-timeout", "soon"], 2, "not a number of seconds"),
        (["--api-key-file", "/nonexistent/key"], 1, "cannot read the API key file"),
    ],
)
def test_refusals_are_one_line(args, code, message):
    result = run_serve(args)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_an_empty_key_file_is_refused(tmp_path):
    (tmp_path / "key").write_text("\n")
    result = run_serve(
        ["--model", str(ROOT / "tests/fixtures/tiny_marian/bundle"), "--api-key-file", str(tmp_path / "key")]
    )
    assert result.returncode == 1 and "is empty" in result.stderr


def test_a_port_in_use_is_a_clear_error(served):
    result = run_serve(["--model", str(ROOT / "tests/fixtures/tiny_marian/bundle"), "--port", str(served.port)])
    assert result.returncode == 1
    assert f"port {served.port} on 127.0.0.1 is in use" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("gap_s", [0.0, 0.05, 0.3])
def test_ctrl_c_twice_still_stops_cleanly(loopback, gap_s):
    import time

    server = Served([])
    lt = libretranslatepy.LibreTranslateAPI(server.url)
    assert lt.translate("Thank you very much.", "en", "zh") == "非常感谢。"
    server.proc.send_signal(signal.SIGINT)
    time.sleep(gap_s)
    if server.proc.poll() is None:
        server.proc.send_signal(signal.SIGINT)
    assert server.stop() == 0
    err = "".join(server.stderr_lines)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert err.rstrip().endswith("qiao: stopped")
