"""Single instance: a private per-user socket, requests handed to the running Qiao, and hostile clients (garbage,
huge, half messages, floods of connections) ignored and logged without ever stopping valid ones."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from gui.desktop import instance_pipe
from gui.desktop import single_instance as si
from gui.desktop.instance_protocol import (
    ERROR_ANSWER,
    MAX_CONNECTIONS,
    MAX_MESSAGE,
    InstanceError,
    InstanceRequest,
    decode,
)
from gui.desktop.single_instance import InstanceServer, claim, send

_unix_connect = socket.socket.connect  # the real one: conftest's no-network guard replaces it during each test


@pytest.fixture(autouse=True)
def unix_sockets_only(monkeypatch, no_network):
    """The single-instance socket is a Unix socket, not the network: those connections alone pass the guard."""
    guard = socket.socket.connect

    def connect(self: socket.socket, address: object) -> None:
        return (_unix_connect if self.family == socket.AF_UNIX else guard)(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


def test_the_guard_still_refuses_the_network(no_network):
    with pytest.raises(AssertionError):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("127.0.0.1", 9))
    assert len(no_network) == 1
    no_network.clear()  # recorded as it should be; do not fail this test's teardown


@pytest.fixture
def runtime(monkeypatch):
    """A short private XDG_RUNTIME_DIR (socket paths are limited to ~100 bytes)."""
    path = Path(tempfile.mkdtemp(prefix="qi-"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(path))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def server(runtime, qtbot):
    srv = InstanceServer(si.server_name())
    assert srv.listen()
    got: list[InstanceRequest] = []
    srv.requested.connect(got.append)
    srv.got = got
    yield srv
    srv.close()


pool = ThreadPoolExecutor(max_workers=64)
ROOT = Path(__file__).resolve().parents[3]


def in_thread(qtbot, fn, *args, timeout=5000):
    """Run a blocking client off the UI thread while the server's event loop turns."""
    future: Future = pool.submit(fn, *args)
    qtbot.waitUntil(future.done, timeout=timeout)
    return future.result()


def raw(name: str, data: bytes, *, timeout: float = 3.0) -> bytes:
    """A hand-made client on a Unix socket (never the network): send bytes as they are, return the answer."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    assert sock.family == socket.AF_UNIX
    sock.settimeout(timeout)
    try:
        _unix_connect(sock, name)
        with contextlib.suppress(OSError):  # the server may cut a huge message off mid-way
            sock.sendall(data)
        answer = b""
        while True:
            try:
                chunk = sock.recv(4096)
            except (TimeoutError, ConnectionResetError):
                break
            if not chunk:
                break
            answer += chunk
        return answer
    finally:
        sock.close()


def send_from_another_process(qtbot, request: InstanceRequest, name: str) -> bool:
    """`gui.desktop.single_instance.send` as a second start uses it: in its own process."""
    code = (
        "import sys; from gui.desktop.single_instance import InstanceRequest, send; "
        f"sys.exit(0 if send(InstanceRequest({request.action!r}, {request.text!r}), {name!r}) else 1)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT)
    qtbot.waitUntil(lambda: proc.poll() is not None, timeout=15_000)
    return proc.returncode == 0


def test_the_socket_is_in_a_folder_only_this_user_may_enter_and_is_user_only(server, runtime):
    name = server.full_name()
    assert Path(name).parent == runtime / "qiao"
    folder = os.stat(runtime / "qiao")
    assert stat.S_IMODE(folder.st_mode) == 0o700 and folder.st_uid == os.getuid()
    info = os.stat(name)
    assert stat.S_ISSOCK(info.st_mode)
    assert stat.S_IMODE(info.st_mode) & 0o077 == 0, oct(info.st_mode)


def test_without_a_runtime_dir_the_socket_goes_to_a_private_folder_in_tmp(monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    assert si.server_name() == str(tmp_path / f"qiao-{os.getuid()}" / "instance")
    assert stat.S_IMODE(os.stat(tmp_path / f"qiao-{os.getuid()}").st_mode) == 0o700


def test_a_folder_others_may_enter_or_made_by_another_user_is_refused(monkeypatch, tmp_path):
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    with pytest.raises(InstanceError, match="other users"):
        si._private_dir(open_dir)
    (tmp_path / "file").write_text("x")
    with pytest.raises(InstanceError, match="not a folder"):
        si._private_dir(tmp_path / "file")
    (tmp_path / "link").symlink_to(open_dir)
    with pytest.raises(InstanceError, match="not a folder"):
        si._private_dir(tmp_path / "link")
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    monkeypatch.setattr(si, "_uid", lambda: os.getuid() + 4242)
    with pytest.raises(InstanceError, match="another user"):
        si._private_dir(mine)


def test_a_client_refuses_a_socket_of_another_user(server, monkeypatch):
    monkeypatch.setattr(si, "_uid", lambda: os.getuid() + 4242)
    with pytest.raises(InstanceError, match="another user"):
        send(InstanceRequest("show"), server.name)


def line(request: InstanceRequest) -> bytes:
    return request.encode()


def test_requests_reach_the_running_instance(qtbot, server):
    assert send_from_another_process(qtbot, InstanceRequest("popup", "Thank you very much."), server.name)
    qtbot.waitUntil(lambda: server.got == [InstanceRequest("popup", "Thank you very much.")], timeout=2000)
    for request in (InstanceRequest("show"), InstanceRequest("popup"), InstanceRequest("translate", "中文 and ✓")):
        assert in_thread(qtbot, raw, server.name, line(request)) == b"ok\n"
        qtbot.waitUntil(lambda r=request: server.got[-1:] == [r], timeout=2000)
    assert server.rejected == 0


def test_nobody_listening_means_not_delivered(runtime):
    assert send(InstanceRequest("show"), str(runtime / "nobody"), 300) is False


def test_a_deeply_nested_message_is_refused_without_a_traceback(qtbot, server, capfd):
    """100,000 nested arrays made json.loads raise RecursionError in the UI thread's read slot: a traceback."""
    for deep in (b"[" * 100_000 + b"]" * 100_000, b'{"action": "show", "text": ' + b'{"a":' * 50_000 + b"1"):
        with pytest.raises(ValueError, match="nested more than"):
            decode(deep)
        assert in_thread(qtbot, raw, server.name, deep + b"\n") == b"error: malformed request\n"
    qtbot.waitUntil(lambda: server.rejected == 2, timeout=3000)
    assert "Traceback" not in capfd.readouterr().err
    assert decode(b'{"action": "popup", "text": "[[[[[[{{{{{ in a string"}').text == "[[[[[[{{{{{ in a string"
    assert in_thread(qtbot, raw, server.name, line(InstanceRequest("show"))) == b"ok\n"


def test_garbage_is_ignored_logged_and_answered_with_an_error(qtbot, server, caplog):
    answer = in_thread(qtbot, raw, server.name, b"\x00\x01garbage\xff\n")
    assert answer.startswith(b"error")
    assert server.got == [] and server.rejected == 1
    assert "malformed" in caplog.text and "garbage" not in caplog.text, "the content is never logged"


def test_a_huge_message_is_cut_off_at_the_limit(qtbot, server):
    in_thread(qtbot, raw, server.name, b'{"action": "popup", "text": "' + b"a" * (2 * MAX_MESSAGE))
    qtbot.waitUntil(lambda: server.rejected == 1, timeout=3000)
    assert server.got == []


def test_a_half_message_times_out(qtbot, server, monkeypatch):
    monkeypatch.setattr(si, "READ_TIMEOUT_MS", 200)
    assert in_thread(qtbot, raw, server.name, b'{"action": "po') == b"error: malformed request\n"
    qtbot.waitUntil(lambda: server.rejected == 1, timeout=3000)
    assert server.got == []
    assert in_thread(qtbot, raw, server.name, line(InstanceRequest("show"))) == b"ok\n"


def test_a_flood_of_idle_connections_does_not_lock_out_a_real_request(qtbot, server, monkeypatch):
    monkeypatch.setattr(si, "READ_TIMEOUT_MS", 500)
    futures = [pool.submit(raw, server.name, b'{"act', timeout=5.0) for _ in range(48)]
    qtbot.waitUntil(lambda: all(f.done() for f in futures), timeout=10_000)
    assert server.rejected == 48, "each one is closed: surplus at once, the rest on their timeout"
    assert len(server._clients) == 0
    assert in_thread(qtbot, raw, server.name, line(InstanceRequest("popup", "still here"))) == b"ok\n"
    qtbot.waitUntil(lambda: server.got == [InstanceRequest("popup", "still here")], timeout=2000)


def test_many_valid_clients_at_once_are_all_delivered(qtbot, server):
    requests = [InstanceRequest("popup", f"text {i}") for i in range(40)]
    futures = [pool.submit(raw, server.name, line(r), timeout=8.0) for r in requests]
    qtbot.waitUntil(lambda: all(f.done() for f in futures), timeout=15_000)
    delivered = [r for r, f in zip(requests, futures, strict=True) if f.result() == b"ok\n"]
    qtbot.waitUntil(lambda: len(server.got) == len(delivered), timeout=3000)
    assert sorted(server.got, key=lambda r: r.text) == sorted(delivered, key=lambda r: r.text)
    assert len(delivered) >= len(requests) - MAX_CONNECTIONS, "a burst beyond the limit may be refused, no more"


def test_a_second_start_hands_over_and_the_first_keeps_serving(qtbot, runtime):
    first = claim(InstanceRequest("show"))
    assert first is not None and first.full_name()
    got: list[InstanceRequest] = []
    first.requested.connect(got.append)
    try:
        assert send_from_another_process(qtbot, InstanceRequest("popup", "hi"), first.name)
        qtbot.waitUntil(lambda: got == [InstanceRequest("popup", "hi")], timeout=2000)
    finally:
        first.close()


def test_a_stale_socket_left_by_a_crash_is_replaced(qtbot, runtime):
    name = si.server_name()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(name)  # bound, never listening: what a killed Qiao leaves behind
    stale.close()
    assert os.path.exists(name)
    srv = InstanceServer(name)
    try:
        assert srv.listen()
        got: list[InstanceRequest] = []
        srv.requested.connect(got.append)
        assert in_thread(qtbot, raw, name, line(InstanceRequest("show"))) == b"ok\n"
        qtbot.waitUntil(lambda: got == [InstanceRequest("show")], timeout=2000)
    finally:
        srv.close()


def test_an_unsafe_socket_folder_means_running_alone(monkeypatch, tmp_path, caplog):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "qiao").mkdir(mode=0o777)
    (shared / "qiao").chmod(0o777)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(shared))
    alone = claim(InstanceRequest("show"))
    assert alone is not None and alone.name == "" and not alone.is_listening()
    assert "running without single-instance" in caplog.text


def test_the_socket_file_is_user_only_and_closing_removes_it(qtbot, runtime):
    srv = InstanceServer(si.server_name())
    assert srv.listen() and srv.is_listening()
    assert stat.S_IMODE(os.stat(srv.name).st_mode) == 0o600
    srv.close()
    assert not os.path.exists(srv.name) and not srv.is_listening() and srv.full_name() == ""
    again = InstanceServer(srv.name)
    try:
        assert again.listen()
    finally:
        again.close()


def test_a_live_instance_is_never_replaced(qtbot, server):
    second = InstanceServer(server.name)
    assert second.listen() is False and not second.is_listening()
    assert in_thread(qtbot, raw, server.name, line(InstanceRequest("show"))) == b"ok\n"
    qtbot.waitUntil(lambda: server.got == [InstanceRequest("show")], timeout=2000)


def test_something_else_in_the_sockets_place_is_refused(qtbot, runtime, caplog):
    name = si.server_name()
    Path(name).write_text("not a socket")
    with pytest.raises(InstanceError, match="not a socket"):
        InstanceServer(name).listen()
    assert Path(name).read_text() == "not a socket", "never removed"
    alone = claim(InstanceRequest("show"))
    assert alone is not None and not alone.is_listening() and "running without single-instance" in caplog.text


@pytest.mark.skipif(not hasattr(socket, "SO_PEERCRED"), reason="peer credentials: Linux")
def test_a_client_of_another_user_is_refused(qtbot, server, monkeypatch):
    monkeypatch.setattr(si, "_uid", lambda: os.getuid() + 4242)  # as if the connecting process were someone else
    assert in_thread(qtbot, raw, server.name, line(InstanceRequest("show"))).startswith(b"error")
    assert server.rejected == 1 and server.got == []


def test_a_client_that_leaves_mid_message_is_dropped_and_counted(qtbot, server):
    def leave() -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with sock:
            _unix_connect(sock, server.name)
            sock.sendall(b'{"action": "sh')

    in_thread(qtbot, leave)
    qtbot.waitUntil(lambda: server.rejected == 1, timeout=3000)
    assert server.got == [] and len(server._clients) == 0


def test_a_full_queue_is_waited_out_by_send(qtbot, runtime):
    """A Qiao too busy to accept (its queue full): `send` keeps trying until its timeout instead of giving up."""
    name = si.server_name()
    busy = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    busy.bind(name)
    busy.listen(0)
    queued = []
    try:
        for _ in range(4):  # fill the queue: the next connect would be told EAGAIN
            extra = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            extra.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                _unix_connect(extra, name)
            queued.append(extra)
        started = time.monotonic()
        assert send(InstanceRequest("show"), name, 300) is False, "nobody ever answers"
        assert time.monotonic() - started >= 0.25, "it waited for its timeout, not gave up at the first EAGAIN"
    finally:
        for s in queued:
            s.close()
        busy.close()


# The Windows named pipe's server (a thread, a queued signal) cannot run here; the same code over AF_UNIX can.


@pytest.fixture
def pipe_server(runtime, qtbot):
    srv = InstanceServer(str(runtime / "pipe"))
    assert srv._listen_pipe("AF_UNIX") and srv.is_listening()
    got: list[InstanceRequest] = []
    srv.requested.connect(got.append)
    srv.got = got
    yield srv
    srv.close()


def pipe_client(name: str, payload: bytes | None, send_raw: bytes | None = None) -> bytes:
    """A multiprocessing.connection client: one message (or raw bytes on the wire), the answer or b''."""
    from multiprocessing.connection import Client

    with Client(name, family="AF_UNIX") as conn:
        if send_raw is not None:
            conn._send(send_raw)
        elif payload is not None:
            conn.send_bytes(payload)
        return conn.recv_bytes(4096) if conn.poll(5) else b""


def test_the_pipe_server_delivers_on_the_ui_thread(qtbot, pipe_server):
    from PySide6.QtCore import QThread

    threads: list = []
    pipe_server.requested.connect(lambda _r: threads.append(QThread.currentThread()))
    request = InstanceRequest("popup", "Thank you very much.")
    assert in_thread(qtbot, instance_pipe.pipe_send, request, pipe_server.name, 3000, "AF_UNIX") is True
    qtbot.waitUntil(lambda: pipe_server.got == [request], timeout=2000)
    assert threads == [QThread.currentThread()]


def test_the_pipe_server_refuses_garbage_huge_and_unfinished_messages(qtbot, pipe_server, monkeypatch):
    monkeypatch.setattr(instance_pipe, "READ_TIMEOUT_MS", 300)
    assert in_thread(qtbot, pipe_client, pipe_server.name, b"\xff garbage") == ERROR_ANSWER
    huge = struct.pack("!i", MAX_MESSAGE + 10) + b"x" * 100  # a length over the limit: never read in full
    assert in_thread(qtbot, pipe_client, pipe_server.name, None, huge) == ERROR_ANSWER
    assert in_thread(qtbot, pipe_client, pipe_server.name, None) == ERROR_ANSWER  # nothing sent: timed out
    qtbot.waitUntil(lambda: pipe_server.rejected == 3, timeout=3000)
    assert in_thread(qtbot, instance_pipe.pipe_send, InstanceRequest("show"), pipe_server.name, 3000, "AF_UNIX") is True
    qtbot.waitUntil(lambda: pipe_server.got == [InstanceRequest("show")], timeout=2000)


def test_closing_the_pipe_server_ends_its_thread(qtbot, runtime):
    srv = InstanceServer(str(runtime / "pipe"))
    assert srv._listen_pipe("AF_UNIX")
    thread = srv._pipe.thread
    srv.close()
    assert not thread.is_alive() and not srv.is_listening()


def test_a_refusal_over_the_pipe_is_logged_by_the_pipes_own_logger(qtbot, pipe_server, caplog):
    refused = InstanceRequest("translate")  # no text: the server's decode refuses it
    caplog.set_level("WARNING")
    assert in_thread(qtbot, instance_pipe.pipe_send, refused, pipe_server.name, 3000, "AF_UNIX") is False
    qtbot.waitUntil(lambda: pipe_server.rejected == 1, timeout=3000)
    assert [r.name for r in caplog.records if "refused the request" in r.getMessage()] == ["qiao.instance.pipe"]
    assert pipe_server.got == []
