"""The app's "Local translation API" setting: runs engine.api's HTTP server on 127.0.0.1 with the window-backed
service while the setting is on, and stops it when it is switched off or the app quits.

engine.api is imported only when the API is switched on, so the app starts as fast with it off (the default).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from gui.settings import Key, Settings

log = logging.getLogger("qiao.api")
HOST = "127.0.0.1"  # the window never serves another address; `qiao serve --host … --allow-remote` is the CLI's
API_KEYS = (Key.API_ENABLED, Key.API_PORT, Key.API_KEY_FILE)
NOT_BUILT = "not-built"  # `problem` when engine.api is missing from this build (the window words it)


class ServerLike(Protocol):
    def start(self) -> tuple[str, int]: ...
    def stop(self, timeout: float = 10) -> None: ...


# (service, port, the API key or None) -> a server not yet started; raises ImportError when engine.api is missing
ServerFactory = Callable[[Any, int, str | None], ServerLike]
# a key file's path -> (its key, "" or why its permissions are too loose); raises ImportError like the factory
KeyReader = Callable[[Path], tuple[str, str]]


def default_server(service: Any, port: int, key: str | None) -> ServerLike:
    """engine.api's WSGI app behind its background waitress server, with this user's key if any."""
    from engine.api import guard
    from engine.api.app import ApiApp
    from engine.api.server import BackgroundServer

    app = ApiApp(service, guard.Access(host=HOST, port=port, api_key=key))
    return BackgroundServer(app, HOST, port)


def default_key_reader(path: Path) -> tuple[str, str]:
    """engine.api's key file reader, the one `qiao serve --api-key-file` uses."""
    from engine.api.keys import read_key

    return read_key(path)


class ApiHost:
    """Starts and stops the server to match the settings; `problem` is why the last start failed ("" if none)."""

    def __init__(
        self,
        settings: Settings,
        service_factory: Callable[[], Any],
        server_factory: ServerFactory | None = None,
        key_reader: KeyReader | None = None,
    ) -> None:
        self.settings = settings
        self._service_factory = service_factory
        self._server_factory = server_factory or default_server
        self._key_reader = key_reader or default_key_reader
        self.server: ServerLike | None = None
        self.service: Any = None
        self.address: tuple[str, int] | None = None
        self.problem = ""
        self.warning = ""  # why the key file's permissions are too loose, when the last start used such a file

    def apply(self) -> str:
        """Serve when API_ENABLED, else stop; a changed port or key file restarts. Returns the problem ("" = fine)."""
        self.stop()
        self.problem = self.warning = ""
        if not self.settings.get(Key.API_ENABLED):
            return ""
        port = int(self.settings.get(Key.API_PORT))
        try:
            key_file = self.settings.get(Key.API_KEY_FILE)
            key, self.warning = self._key_reader(Path(key_file)) if key_file else (None, "")
            self.service = self._service_factory()
            self.server = self._server_factory(self.service, port, key)
            self.address = self.server.start()
        except ImportError:
            self.problem = NOT_BUILT
        except Exception as exc:  # a port in use, an unreadable key file: said in the window, the app goes on
            self.problem = str(exc) or type(exc).__name__
        if self.problem:
            log.warning("the local API did not start: %s", self.problem)
            self.warning = ""
            self.stop()
        else:
            log.info("local API on http://%s:%d", *self.address)  # type: ignore[str-format]
        return self.problem

    def stop(self) -> None:
        server, service = self.server, self.service
        self.server = self.service = self.address = None
        if service is not None and hasattr(service, "close"):
            service.close()  # first: requests waiting on the engine are answered (503) instead of held
        if server is not None:
            try:
                server.stop()
            except Exception as exc:  # closing must not keep the app from quitting
                log.warning("the local API did not stop cleanly: %s", exc)
