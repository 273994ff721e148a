"""One running Qiao per user: a second start (or `qiao popup`, `qiao translate --app`) hands its request to the
running instance over a local socket and exits, so the engine is loaded once.

No QtNetwork (the frozen app leaves it out: ~3 MB over the size budget): the Python standard library serves.

The socket is this user's only. On Linux and macOS it is a Unix socket (`AF_UNIX`, never the network) in a folder
only this user can enter (`$XDG_RUNTIME_DIR/qiao/`, else `<tmp>/qiao-<uid>/`, created 0700 and checked to be ours,
never a folder another user could have made first); the socket file itself is made 0600 before it listens, and on
Linux the server also checks each client's user (`SO_PEERCRED`). A client refuses a socket file that is not ours.
The server is non-blocking and runs on the UI thread (`QSocketNotifier` for accept and read, `QTimer` for the
per-message timeout), as QLocalServer did. On Windows it is a named pipe (gui.desktop.instance_pipe).

What is said over it, and the limits a message must keep, are gui.desktop.instance_protocol's. A message that breaks
them is dropped and logged without its content, never raised; a flood of connections is cut at `MAX_CONNECTIONS` at
a time.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
import stat
import struct
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QObject, QSocketNotifier, Qt, QTimer, Signal, Slot

from gui.desktop.instance_pipe import PipeServer, pipe_send
from gui.desktop.instance_protocol import (
    CLIENT_TIMEOUT_MS,
    ERROR_ANSWER,
    MAX_CONNECTIONS,
    MAX_MESSAGE,
    READ_TIMEOUT_MS,
    InstanceError,
    InstanceRequest,
    decode,
)

log = logging.getLogger("qiao.instance")

BACKLOG = 64  # connections the system queues before the UI thread accepts them (a burst is not refused outright)
SOCKET_NAME = "instance"
PROBE_TIMEOUT_S = 0.5  # how long a listen() waits for an answer on a socket file that is already there


def _uid() -> int | None:
    getuid = getattr(os, "getuid", None)
    return getuid() if getuid is not None else None


def _private_dir(path: Path) -> Path:
    """`path`, created 0700 if missing; InstanceError unless it is a real folder of this user's that no one else
    may enter (a folder another user made first in a shared /tmp would let them catch our requests)."""
    try:
        with contextlib.suppress(FileExistsError):  # whatever is there is checked below
            path.mkdir(mode=0o700)
        info = os.lstat(path)
    except OSError as exc:
        raise InstanceError(f"cannot create {path}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise InstanceError(f"{path} is not a folder")
    if info.st_uid != _uid():
        raise InstanceError(f"{path} belongs to another user")
    if info.st_mode & 0o077:
        raise InstanceError(f"{path} may be entered by other users (mode {stat.S_IMODE(info.st_mode):o})")
    return path


def server_name() -> str:
    """The socket of this user's Qiao: a path in a private folder (POSIX) or a per-user pipe name (Windows)."""
    if sys.platform == "win32":
        import getpass
        import hashlib

        user = hashlib.sha256(getpass.getuser().encode("utf-8", "replace")).hexdigest()[:16]
        return rf"\\.\pipe\qiao-{user}"
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isdir(runtime):
        base = _private_dir(Path(runtime) / "qiao")
    else:
        base = _private_dir(Path(tempfile.gettempdir()) / f"qiao-{_uid()}")
    return str(base / SOCKET_NAME)


def _ours(name: str) -> bool:
    """Whether the socket file (POSIX) belongs to this user; Windows pipes are checked by their ACL."""
    if sys.platform == "win32" or not os.path.isabs(name):
        return True
    try:
        info = os.lstat(name)
    except OSError:
        return True  # nothing there: connecting fails on its own
    return stat.S_ISSOCK(info.st_mode) and info.st_uid == _uid()


def send(request: InstanceRequest, name: str | None = None, timeout_ms: int = CLIENT_TIMEOUT_MS) -> bool:
    """Hand `request` to the running Qiao; True once it answered `ok` (False: none runs, or it refused)."""
    name = name or server_name()
    if sys.platform == "win32":
        return pipe_send(request, name, timeout_ms, "AF_PIPE")
    if not _ours(name):
        raise InstanceError(f"{name} belongs to another user")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout_ms / 1000)
    with sock:
        if not _connect(sock, name, time.monotonic() + timeout_ms / 1000):
            return False
        answer = b""
        try:
            sock.sendall(request.encode())
            while b"\n" not in answer and len(answer) < 4096:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
        except OSError as exc:
            log.warning("the running Qiao did not answer: %s", exc.strerror or type(exc).__name__)
            return False
    if answer.strip() != b"ok":
        log.warning("the running Qiao refused the request: %s", answer.strip()[:200].decode("utf-8", "replace"))
    return answer.strip() == b"ok"


def _connect(sock: socket.socket, name: str, deadline: float) -> bool:
    """Connect, waiting out a full queue (a busy server: EAGAIN) until `deadline`; False when none listens."""
    while True:
        try:
            sock.connect(name)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        except OSError:  # nothing there, a stale file, a path too long
            return False


@dataclass(eq=False)
class _Client:
    """One accepted connection: its socket, what it sent so far, and what watches it."""

    sock: socket.socket
    notifier: QSocketNotifier
    timer: QTimer
    buffer: bytearray = field(default_factory=bytearray)


def _peer_uid(sock: socket.socket) -> int | None:
    """The connecting process's user where the system says (Linux: SO_PEERCRED), else None."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None  # macOS: the 0700 folder alone keeps other users out
    try:
        _pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    except OSError:
        return None
    return uid


class InstanceServer(QObject):
    """Listens for later starts of Qiao; `requested(InstanceRequest)` fires on the UI thread for each valid one."""

    requested = Signal(object)
    _arrived = Signal(object)  # from the Windows pipe's thread, queued to the UI thread

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._listener: socket.socket | None = None
        self._notifier: QSocketNotifier | None = None
        self._pipe: PipeServer | None = None
        self._clients: dict[socket.socket, _Client] = {}
        self.rejected = 0  # malformed, oversized, unfinished or surplus connections (tests, logs)
        self._arrived.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    def is_listening(self) -> bool:
        return self._listener is not None or self._pipe is not None

    def listen(self) -> bool:
        """Start serving; False when another live Qiao already serves this name. A stale socket left by a crash is
        removed first (only when nothing answers on it)."""
        if not self.name:
            raise InstanceError("no socket name")
        if sys.platform == "win32":
            return self._listen_pipe("AF_PIPE")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if not self._bind(sock):
                sock.close()
                return False
            os.chmod(self.name, 0o600)  # before listening; the 0700 folder already keeps others out meanwhile
            sock.listen(BACKLOG)
            sock.setblocking(False)
        except OSError as exc:
            sock.close()
            raise InstanceError(f"cannot listen on {self.name}: {exc.strerror or exc}") from None
        self._listener = sock
        self._notifier = QSocketNotifier(sock.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._accept)
        return True

    def _listen_pipe(self, family: str) -> bool:
        """Windows' way (`family` AF_PIPE; the tests drive the same code over AF_UNIX)."""
        self._pipe = PipeServer.start(self.name, self._arrived.emit, self._count_rejected, family)
        return self._pipe is not None

    def _bind(self, sock: socket.socket) -> bool:
        """Bind to the name; False when a live Qiao answers there; a stale socket file of ours is replaced."""
        try:
            sock.bind(self.name)
            return True
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
        if not _ours(self.name):
            raise InstanceError(f"{self.name} is not a socket of this user's")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(PROBE_TIMEOUT_S)
        with probe:
            try:
                probe.connect(self.name)
                return False  # someone listens (even if too busy to accept: a timeout is not "stale")
            except (ConnectionRefusedError, FileNotFoundError):
                pass
            except OSError:
                return False
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.name)
        sock.bind(self.name)
        return True

    def full_name(self) -> str:
        return self.name if self.is_listening() else ""

    def close(self) -> None:
        for client in list(self._clients.values()):
            self._close_client(client)
        self._clients.clear()
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        if self._listener is not None:
            self._listener.close()
            self._listener = None
            with contextlib.suppress(OSError):
                os.unlink(self.name)
        if self._pipe is not None:
            self._pipe.stop()
            self._pipe = None

    def _accept(self, *_args: object) -> None:  # activated(descriptor, type)
        while self._listener is not None:
            try:
                sock, _address = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                log.warning("single-instance accept failed: %s", exc.strerror or exc)
                return
            sock.setblocking(False)
            peer = _peer_uid(sock)
            if peer is not None and peer != _uid():
                self._refuse(sock, "a client of another user")
                continue
            if len(self._clients) >= MAX_CONNECTIONS:
                self._refuse(sock, "too many connections at once")
                continue
            notifier = QSocketNotifier(sock.fileno(), QSocketNotifier.Type.Read, self)
            timer = QTimer(self)
            timer.setSingleShot(True)
            client = _Client(sock, notifier, timer)
            self._clients[sock] = client
            notifier.activated.connect(lambda *_a, c=client: self._read(c))
            timer.timeout.connect(lambda c=client: self._timed_out(c))
            timer.start(READ_TIMEOUT_MS)
            self._read(client)  # what came with the connection: a valid request is answered at once

    def _read(self, client: _Client) -> None:
        if self._clients.get(client.sock) is not client:
            return
        while True:
            try:
                chunk = client.sock.recv(min(65536, MAX_MESSAGE + 1 - len(client.buffer)))
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                chunk = b""
            if not chunk:  # the client left
                if client.buffer:
                    self._reject(client, "connection closed mid-message")
                else:
                    self._drop(client)
                return
            client.buffer += chunk
            end = client.buffer.find(b"\n")
            if end >= 0:
                break
            if len(client.buffer) > MAX_MESSAGE:
                self._reject(client, f"message over {MAX_MESSAGE} bytes")
                return
        line = bytes(client.buffer[:end])
        try:
            request = decode(line)
        except ValueError as exc:
            self._reject(client, str(exc))
            return
        log.info("request from another start: %s (%d characters)", request.action, len(request.text or ""))
        self._answer(client.sock, b"ok\n")
        self._drop(client)
        self.requested.emit(request)

    def _timed_out(self, client: _Client) -> None:
        if self._clients.get(client.sock) is client:
            self._reject(client, "message not finished in time")

    def _count_rejected(self, why: str) -> None:
        self.rejected += 1
        log.warning("ignored a malformed single-instance message: %s", why)

    def _reject(self, client: _Client, why: str) -> None:
        self._count_rejected(why)
        self._answer(client.sock, ERROR_ANSWER)
        self._drop(client)

    def _refuse(self, sock: socket.socket, why: str) -> None:
        self._count_rejected(why)
        self._answer(sock, ERROR_ANSWER)
        sock.close()

    @staticmethod
    def _answer(sock: socket.socket, answer: bytes) -> None:
        """A few bytes into an empty send buffer: never blocks; a client already gone is no matter."""
        with contextlib.suppress(OSError):
            sock.send(answer)
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def _drop(self, client: _Client) -> None:
        self._clients.pop(client.sock, None)
        self._close_client(client)

    @staticmethod
    def _close_client(client: _Client) -> None:
        client.timer.stop()
        client.timer.deleteLater()
        client.notifier.setEnabled(False)  # before the descriptor is closed
        client.notifier.deleteLater()
        client.sock.close()

    @Slot(object)
    def _deliver(self, request: InstanceRequest) -> None:
        if self._pipe is not None:
            self.requested.emit(request)


def claim(request: InstanceRequest, name: str | None = None) -> InstanceServer | None:
    """Hand `request` to a running Qiao (None: it was delivered, this process should exit), or become the running
    one (the listening server). A socket that cannot be made safe: this Qiao runs alone, unreachable (logged)."""
    try:
        name = name or server_name()
        if send(request, name):
            return None
        server = InstanceServer(name)
        if server.listen():
            return server
        if send(request, name):  # another start won the race to listen
            return None
        log.warning("running without single-instance: another Qiao listens but did not take the request")
    except InstanceError as exc:
        log.warning("running without single-instance: %s", exc)
    return InstanceServer("")  # never listens: its `requested` never fires, so callers need no special case
