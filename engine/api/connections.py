"""Connections to the API as waitress holds them, made fair to every client (no one can lock the others out).

Waitress reads requests on one I/O thread and hands a worker thread only a request it has whole, so an idle or
slow connection never holds a worker. What it did not do: at `connection_limit` open connections it stopped
accepting until one closed, and it closed idle ones only after `channel_timeout` (60 s, looked at every 30 s). So
~100 idle or slowloris connections from any local user stopped the server answering anyone for 60–90 s. Here:

- the server keeps accepting: a new connection over `connection_limit`, or over `PER_PEER_LIMIT` from one address,
  closes the longest-idle connection that is not being served (of the address holding the most, so one client's
  flood is the flood's loss; on 127.0.0.1 every local user shares the address, and the idle ones go first). A new
  client is therefore served at once; only when every connection is being served is the newcomer answered 503;
- a request's line and headers must arrive within `HEADER_TIMEOUT_S` of its first byte, its body within
  `BODY_TIMEOUT_S`, and a connection idle between requests is closed after `IDLE_TIMEOUT_S` (checked every second);
- a body over waitress's in-memory limit (512 KB) is spooled to an unlinked file in Qiao's own cache folder
  (`spool_dir`), never in the system's temporary folder; responses stay in memory (they are there already).
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from waitress.buffers import FileBasedBuffer, OverflowableBuffer
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import TcpWSGIServer

log = logging.getLogger("qiao.api")

HEADER_TIMEOUT_S = 10.0  # request line and headers, from the request's first byte
BODY_TIMEOUT_S = 60.0  # the body (20 MB at most), from the request's first byte
IDLE_TIMEOUT_S = 15  # a kept-alive connection with no request
PER_PEER_LIMIT = 64  # open connections from one address before its idle ones are closed for newcomers
_FULL = json.dumps({"error": "Qiao's API is busy with other requests; try again shortly"}).encode()
REFUSED = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 2\r\nConnection: close\r\n"
    b"Content-Length: " + str(len(_FULL)).encode() + b"\r\n\r\n" + _FULL
)


def spool_file(folder: Path | None) -> Any:
    """An unlinked temporary file in `folder` (made 0700 when missing); in memory when there is no usable folder."""
    if folder is not None:
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            return tempfile.TemporaryFile("w+b", dir=folder)
        except OSError as exc:
            log.warning("cannot spool a request body in %s (%s); keeping it in memory", folder, exc.strerror or exc)
    import io

    return io.BytesIO()


class _SpoolFileBuffer(FileBasedBuffer):
    def __init__(self, folder: Path | None, from_buffer: Any = None) -> None:
        self.folder = folder
        super().__init__(self.newfile(), from_buffer)

    def newfile(self) -> Any:
        return spool_file(self.folder)


class SpoolingBuffer(OverflowableBuffer):
    """waitress's buffer for a request body: in memory up to `overflow` bytes, then a file in `folder`
    (waitress's own used tempfile.TemporaryFile(), i.e. /tmp)."""

    buf: Any  # waitress's buffer (waitress has no type information)

    def __init__(self, overflow: int, folder: Path | None) -> None:
        super().__init__(overflow)
        self.folder = folder

    def _set_large_buffer(self) -> None:
        old = self.buf
        self.buf = _SpoolFileBuffer(self.folder, old)
        if hasattr(old, "close"):
            old.close()
        self.overflowed = True


class _Parser(HTTPRequestParser):
    spool_dir: Path | None = None

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        receiver = self.body_rcv
        if receiver is not None:  # just made, still empty: its buffer is swapped for one that spools in our folder
            receiver.buf = SpoolingBuffer(self.adj.inbuf_overflow, self.spool_dir)


class FairChannel(HTTPChannel):
    """A connection that remembers when its current request began (for the header and body timeouts)."""

    request_began = 0.0

    def parser_class(self, adj: Any) -> HTTPRequestParser:
        parser = _Parser(adj)
        parser.spool_dir = getattr(self.server, "spool_dir", None)
        return parser

    def received(self, data: bytes) -> bool:
        if self.request is None and data:
            self.request_began = time.time()
        return super().received(data)

    def check_client_disconnected(self) -> bool:
        """waitress's `environ["waitress.client_disconnected"]`, made to work without its read-ahead: the socket is
        peeked (nothing is consumed) for the end of the stream or a reset, so a request whose client went away is
        stopped (engine.api.service) instead of holding the engine to its time limit. A client that half-closes
        after sending counts as gone too (HTTP clients do not)."""
        if not self.connected:
            return True
        try:
            data = self.socket.recv(1, socket.MSG_PEEK)  # the socket is non-blocking: no data raises at once
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:  # reset, or closed under us
            return True
        return not data

    @property
    def idle(self) -> bool:
        """Not being served, nothing left to send and nothing sent to it still unread: closing it loses no answer
        (in a burst of clients, the connections accepted before their requests were read are not idle: closing them
        reset clients that had sent a whole request; the newcomer is answered 503 instead)."""
        return not self.requests and not self.total_outbufs_len and not self.will_close and not self._unread()

    def _unread(self) -> bool:
        """Bytes have arrived that the loop has not read yet (peeked, nothing consumed)."""
        try:
            return bool(self.socket.recv(1, socket.MSG_PEEK))
        except OSError:  # nothing to read (the socket is non-blocking), or closed: nothing waits
            return False


class FairServer(TcpWSGIServer):
    """waitress's TCP server with the rules of the module docstring."""

    channel_class = FairChannel
    spool_dir: Path | None = None
    per_peer_limit = PER_PEER_LIMIT
    next_channel_cleanup: float  # waitress's (set in its __init__)

    def readable(self) -> bool:
        now = time.time()
        if now >= self.next_channel_cleanup:
            self.next_channel_cleanup = now + self.adj.cleanup_interval
            self.maintenance(now)
        return bool(self.accepting)  # never stop accepting: handle_accept makes room instead

    def handle_accept(self) -> None:
        try:
            accepted = self.accept()
            if accepted is None:
                return
            conn, addr = accepted
        except OSError:  # a connection gone before it was accepted, or no descriptor left
            return
        peer = addr[0] if isinstance(addr, tuple) else str(addr)
        if not self._make_room(peer):
            with contextlib.suppress(OSError):
                conn.setblocking(False)
                conn.send(REFUSED)
            conn.close()
            log.warning("every connection is being served: a new one was answered 503")
            return
        self.channel_class(self, conn, addr, self.adj, map=self._map)

    def _make_room(self, peer: str) -> bool:
        """Close idle connections until the newcomer fits both limits; False when none can be closed."""
        channels = list(self.active_channels.values())
        per_peer = Counter(_peer(c) for c in channels)
        limit = max(1, self.adj.connection_limit - 2)  # the map also holds this socket and the wake-up trigger
        while len(channels) >= limit or per_peer[peer] >= self.per_peer_limit:
            over_peer = per_peer[peer] >= self.per_peer_limit
            victim = self._victim(channels, peer if over_peer else None, per_peer)
            if victim is None:
                return False
            channels.remove(victim)
            per_peer[_peer(victim)] -= 1
            victim.handle_close()
        return True

    @staticmethod
    def _victim(channels: list[HTTPChannel], peer: str | None, per_peer: Counter) -> HTTPChannel | None:
        idle = [c for c in channels if getattr(c, "idle", False) and (peer is None or _peer(c) == peer)]
        if not idle:
            return None
        busiest = max(per_peer[_peer(c)] for c in idle)
        return min((c for c in idle if per_peer[_peer(c)] == busiest), key=lambda c: c.last_activity)

    def maintenance(self, now: float) -> None:
        super().maintenance(now)  # idle connections: channel_timeout
        for channel in list(self.active_channels.values()):
            request = channel.request
            if channel.requests or request is None or request.completed:
                continue
            began = getattr(channel, "request_began", now)
            limit = BODY_TIMEOUT_S if request.headers_finished else HEADER_TIMEOUT_S
            if now - began > limit:
                channel.will_close = True  # closed by the I/O loop on its next turn


def _peer(channel: HTTPChannel) -> str:
    addr = getattr(channel, "addr", None)
    return addr[0] if isinstance(addr, tuple) else str(addr)
