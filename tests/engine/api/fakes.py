"""A fake TranslationService and a WSGI caller, so the app's cases run without a model or a socket."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from engine.api import guard
from engine.api.app import ApiApp
from engine.api.errors import Busy
from engine.api.languages import PairInfo, detect, resolve

PAIRS = [
    PairInfo("en", "zh", "English", "Chinese", ("hans", "hant")),
    PairInfo("zh", "en", "Chinese", "English"),
]
PORT = 5454


class FakeService:
    """Translates "x" to "<target>:x" (the variant too, when one was chosen); records every call."""

    def __init__(self, pairs: list[PairInfo] | None = None) -> None:
        self.pairs = PAIRS if pairs is None else pairs
        self.calls: list[tuple] = []
        self.busy = False
        self.closed = False
        self.lock = threading.Lock()

    def languages(self) -> list[PairInfo]:
        return list(self.pairs)

    def translate(
        self,
        texts: Sequence[str],
        source: str,
        target: str,
        *,
        alternatives: int = 0,
        fmt: str = "text",
        timeout: float | None = None,
    ) -> list[str]:
        if self.busy:
            raise Busy("Qiao is busy (32 requests are waiting); try again shortly")
        direction = resolve(self.pairs, list(texts), source, target)
        with self.lock:
            self.calls.append(("translate", list(texts), direction.source, target, alternatives, fmt))
        if direction.pair is None:
            return list(texts)
        tag = direction.pair.target + (f"-{direction.variant}" if direction.variant else "")
        if fmt == "html":
            from engine.api.documents import translate_html

            return translate_html(texts, lambda batch: [f"{tag}:{t}" for t in batch], direction.pair.target)
        return [f"{tag}:{t}" for t in texts]

    def translate_nbest(
        self, texts: Sequence[str], source: str, target: str, count: int, *, timeout: float | None = None
    ) -> list[tuple[str, list[str]]]:
        """The translation, and "<k>~" + it as the k-th alternative."""
        done = self.translate(texts, source, target, alternatives=count, timeout=timeout)
        return [(t, [f"{k}~{t}" for k in range(1, count + 1)]) for t in done]

    def stream(self, text: str, source: str, target: str, *, timeout: float | None = None) -> Iterator[str]:
        if self.busy:
            raise Busy("busy")
        direction = resolve(self.pairs, [text], source, target)
        self.calls.append(("stream", text, direction.source, target))
        words = text.split(" ")
        return iter([f"{w} " if i < len(words) - 1 else w for i, w in enumerate(words)])

    def detect(self, text: str) -> list[tuple[str, float]]:
        return detect(text)

    def close(self) -> None:
        self.closed = True


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes
    lines: list[str] = field(default_factory=list)

    def json(self):
        return json.loads(self.body.decode("utf-8"))


def make_app(service: FakeService | None = None, **access) -> tuple[ApiApp, FakeService]:
    service = service or FakeService()
    options = {k: access.pop(k) for k in ("log_content", "max_chars", "timeout_s") if k in access}
    return ApiApp(service, guard.Access(port=PORT, **access), **options), service


def call(
    app: ApiApp,
    method: str,
    path: str,
    *,
    body: bytes = b"",
    json_body: object = None,
    form: dict | None = None,
    content_type: str | None = None,
    headers: dict[str, str] | None = None,
    query: str = "",
    content_length: str | None = None,
    stream: object = None,
) -> Reply:
    """One request through the WSGI app, as waitress would hand it over."""
    if json_body is not None:
        body = json.dumps(json_body).encode()
        content_type = content_type or "application/json"
    elif form is not None:
        from urllib.parse import urlencode

        body = urlencode(form, doseq=True).encode()
        content_type = content_type or "application/x-www-form-urlencoded"
    environ = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "CONTENT_LENGTH": content_length if content_length is not None else (str(len(body)) if body else ""),
        "wsgi.input": stream if stream is not None else io.BytesIO(body),
        "wsgi.url_scheme": "http",
        "HTTP_HOST": f"127.0.0.1:{PORT}",
    }
    if content_type:
        environ["CONTENT_TYPE"] = content_type
    for name, value in (headers or {}).items():
        key = "HTTP_" + name.upper().replace("-", "_")
        if value is None:
            environ.pop(key, None)
        else:
            environ[key] = value
    seen: dict = {}

    def start_response(status, response_headers, exc_info=None):
        seen["status"] = int(status.split()[0])
        seen["headers"] = dict(response_headers)

    result = app(environ, start_response)
    data = b"".join(result)
    if hasattr(result, "close"):
        result.close()
    return Reply(seen["status"], seen["headers"], data)


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    boundary = "qiao-test-boundary-7f3a"
    out = io.BytesIO()
    for name, value in fields.items():
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    for name, (filename, data) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        )
        out.write(head.encode() + data + b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return out.getvalue(), f"multipart/form-data; boundary={boundary}"
