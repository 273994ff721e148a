"""One running Qiao per user: a second start (or `qiao popup`, `qiao translate --app`) hands its request to the
running instance over a local socket and exits, so the engine is loaded once.

The socket is this user's only. On Linux and macOS it lives in a folder only this user can enter
(`$XDG_RUNTIME_DIR/qiao/`, else `<tmp>/qiao-<uid>/`, created 0700 and checked to be ours, never a folder another user
could have made first), and the server also asks Qt for user-only access (`UserAccessOption`: the socket file is
0700; on Windows the named pipe's ACL admits only this user). A client refuses a socket file that is not ours.

The protocol: one JSON object per connection, one line, at most `MAX_MESSAGE` bytes:
`{"action": "show" | "popup" | "translate", "text": str | null}`; the server answers `ok` or `error: …` and closes.
Anything else (not JSON, not an object, an unknown action, a wrong type, too long, never finished) is dropped and
logged without its content; a flood of connections is cut at `MAX_CONNECTIONS` at a time.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import stat
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger("qiao.instance")

ACTIONS = ("show", "popup", "translate")
MAX_MESSAGE = 512 * 1024  # bytes of one request line: the popup's 20,000-character limit, JSON-escaped, fits
MAX_TEXT = 100_000  # characters of a request's text
MAX_CONNECTIONS = 16  # open at once; more are closed unread
READ_TIMEOUT_MS = 2000  # a client that does not finish its line in time is cut off
CLIENT_TIMEOUT_MS = 3000
SOCKET_NAME = "instance"


class InstanceError(Exception):
    """The single-instance socket cannot be set up safely (the app then runs without it)."""


@dataclass(frozen=True)
class InstanceRequest:
    """What a second start asks of the running Qiao."""

    action: str  # "show" | "popup" | "translate"
    text: str | None = None  # popup: the text (None: read the selection); translate: the text for the window

    def encode(self) -> bytes:
        return json.dumps({"action": self.action, "text": self.text}, ensure_ascii=False).encode("utf-8") + b"\n"


def decode(line: bytes) -> InstanceRequest:
    """Parse one request line; ValueError (with a reason, never the content) when it is not a valid request."""
    if len(line) > MAX_MESSAGE:
        raise ValueError(f"too long ({len(line)} bytes)")
    try:
        raw = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not UTF-8 JSON ({type(exc).__name__})") from None
    if not isinstance(raw, dict):
        raise ValueError(f"not a JSON object ({type(raw).__name__})")
    action, text = raw.get("action"), raw.get("text")
    if action not in ACTIONS:
        raise ValueError("unknown action")
    if text is not None and not isinstance(text, str):
        raise ValueError(f"text is a {type(text).__name__}, not a string")
    if text is not None and len(text) > MAX_TEXT:
        raise ValueError(f"text too long ({len(text)} characters)")
    if action == "translate" and not (text and text.strip()):
        raise ValueError("translate without text")
    return InstanceRequest(action, text)


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
        return f"qiao-{user}"
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
    if not _ours(name):
        raise InstanceError(f"{name} belongs to another user")
    sock = QLocalSocket()
    sock.connectToServer(name)
    if not sock.waitForConnected(timeout_ms):
        return False
    try:
        sock.write(request.encode())
        if not sock.waitForBytesWritten(timeout_ms):
            return False
        answer = b""
        while b"\n" not in answer and sock.waitForReadyRead(timeout_ms):
            answer += bytes(sock.readAll().data())
        answer += bytes(sock.readAll().data())  # what came with the server's goodbye
        if answer.strip() != b"ok":
            log.warning("the running Qiao refused the request: %s", answer.strip()[:200].decode("utf-8", "replace"))
        return answer.strip() == b"ok"
    finally:
        sock.disconnectFromServer()


class InstanceServer(QObject):
    """Listens for later starts of Qiao; `requested(InstanceRequest)` fires on the UI thread for each valid one."""

    requested = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.setMaxPendingConnections(MAX_CONNECTIONS)
        self.server.newConnection.connect(self._accept)
        self._buffers: dict[QLocalSocket, bytearray] = {}
        self.rejected = 0  # malformed, oversized, unfinished or surplus connections (tests, logs)

    def listen(self) -> bool:
        """Start serving; False when another live Qiao already serves this name. A stale socket left by a crash is
        removed first (only when nothing answers on it)."""
        if self.server.listen(self.name):
            return True
        if self.server.serverError() != QLocalSocket.LocalSocketError.AddressInUseError and not os.path.exists(
            self.name
        ):
            raise InstanceError(f"cannot listen on {self.name}: {self.server.errorString()}")
        probe = QLocalSocket()
        probe.connectToServer(self.name)
        if probe.waitForConnected(500):
            probe.abort()
            return False
        QLocalServer.removeServer(self.name)
        if not self.server.listen(self.name):
            raise InstanceError(f"cannot listen on {self.name}: {self.server.errorString()}")
        return True

    def full_name(self) -> str:
        return self.server.fullServerName()

    def close(self) -> None:
        for sock in list(self._buffers):
            sock.abort()
        self._buffers.clear()
        self.server.close()

    @Slot()
    def _accept(self) -> None:
        while self.server.hasPendingConnections():
            sock = self.server.nextPendingConnection()
            if sock is None:
                break
            if len(self._buffers) >= MAX_CONNECTIONS:
                self._reject(sock, "too many connections at once")
                continue
            sock.setReadBufferSize(MAX_MESSAGE + 1)  # a client that sends on and on fills no more than this
            self._buffers[sock] = bytearray()
            sock.readyRead.connect(lambda s=sock: self._read(s))
            sock.disconnected.connect(lambda s=sock: self._drop(s))
            timer = QTimer(sock)
            timer.setSingleShot(True)
            timer.timeout.connect(lambda s=sock: self._timed_out(s))
            timer.start(READ_TIMEOUT_MS)
            if sock.bytesAvailable():
                self._read(sock)

    def _read(self, sock: QLocalSocket) -> None:
        buffer = self._buffers.get(sock)
        if buffer is None:
            return
        buffer += bytes(sock.read(MAX_MESSAGE + 1 - len(buffer)).data())
        end = buffer.find(b"\n")
        if end < 0:
            if len(buffer) > MAX_MESSAGE:
                self._reject(sock, f"message over {MAX_MESSAGE} bytes")
            return
        line = bytes(buffer[:end])
        del self._buffers[sock]
        try:
            request = decode(line)
        except ValueError as exc:
            self._reject(sock, str(exc))
            return
        log.info("request from another start: %s (%d characters)", request.action, len(request.text or ""))
        sock.write(b"ok\n")
        sock.flush()
        sock.disconnectFromServer()
        self.requested.emit(request)

    def _timed_out(self, sock: QLocalSocket) -> None:
        if sock in self._buffers:
            self._reject(sock, "message not finished in time")

    def _reject(self, sock: QLocalSocket, why: str) -> None:
        self.rejected += 1
        log.warning("ignored a malformed single-instance message: %s", why)
        self._buffers.pop(sock, None)
        if sock.state() == QLocalSocket.LocalSocketState.ConnectedState:
            sock.write(b"error: malformed request\n")
            sock.flush()
            sock.disconnectFromServer()  # after the answer is written; nothing more is read from it
        else:
            sock.abort()

    def _drop(self, sock: QLocalSocket) -> None:
        self._buffers.pop(sock, None)
        sock.deleteLater()


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
