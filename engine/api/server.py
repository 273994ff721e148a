"""The API on waitress (a pure-Python WSGI server), bound to loopback unless the user named another address AND
allowed it: binding elsewhere lets other machines on the network translate through this one."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import threading
from functools import partial
from pathlib import Path
from typing import Any

from engine.api import guard
from engine.api.body import MAX_FILE_BYTES
from engine.api.errors import ApiError
from engine.errors import QiaoError

THREADS = 8  # requests handled at once; each waits for the engine's FIFO queue
CONNECTION_LIMIT = 100  # open connections; beyond it waitress stops accepting until one closes


class ServeError(QiaoError):
    """The server cannot start as asked (a refused address, a port in use), worded for a person."""


def check_bind(host: str, allow_remote: bool) -> str:
    """The address to bind: loopback as given ("localhost" is 127.0.0.1, never what a resolver says); another one
    only with `allow_remote`."""
    if host.lower() == "localhost":
        return guard.DEFAULT_HOST
    if guard.is_loopback(host):
        return host.strip("[]")
    if not allow_remote:
        raise ServeError(
            f"refusing to listen on {host}: other machines could then use this translator. Qiao listens on "
            "127.0.0.1 (this machine only); to listen on another address anyway, add --allow-remote"
        )
    return host.strip("[]")


def spool_folder() -> Path:
    """Where request bodies over 512 KB wait while they are read: Qiao's cache folder, never the system's /tmp."""
    from engine.paths import cache_dir

    return cache_dir() / "api-uploads"


def make_server(
    app,
    host: str,
    port: int,
    *,
    threads: int = THREADS,
    connection_limit: int = CONNECTION_LIMIT,
    spool_dir: Path | None = None,
):
    """A waitress server for `app` on host:port (port 0: any free one; see `.effective_port`); not yet running.
    engine.api.connections' rules keep any client from locking the others out; `spool_dir` (default
    `spool_folder()`) holds large request bodies.

    ServeError when the port is taken or the address cannot be used."""
    from waitress.adjustments import Adjustments
    from waitress.task import ThreadedTaskDispatcher

    from engine.api.connections import IDLE_TIMEOUT_S, FairServer

    adj = Adjustments(
        host=host,
        port=port,
        threads=threads,
        connection_limit=connection_limit,
        max_request_body_size=MAX_FILE_BYTES + 2**20,  # multipart framing; the app's own limits answer first
        outbuf_overflow=2 * MAX_FILE_BYTES,  # responses stay in memory (the app holds them there already)
        ident="qiao",
        expose_tracebacks=False,
        clear_untrusted_proxy_headers=True,
        trusted_proxy=None,
        channel_timeout=IDLE_TIMEOUT_S,
        cleanup_interval=1,  # the idle, header and body timeouts are looked at every second
    )
    if len(adj.listen) != 1:
        raise ServeError(f"{host} names {len(adj.listen)} addresses; give one IP address with --host")
    dispatcher = ThreadedTaskDispatcher()
    dispatcher.set_thread_count(adj.threads)
    try:
        server = FairServer(app, {}, True, None, dispatcher=dispatcher, adj=adj, sockinfo=adj.listen[0])
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE or getattr(exc, "winerror", None) == 10048:
            raise ServeError(
                f"port {port} on {host} is in use (another program, or another qiao serve); choose another with "
                "--port N"
            ) from None
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    server.spool_dir = spool_dir if spool_dir is not None else spool_folder()
    return server


def bound_address(server) -> tuple[str, int]:
    """(host, port) of the listening socket, as the system reports it."""
    name = server.socket.getsockname()
    return name[0], name[1]


class BackgroundServer:
    """The API served from a thread of its own (the window's setting): `start()` binds (ServeError when it cannot),
    `stop()` finishes the requests being handled and closes the socket. The caller closes its service."""

    def __init__(self, app, host: str = guard.DEFAULT_HOST, port: int = guard.DEFAULT_PORT, **kwargs) -> None:
        self._args = (app, host, port)
        self._kwargs = kwargs
        self.server: Any = None  # a waitress server once started (waitress has no type information)
        self._thread: threading.Thread | None = None

    def start(self) -> tuple[str, int]:
        """Listen and serve; (host, port) of the listening socket."""
        app, host, port = self._args
        self.server = make_server(app, host, port, **self._kwargs)
        if hasattr(app, "access"):  # port 0: the one the system chose, for the Host check
            app.access = dataclasses.replace(app.access, port=int(self.server.effective_port))
        self._thread = threading.Thread(target=self.server.run, name="qiao-api-server", daemon=True)
        self._thread.start()
        return bound_address(self.server)

    def stop(self, timeout: float = 10) -> None:
        """Finish the requests being handled, then close every socket (the listening one, the clients' kept-alive
        connections, the loop's wake-up pipe) on the loop's own thread, which then ends: closing them from here
        broke its select() (EBADF), and an open client connection kept the loop, and this call, waiting."""
        server = self.server
        if server is None:
            return
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=timeout)
        thread = self._thread
        if thread is not None and thread.is_alive():
            # the loop may be running the trigger's callbacks already and run this one before the pull's own write,
            # which then finds the pipe closed (EBADF): the callback ran, as wanted
            with contextlib.suppress(OSError):
                server.trigger.pull_trigger(partial(_close_all, server))
            thread.join(timeout)
        if thread is None or not thread.is_alive():
            _close_all(server)  # not running, or done: closing twice is harmless
        self.server = None


def _close_all(server) -> None:
    """Every socket of `server`'s loop closed (on the loop's thread when it runs): the loop ends with its map empty."""
    for dispatcher in list(server._map.values()):
        with contextlib.suppress(OSError):
            if dispatcher is server or dispatcher is server.trigger:
                dispatcher.close()
            else:
                dispatcher.handle_close()  # a client connection: its buffers too
    with contextlib.suppress(OSError):
        server.close()  # no longer in the map (a second close of any of them is harmless)


__all__ = ["ApiError", "BackgroundServer", "ServeError", "bound_address", "check_bind", "make_server"]
