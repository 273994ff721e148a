"""`qiao serve` as a real process on 127.0.0.1, and loopback-only connections for tests that talk to it."""

from __future__ import annotations

import _socket
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BUNDLE = ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle"
LOOPBACK = ("127.0.0.1", "::1", "localhost")


def allow_loopback(monkeypatch) -> None:
    """The suite forbids the network (tests/conftest.py); these tests may connect to 127.0.0.1, nothing else."""
    real_connect = _socket.socket.connect

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOOPBACK:
            raise OSError(f"network access attempted in a test: {address!r}")
        return real_connect(self, address)

    def create_connection(address, timeout=socket._GLOBAL_DEFAULT_TIMEOUT, source_address=None, **kw):
        host, port = address[0], address[1]
        if host not in LOOPBACK:
            raise OSError(f"network access attempted in a test: {address!r}")
        sock = socket.socket(socket.AF_INET6 if host == "::1" else socket.AF_INET)
        if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
            sock.settimeout(timeout)
        try:
            real_connect(sock, ("::1" if host == "::1" else "127.0.0.1", port))
        except BaseException:
            sock.close()
            raise
        return sock

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)


class Served:
    """A running `qiao serve`; `url` ends with "/"."""

    def __init__(self, args: list[str], timeout: float = 60) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.cli.main", "serve", "--model", str(BUNDLE), "--port", "0", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.stderr_lines: list[str] = []
        self._err = threading.Thread(target=self._drain, daemon=True)
        self._err.start()
        line = _readline(self.proc, timeout)
        if "http://" not in line:
            self.stop()
            raise AssertionError(f"qiao serve did not start: {line!r} {self.stderr_lines}")
        self.url = line.split("http://", 1)[1].split()[0]
        self.url = "http://" + self.url
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr_lines.append(line)

    def rss_kb(self, field: str = "VmRSS") -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return 0

    def stop(self, sig: int | None = None) -> int:
        import signal

        if self.proc.poll() is None:
            self.proc.send_signal(sig or signal.SIGINT)
        try:
            code = self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait(10)
        self._err.join(5)
        return code


def _readline(proc: subprocess.Popen, timeout: float) -> str:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    return box[0] if box else ""


def listening_addresses(port: int) -> list[str]:
    """Local addresses of LISTEN sockets on `port` (Linux /proc/net/tcp and tcp6), as hex as the kernel shows."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            address, port_hex = cols[1].rsplit(":", 1)
            if int(port_hex, 16) == port and cols[3] == "0A":
                found.append(address)
    return found


def wait_until(predicate, timeout: float = 10) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False
