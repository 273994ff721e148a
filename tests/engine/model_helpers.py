"""Shared by the model store, catalogue, download and CLI tests: a private models folder, bundle archives made from
the committed fixture, and a local HTTP server on 127.0.0.1 that misbehaves on request.

A test module takes the fixtures it needs as its own names (`store = model_helpers.store`).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import shutil
import socket
import tarfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.paths import settings_file
from tests.conftest import BUNDLE

FIXTURE_NAME = "tiny-marian-fixture"  # bundle_name("qiao/tiny-marian-fixture")
LOOPBACK = ("127.0.0.1", "::1", "localhost")
# Captured at import, before any test's guard patches them.
_REAL_CONNECT = socket.socket.connect
_REAL_CREATE_CONNECTION = socket.create_connection


@dataclass
class Store:
    """The paths one test's model store uses."""

    data: Path
    models: Path
    source: Path  # stands in for the checkout's resources/models

    def listing(self) -> list[str]:
        """Everything under the models folder (relative paths): what "nothing was changed" compares."""
        if not self.models.exists():
            return []
        return sorted(p.relative_to(self.models).as_posix() for p in self.models.rglob("*"))


@pytest.fixture
def store(tmp_path, monkeypatch) -> Store:
    """A models folder of this test's own; no QIAO_MODEL_DIR, no catalogue override, no source bundles, and a settings
    folder of its own (the per-direction model choice is read from it: engine.store.choice)."""
    data = tmp_path / "data"
    monkeypatch.setenv("QIAO_DATA_DIR", str(data))
    monkeypatch.setenv("QIAO_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("QIAO_MODEL_DIR", raising=False)
    monkeypatch.delenv("QIAO_CATALOGUE_URL", raising=False)
    source_root = tmp_path / "checkout"
    monkeypatch.setattr("engine.store.locate.SOURCE_ROOT", source_root)
    return Store(data, data / "models", source_root / "resources" / "models")


FIREFOX_ENZH, OPUS_ENZH = "firefox-enzh", "opus-mt-en-zh"  # a Simplified-only en→zh model and one writing both


@pytest.fixture
def install_enzh(store, bergamot_bundle_dir):
    """install(*names): the named en→zh bundles (FIREFOX_ENZH: the tiny Bergamot model; OPUS_ENZH: the Marian
    fixture) in the test's models folder, the Firefox one chosen for en→zh in qiao.ini."""

    def install_(*names: str) -> dict[str, Path]:
        sources = {FIREFOX_ENZH: bergamot_bundle_dir, OPUS_ENZH: BUNDLE}
        made = {name: store.models / name for name in names}
        for name, path in made.items():
            shutil.copytree(sources[name], path)
        settings_file().parent.mkdir(parents=True, exist_ok=True)
        settings_file().write_text(f"[models]\nen-zh={FIREFOX_ENZH}\n", encoding="utf-8")
        return made

    return install_


def zip_bundle(dest: Path, bundle: Path = BUNDLE, top: str | None = FIXTURE_NAME) -> Path:
    """A zip of `bundle` with its files under `top/` (or at the root when None)."""
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(bundle.rglob("*")):
            if path.is_file():
                rel = path.relative_to(bundle).as_posix()
                zf.write(path, f"{top}/{rel}" if top else rel)
    return dest


def tar_bundle(dest: Path, mode: str = "w:gz", bundle: Path = BUNDLE, top: str = FIXTURE_NAME) -> Path:
    with tarfile.open(dest, mode) as tf:
        tf.add(bundle, arcname=top)
    return dest


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def catalogue_entry(archive: Path, url: str, **changes: object) -> dict:
    """A catalogue entry for `archive` served at `url` (the fixture's facts), with `changes` applied."""
    entry = {
        "id": FIXTURE_NAME,
        "name": "English → Chinese (tiny fixture)",
        "source": "en",
        "target": "zh",
        "model_id": "qiao/tiny-marian-fixture",
        "url": url,
        "size": archive.stat().st_size,
        "sha256": sha256(archive),
        "license": "CC-BY-4.0",
        "precisions": ["int8", "fp32"],
    }
    entry.update(changes)
    return entry


def write_catalogue(path: Path, entries: list[dict]) -> Path:
    path.write_text(json.dumps({"format": 1, "bundles": entries}, ensure_ascii=False), encoding="utf-8")
    return path


# -- the local server ---------------------------------------------------------------------------------------------


@dataclass
class Route:
    """What the server answers on one path.

    mode: "ok" (honours Range), "ignore-range" (always 200 and the whole body), "drop-once" (the first answer
    stops after `cut` bytes and closes the connection; later ones are "ok"), "truncate" (claims the whole length
    but never sends past `cut`), "short" (a Content-Length of `cut`, and that many bytes), "status" (answers
    `status`), "slow" (honours Range, 4 KiB every `delay` s), "wrong-range" (answers any Range with a 206 of the
    whole file from byte 0).
    """

    body: bytes
    mode: str = "ok"
    cut: int = 0
    status: int = 200
    delay: float = 0.02
    served: int = 0


@dataclass
class Server:
    url: str
    routes: dict[str, Route] = field(default_factory=dict)
    requests: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Range header)

    def add(self, path: str, body: bytes, **how: object) -> str:
        self.routes[path] = Route(body, **how)  # type: ignore[arg-type]
        return self.url + path


class _Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        state = self.server.state  # type: ignore[attr-defined]
        rng = self.headers.get("Range")
        state.requests.append((self.path, rng))
        route = state.routes.get(self.path)
        if route is None:
            self.send_error(404, "Not Found")
            return
        route.served += 1
        if route.mode == "status":
            self.send_error(route.status)
            return
        body = route.body
        mode = route.mode
        if mode == "drop-once" and route.served > 1:
            mode = "ok"
        if mode == "wrong-range" and rng:
            self.send_response(206)
            self.send_header("Content-Range", f"bytes 0-{len(body) - 1}/{len(body)}")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        start = 0
        if rng and mode in ("ok", "slow", "truncate"):
            start = int(rng.removeprefix("bytes=").split("-")[0])
        if start >= len(body) and start:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(body)}")
            self.end_headers()
            return
        if start:
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        length = route.cut if mode == "short" else len(body) - start
        self.send_header("Content-Length", str(length))
        self.end_headers()
        if mode == "short":
            self.wfile.write(body[: route.cut])
        elif mode == "drop-once":
            self.wfile.write(body[start : route.cut])
            self._drop()
        elif mode == "truncate":
            self.wfile.write(body[start : max(start, route.cut)])
            self._drop()
        elif mode == "slow":
            for i in range(start, len(body), 4096):
                try:
                    self.wfile.write(body[i : i + 4096])
                    self.wfile.flush()
                except OSError:
                    return
                time.sleep(route.delay)
        else:
            self.wfile.write(body[start:])

    def _drop(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


def allow_loopback(monkeypatch) -> None:
    """The test may connect to 127.0.0.1 (servers it starts), never elsewhere; no proxy from the environment.
    Call it after conftest's `_no_network` guard is in place (a fixture that takes `_no_network`)."""
    guarded_connect = socket.socket.connect

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] in LOOPBACK:
            return _REAL_CONNECT(self, address)
        return guarded_connect(self, address)

    def create_connection(address, *args, **kwargs):
        if address[0] not in LOOPBACK:
            raise OSError(f"network access attempted in a test: {address!r}")
        return _REAL_CREATE_CONNECTION(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "create_connection", create_connection)
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server(_no_network, monkeypatch):
    """A ThreadingHTTPServer on 127.0.0.1 (port 0) in a thread; add routes with `server.add(path, body, ...)`."""
    allow_loopback(monkeypatch)
    with running_server() as state:
        yield state


@contextlib.contextmanager
def running_server():
    """The server behind the `server` fixture (the caller lets loopback connections through first)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    state = Server(url=f"http://127.0.0.1:{httpd.server_address[1]}")
    httpd.state = state  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def closed_port_url(path: str = "/x.zip") -> str:
    """An http URL on 127.0.0.1 where nothing listens (connection refused: what offline looks like)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}{path}"
