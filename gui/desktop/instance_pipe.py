"""Windows' single-instance channel: a named pipe served by `multiprocessing.connection` on a daemon thread.

The pipe itself cannot be tested here (no Windows in CI), so this is kept small; the tests run the same code over
`multiprocessing.connection`'s AF_UNIX family (thread, limits, queued delivery, stop). The pipe gets Windows' default
security, whose ACL lets only this user (with SYSTEM and administrators) write to it; the first listener creates it
with FILE_FLAG_FIRST_PIPE_INSTANCE, so a name that is taken makes `PipeServer.start` return None (a live Qiao) rather
than join it. The messages are gui.desktop.instance_protocol's; no Qt here: the owner (gui.desktop.single_instance)
moves what arrives to the UI thread.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

from gui.desktop.instance_protocol import (
    ERROR_ANSWER,
    MAX_MESSAGE,
    READ_TIMEOUT_MS,
    InstanceError,
    InstanceRequest,
    decode,
)

log = logging.getLogger("qiao.instance.pipe")


class PipeServer:
    """One client at a time (each given `READ_TIMEOUT_MS` for its one message); valid requests go to `deliver` (on
    this server's thread: the caller queues them to its own), refusals to `rejected` with their reason."""

    def __init__(
        self, listener: Any, deliver: Callable[[InstanceRequest], None], rejected: Callable[[str], None], family: str
    ) -> None:
        self.listener = listener
        self.deliver = deliver
        self.rejected = rejected
        self.family = family
        self.stopping = False
        self.address = listener.address
        self.thread = threading.Thread(target=self._serve, name="qiao-instance-pipe", daemon=True)
        self.thread.start()

    @classmethod
    def start(
        cls, address: str, deliver: Callable[[InstanceRequest], None], rejected: Callable[[str], None], family: str
    ) -> PipeServer | None:
        """Listen on `address` (`family` AF_PIPE; the tests use AF_UNIX); None when another Qiao holds it."""
        from multiprocessing.connection import Listener

        try:
            listener = Listener(address=address, family=family)
        except PermissionError:  # ERROR_ACCESS_DENIED: another Qiao (or someone) holds the name
            return None
        except OSError as exc:
            raise InstanceError(f"cannot listen on {address}: {exc.strerror or exc}") from None
        return cls(listener, deliver, rejected, family)

    def _serve(self) -> None:
        while not self.stopping:
            try:
                conn = self.listener.accept()
            except OSError:
                if self.stopping:
                    return
                continue
            with conn:
                if self.stopping:
                    return
                self._handle(conn)

    def _handle(self, conn: Any) -> None:
        try:
            if not conn.poll(READ_TIMEOUT_MS / 1000):
                raise ValueError("message not finished in time")
            request = decode(conn.recv_bytes(MAX_MESSAGE))
        except (ValueError, OSError, EOFError) as exc:  # recv_bytes: OSError when over the limit
            self.rejected(str(exc) if isinstance(exc, ValueError) else f"unreadable message ({type(exc).__name__})")
            with contextlib.suppress(OSError, EOFError):
                conn.send_bytes(ERROR_ANSWER)
            return
        with contextlib.suppress(OSError, EOFError):
            conn.send_bytes(b"ok\n")
        self.deliver(request)

    def stop(self) -> None:
        """Ends the thread: a last connection of our own wakes its accept()."""
        from multiprocessing.connection import Client

        self.stopping = True
        with contextlib.suppress(OSError, EOFError):
            Client(self.address, family=self.family).close()
        self.thread.join(READ_TIMEOUT_MS / 1000 + 1)  # a client being served is given its time, no more
        with contextlib.suppress(OSError):
            self.listener.close()


def pipe_send(request: InstanceRequest, address: str, timeout_ms: int, family: str) -> bool:
    """A later start's side: one message over the pipe, one answer; True once the running Qiao answered `ok`."""
    from multiprocessing.connection import Client

    try:
        conn = Client(address, family=family)
    except OSError:  # no Qiao runs
        return False
    with conn:
        try:
            conn.send_bytes(request.encode())
            if not conn.poll(timeout_ms / 1000):
                return False
            answer = conn.recv_bytes(4096)
        except (OSError, EOFError):
            return False
    if answer.strip() != b"ok":
        log.warning("the running Qiao refused the request: %s", answer.strip()[:200].decode("utf-8", "replace"))
    return answer.strip() == b"ok"
