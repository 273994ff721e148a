"""The WSGI application: LibreTranslate's API as its clients expect it, and Qiao's own streaming endpoint.

    POST /translate          q (string or list), source ("auto" allowed), target, format text|html, alternatives,
                             api_key → {"translatedText": …} (a list for a list), "detectedLanguage" for "auto",
                             "alternatives" when asked for: the beam's n-best, whole texts (none for html, as
                             LibreTranslate); Qiao adds "warnings" (sentences) when the model's translation of an
                             item (or, for html, of a paragraph), or of one sentence of it, was empty: that text is
                             returned as it was, a sentence in its place in the item's translation
    GET  /languages          [{"code", "name", "targets"}]; Chinese as LibreTranslate lists it today, "zh-Hans" and
                             "zh-Hant" ("zh", "zh-CN", "zh-TW" … stay accepted in requests)
    POST /detect             q → [{"language", "confidence"}] (Chinese is "zh-Hans", as LibreTranslate says it)
    GET  /frontend/settings  what LibreTranslate's clients read first (limits, key required, file formats)
    POST /translate_file     multipart `file` + source, target → {"translatedFileUrl"}, fetched once from
    GET  /download_file/NAME (kept in memory for DOWNLOAD_TTL_S; a name in any script, percent-encoded); Qiao adds
                             "warnings" (sentences) when the reader kept text verbatim that it could not place, or
                             a paragraph or sentence was kept as it was because the model's translation of it was
                             empty
    POST /suggest            403 "Suggestions are disabled on this server." (LibreTranslate's answer with them off)
    GET  /health             {"status": "ok"} (LibreTranslate's)
    POST /qiao/stream        q, source, target → server-sent events: `data: {"delta": …}` per chunk, then
                             `event: done` with {"translatedText": …} (or `event: error` with {"error": …}), and
                             "warnings" when text came back as it was (see _Events)
    GET  /qiao/health        {"status": "ok", "version", "pairs"}

Errors are `{"error": "…"}` with LibreTranslate's statuses (400 bad request, 403 key or origin, 404, 405, 413,
415, 421 wrong Host, 503 busy with Retry-After, 504 over the time limit for one request: `timeout_s`, the whole
request, queue included; the engine is stopped). Nothing a request says is logged unless `log_content` is set.
"""

from __future__ import annotations

import json
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, overload
from urllib.parse import quote

from engine import __version__
from engine.api import body as bodies
from engine.api import documents, guard
from engine.api.errors import ApiError, TimedOut
from engine.api.languages import AUTO, PairInfo, parse_code, resolve
from engine.api.service import TranslationService, watching
from engine.documents import registry
from engine.documents.job import excerpt_of
from engine.documents.model import DocumentError
from engine.errors import InputError, QiaoError

log = logging.getLogger("qiao.api")

MAX_CHARS = 100_000  # characters of text in one request (all q items together)
MAX_ITEMS = 1000  # q items in one request
MAX_ALTERNATIVES = 3  # LibreTranslate's default alternatives_limit; more are cut to it
REQUEST_TIMEOUT_S = 60.0  # a whole request, queue included (a 100,000-character one took 11.6 s)
DOWNLOAD_TTL_S = 30 * 60
SUGGESTIONS_OFF = "Suggestions are disabled on this server."  # LibreTranslate's words, its 403
# Chinese as LibreTranslate lists and detects it today (its language.py aliases: zh → zh-Hans, zt → zh-Hant)
CHINESE = {"hans": ("zh-Hans", "Chinese"), "hant": ("zh-Hant", "Chinese (Traditional)")}
MAX_DOWNLOADS = 16
MAX_WARNINGS = 20  # items kept as they were named one by one in an answer's warnings; the rest are counted
_KEYED = {"/translate", "/detect", "/translate_file", "/qiao/stream"}
_STATUS = {
    200: "OK",
    204: "No Content",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    421: "Misdirected Request",
    499: "Client Closed Request",
    500: "Internal Server Error",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


@dataclass
class Response:
    status: int
    body: Iterable[bytes]
    headers: list[tuple[str, str]] = field(default_factory=list)
    chars: int = 0  # characters of text the request carried, for the log line


def _json(value: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    data = json.dumps(value, ensure_ascii=False).encode("utf-8")
    extra = [("Content-Type", "application/json; charset=utf-8"), ("Content-Length", str(len(data)))]
    return Response(status, [data], extra + list((headers or {}).items()))


def _error(message: str, status: int, headers: dict[str, str] | None = None) -> Response:
    return _json({"error": message}, status, headers)


class _Downloads:
    """Translated files waiting to be fetched: a few, for a while, in memory (never written to disk)."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, tuple[float, str, bytes]] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, name: str, data: bytes) -> str:
        token = secrets.token_urlsafe(18)  # the unguessable part of the URL: whoever has it may fetch the file
        with self._lock:
            self._expire()
            while len(self._items) >= MAX_DOWNLOADS:
                self._items.popitem(last=False)
            self._items[token] = (time.monotonic() + DOWNLOAD_TTL_S, name, data)
        return f"{token}.{name}"

    def get(self, path_name: str, *, take: bool = True) -> tuple[str, bytes] | None:
        """The file named by its URL's last part (decoded text), removed with `take` (served once, as the README
        says; a HEAD does not take it)."""
        token, _, name = path_name.partition(".")
        with self._lock:
            self._expire()
            item = self._items.get(token)
            if item is None or not secrets.compare_digest(item[1].encode(), name.encode()):
                return None
            if take:
                del self._items[token]
        return item[1], item[2]

    def _expire(self) -> None:
        now = time.monotonic()
        for token in [t for t, (until, _, _) in self._items.items() if until < now]:
            del self._items[token]


class ApiApp:
    """The WSGI callable. `access` says who may call; `service` does the translating."""

    def __init__(
        self,
        service: TranslationService,
        access: guard.Access,
        *,
        log_content: bool = False,
        max_chars: int = MAX_CHARS,
        timeout_s: float = REQUEST_TIMEOUT_S,
    ) -> None:
        self.service = service
        self.access = access
        self.log_content = log_content
        self.max_chars = max_chars
        self.timeout_s = timeout_s
        self._downloads = _Downloads()
        self._routes: dict[str, dict[str, Callable[[dict, bodies.Body], Response]]] = {
            "/translate": {"POST": self._translate},
            "/languages": {"GET": self._languages, "POST": self._languages},
            "/detect": {"POST": self._detect},
            "/frontend/settings": {"GET": self._settings},
            "/translate_file": {"POST": self._translate_file},
            "/suggest": {"POST": self._suggest},
            "/health": {"GET": self._lt_health},
            "/qiao/stream": {"POST": self._stream},
            "/qiao/health": {"GET": self._health},
        }

    # -- WSGI -------------------------------------------------------------------------------------------------------
    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        began = time.perf_counter()
        method = environ.get("REQUEST_METHOD", "GET").upper()
        path = environ.get("PATH_INFO", "") or "/"
        origin = environ.get("HTTP_ORIGIN")
        environ["qiao.deadline"] = time.monotonic() + self.timeout_s
        try:
            with watching(environ.get("waitress.client_disconnected")):
                response = self._respond(environ, method, path, origin)
        except TimedOut:
            response = _error(self._timed_out(), 504)
        except ApiError as exc:
            response = _error(str(exc), exc.status, exc.headers)
        except (InputError, DocumentError) as exc:
            response = _error(str(exc), 400)
        except QiaoError as exc:  # e.g. a model that fails to load: said, the server goes on
            response = _error(str(exc), 500)
        except Exception as exc:  # a bug: the client gets a reason-less 500; the log names the exception type
            log.error("%s %s: unexpected %s", method, _safe(path), type(exc).__name__)
            response = _error("internal error", 500)
        if origin is not None and guard.origin_allowed(self.access, origin):
            response.headers += [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
        start_response(f"{response.status} {_STATUS.get(response.status, '')}".rstrip(), response.headers)
        ms = (time.perf_counter() - began) * 1000
        log.info("%s %s %d %.0f ms%s", method, _safe(path), response.status, ms, self._content_note(response))
        return response.body

    def _content_note(self, response: Response) -> str:
        return f" ({response.chars} chars)" if response.chars else ""

    def _respond(self, environ: dict, method: str, path: str, origin: str | None) -> Response:
        guard.check_host(self.access, environ.get("HTTP_HOST"))
        guard.check_origin(self.access, origin)
        if path.startswith("/download_file/"):
            return self._download(method, _wsgi_text(path[len("/download_file/") :]))
        methods = self._routes.get(path.rstrip("/") or "/")
        if methods is None:
            return _error(f"no such endpoint: {_safe(path)}", 404)
        if method == "OPTIONS":  # a browser's preflight from an allowed origin (the refused ones got 403 above)
            allow = ", ".join([*methods, "OPTIONS"])
            headers = [
                ("Access-Control-Allow-Methods", allow),
                ("Access-Control-Allow-Headers", "Content-Type, Authorization"),
                ("Access-Control-Max-Age", "600"),
                ("Content-Length", "0"),
            ]
            return Response(204, [b""], headers)
        handler = methods.get(method)
        if handler is None:
            allow = ", ".join([*methods, "OPTIONS"])
            return _error(f"{method} is not allowed here; use {allow}", 405, {"Allow": allow})
        body = bodies.parse(environ, files=path == "/translate_file")
        if path in _KEYED:
            authorization = environ.get("HTTP_AUTHORIZATION")
            guard.check_key(self.access, body.fields.get("api_key"), _wsgi_text(authorization))
        if self.log_content:
            log.info("%s %s fields: %s", method, path, json.dumps(_loggable(body.fields), ensure_ascii=False))
        return handler(environ, body)

    # -- endpoints --------------------------------------------------------------------------------------------------
    def _translate(self, environ: dict, body: bodies.Body) -> Response:
        fields = body.fields
        q = fields.get("q")
        if q is None or q == "" or q == []:
            raise ApiError("Invalid request: missing q parameter")
        batch = isinstance(q, list)
        texts = q if batch else [q]
        if not all(isinstance(t, str) for t in texts):
            raise ApiError("Invalid request: q must be a string or a list of strings")
        if len(texts) > MAX_ITEMS:
            raise ApiError(f"Invalid request: request ({len(texts)}) exceeds batch limit ({MAX_ITEMS})")
        source, target = _required(fields, "source"), _required(fields, "target")
        fmt = fields.get("format") or "text"
        if fmt not in ("text", "html"):
            raise ApiError(f"{_short(fmt)} format is not supported")
        alternatives = _alternatives(fields.get("alternatives"))
        chars = self._check_chars(texts)
        out: dict[str, Any] = {}
        src, _ = parse_code(source, "source")
        if src == AUTO:  # each item's language, as LibreTranslate reports it; items translated by language
            found = [self.service.detect(_visible(t, fmt))[0] for t in texts]
            detected = [{"confidence": conf, "language": _lt_code(lang)} for lang, conf in found]
            langs = [lang for lang, _ in found]
            out["detectedLanguage"] = detected if batch else detected[0]
        else:
            langs = [source] * len(texts)
        with documents.noting():
            out_texts, alts, kept = self._by_language(environ, texts, langs, target, alternatives, fmt)
        for number, text in enumerate(out_texts):  # nothing came back for text with words: it is given back as it was
            if texts[number].strip() and not text.strip():
                out_texts[number] = texts[number]
                kept.append((number, None))
        out["translatedText"] = out_texts if batch else out_texts[0]
        if alternatives:
            out["alternatives"] = alts if batch else alts[0]
        if kept:  # Qiao's own field, as /translate_file's: LibreTranslate's clients read translatedText only
            out["warnings"] = _kept_warnings(kept, texts, batch)
        response = _json(out)
        response.chars = chars
        return response

    def _by_language(
        self, environ: dict, texts: list[str], langs: list[str], target: Any, alternatives: int, fmt: str
    ) -> tuple[list[str], list[list[str]], list[tuple[int, str | None]]]:
        """Each text translated from its language (the items of one language together), its alternatives, and the
        (item, text) of each sentence a text holds as it was (documents.kept_sentences) and each html paragraph or
        sentence kept as it was (engine.api.documents.noting, which the caller holds open): the notes of each call
        say which of its items, turned here into the request's."""
        results: list[str] = [""] * len(texts)
        alts: list[list[str]] = [[] for _ in texts]
        kept: list[tuple[int, str | None]] = []
        notes = documents.current_notes()
        nbest = getattr(self.service, "translate_nbest", None)
        for lang in dict.fromkeys(langs):
            idx = [i for i, code in enumerate(langs) if code == lang]
            items = [texts[i] for i in idx]
            if alternatives and fmt == "text" and nbest is not None:
                done = nbest(items, lang, target, alternatives, timeout=self._left(environ))
            else:  # html: none, as LibreTranslate ("not supported for html yet")
                before = len(notes)
                outs = self.service.translate(
                    items, lang, target, alternatives=alternatives, fmt=fmt, timeout=self._left(environ)
                )
                done = [(text, []) for text in outs]
                for note in notes[before:]:
                    if note.fragment is not None and 0 <= note.fragment < len(idx):
                        kept.append((idx[note.fragment], note.text))
                del notes[before:]
            for i, (text, others) in zip(idx, done, strict=True):
                results[i], alts[i] = text, others
                kept.extend((i, sentence) for sentence in documents.kept_sentences(text))
        return results, alts, kept

    def _languages(self, environ: dict, body: bodies.Body) -> Response:
        return _json(lt_languages(self.service.languages()))

    def _detect(self, environ: dict, body: bodies.Body) -> Response:
        q = body.fields.get("q")
        if q is None or q == "":
            raise ApiError("Invalid request: missing q parameter")
        if not isinstance(q, str):
            raise ApiError("Invalid request: q must be a string")
        chars = self._check_chars([q])
        found = self.service.detect(q)
        response = _json([{"confidence": conf, "language": _lt_code(lang)} for lang, conf in found])
        response.chars = chars
        return response

    def _settings(self, environ: dict, body: bodies.Body) -> Response:
        pairs = self.service.languages()
        first = pairs[0] if pairs else None
        language = (
            {
                "source": {"code": _lt_code(first.source), "name": first.source_name},
                "target": {"code": _lt_code(first.target), "name": first.target_name},
            }
            if first
            else {}
        )
        keyed = self.access.api_key is not None
        return _json(
            {
                "charLimit": self.max_chars,
                "frontendTimeout": 500,
                "apiKeys": keyed,
                "keyRequired": keyed,
                "suggestions": False,
                "filesTranslation": True,
                "supportedFilesFormat": list(registry.extensions()),
                "language": language,
            }
        )

    def _translate_file(self, environ: dict, body: bodies.Body) -> Response:
        upload = body.files.get("file")
        if upload is None:
            raise ApiError("Invalid request: missing file parameter")
        source, target = _required(body.fields, "source"), _required(body.fields, "target")
        name = PurePath(upload.filename.replace("\\", "/")).name or "document.txt"
        fmt = documents.format_for(name)
        extracted = documents.read(fmt, upload.data)
        units = list(extracted.units)
        sample = [u.source for u in units if u.translatable]
        self._check_chars(sample, limit=max(self.max_chars, 50 * self.max_chars))
        direction = resolve(self.service.languages(), sample, source, target, self.service.detect)
        if direction.pair is None:
            data = upload.data
            lang = direction.source
        else:
            src, lang = direction.source, direction.pair.target

            def step(texts: list[str]) -> list[str]:
                return self.service.translate(texts, src, target, timeout=self._left(environ))

            with documents.noting() as notes:
                data = documents.render(extracted, units, step, lang)
        stem, suffix = PurePath(name).stem, PurePath(name).suffix
        token_name = self._downloads.put(f"{stem}.{lang}{suffix}", data)
        scheme = environ.get("wsgi.url_scheme", "http")
        url = f"{scheme}://{environ['HTTP_HOST']}/download_file/{quote(token_name)}"
        answer: dict[str, object] = {"translatedFileUrl": url}
        kept = documents.warnings(extracted)
        if direction.pair is not None:
            kept += _kept_warnings([(None, note.text) for note in notes], [], False)
        if kept:
            answer["warnings"] = kept  # Qiao's own: LibreTranslate's clients read translatedFileUrl only
        response = _json(answer)
        response.chars = sum(len(s) for s in sample)
        return response

    def _download(self, method: str, name: str) -> Response:
        if method not in ("GET", "HEAD"):
            return _error(f"{method} is not allowed here; use GET", 405, {"Allow": "GET, HEAD"})
        found = self._downloads.get(name, take=method == "GET")
        if found is None:
            return _error("no such file (a translated file is served once, within 30 minutes)", 404)
        filename, data = found
        plain = "".join(ch if " " <= ch < "\x7f" and ch not in '"\\' else "_" for ch in filename)
        disposition = f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(filename)}"
        headers = [
            ("Content-Type", "application/octet-stream"),
            ("Content-Length", str(len(data))),
            ("Content-Disposition", disposition),
        ]
        return Response(200, [b""] if method == "HEAD" else [data], headers)

    def _stream(self, environ: dict, body: bodies.Body) -> Response:
        fields = body.fields
        q = fields.get("q")
        if not isinstance(q, str) or not q:
            raise ApiError("Invalid request: q must be one non-empty string")
        source, target = _required(fields, "source"), _required(fields, "target")
        chars = self._check_chars([q])
        deltas = self.service.stream(q, source, target, timeout=self._left(environ))  # refusals raise here, as JSON
        headers = [
            ("Content-Type", "text/event-stream; charset=utf-8"),
            ("Cache-Control", "no-cache"),
            ("X-Accel-Buffering", "no"),
        ]
        response = Response(200, _Events(deltas, q), headers)
        response.chars = chars
        return response

    def _suggest(self, environ: dict, body: bodies.Body) -> Response:
        return _error(SUGGESTIONS_OFF, 403)

    def _lt_health(self, environ: dict, body: bodies.Body) -> Response:
        return _json({"status": "ok"})

    def _health(self, environ: dict, body: bodies.Body) -> Response:
        pairs = [p.key for p in self.service.languages()]
        return _json({"status": "ok", "version": __version__, "pairs": pairs})

    # -- helpers ----------------------------------------------------------------------------------------------------
    def _left(self, environ: dict) -> float:
        """Seconds this request has left (TimedOut, answered 504, when none)."""
        left = environ.get("qiao.deadline", time.monotonic() + self.timeout_s) - time.monotonic()
        if left <= 0:
            raise TimedOut("out of time")
        return left

    def _timed_out(self) -> str:
        return (
            f"the request did not finish within {self.timeout_s:g} s, this server's limit for one request, and was "
            "stopped; send less text at a time (qiao serve --request-timeout SECONDS sets the limit)"
        )

    def _check_chars(self, texts: list[str], limit: int | None = None) -> int:
        """The request's characters (400 over the limit, or for a lone surrogate, which no model can read)."""
        limit = self.max_chars if limit is None else limit
        total = sum(len(t) for t in texts)
        if total > limit:
            raise ApiError(f"Invalid request: request ({total}) exceeds text limit ({limit})")
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                code = ord(text[exc.start])
                raise ApiError(f"Invalid request: the text holds a lone surrogate (\\u{code:04x}), not text") from None
        return total


class _Events:
    """The SSE body: each delta as it comes, then `done` (or `error`); closing it (a client gone) cancels. When the
    model's translation of `source` (text with words) is empty, `source` itself comes as the one delta, and `done`
    has `warnings`, as /translate answers. A sentence of it translated as empty comes back as it was
    (documents.stream_tail, the service's last delta): as a last delta when it ends the text, else in its place in
    `done`'s translatedText only (the deltas cannot go back); `done` names it in `warnings`."""

    def __init__(self, deltas: Iterator[str], source: str = "") -> None:
        self._deltas = deltas
        self._source = source

    def __iter__(self) -> Iterator[bytes]:
        parts: list[str] = []
        kept: list[tuple[int | None, str | None]] = []
        whole: str | None = None
        try:
            for delta in self._deltas:
                kept.extend((0, sentence) for sentence in documents.kept_sentences(delta))
                whole = getattr(delta, "whole", None) or whole
                if delta:
                    parts.append(delta)
                    yield _event(None, {"delta": delta})
            done: dict[str, object] = {}
            if self._source.strip() and not "".join(parts).strip():  # nothing came back: the text, as it was
                parts.append(self._source)
                yield _event(None, {"delta": self._source})
                kept = [(0, None)]
            if kept:
                done["warnings"] = _kept_warnings(kept, [self._source], False)
            yield _event("done", {"translatedText": whole or "".join(parts), **done})
        except ApiError as exc:
            yield _event("error", {"error": str(exc)})
        except QiaoError as exc:
            yield _event("error", {"error": str(exc)})
        except Exception as exc:
            log.error("stream: unexpected %s", type(exc).__name__)
            yield _event("error", {"error": "internal error"})

    def close(self) -> None:
        close = getattr(self._deltas, "close", None)
        if close is not None:
            close()


def _event(name: str | None, data: dict) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def lt_languages(pairs: list[PairInfo]) -> list[dict[str, Any]]:
    """/languages as LibreTranslate lists it: Chinese as "zh-Hans" (and "zh-Hant" where a model reads or writes
    Traditional Chinese: a zh→en model reads both scripts; an installed en→zh model writes it when it has the variant,
    the direction's own or another: PairInfo.writable)."""
    names: dict[str, str] = {}
    targets: dict[str, list[str]] = {}

    def codes(code: str, name: str, variants: tuple[str, ...], reading: bool) -> list[str]:
        if code != "zh":
            names.setdefault(code, name)
            return [code]
        keys = ["hans", "hant"] if reading else ["hans"] + [v for v in ("hant",) if v in variants]
        for key in keys:
            names.setdefault(*CHINESE[key])
        return [CHINESE[key][0] for key in keys]

    for p in pairs:
        sources = codes(p.source, p.source_name, (), True)
        wanted = codes(p.target, p.target_name, p.writable, False)
        for code in sources:
            listed = targets.setdefault(code, [])
            listed += [t for t in wanted if t not in listed]
        for code in wanted:
            targets.setdefault(code, [])
    return [{"code": c, "name": n, "targets": targets.get(c, [])} for c, n in names.items()]


def _lt_code(code: str) -> str:
    """A detected language as LibreTranslate says it ("zh" is "zh-Hans" there)."""
    return CHINESE["hans"][0] if code == "zh" else code


@overload
def _wsgi_text(value: str) -> str: ...
@overload
def _wsgi_text(value: None) -> None: ...
@overload
def _wsgi_text(value: str | None) -> str | None: ...
def _wsgi_text(value: str | None) -> str | None:
    """A WSGI header or path value as the text the client sent: WSGI hands their bytes decoded as latin-1, and
    clients send UTF-8 (a file name in Chinese, a key with non-ASCII characters)."""
    if value is None:
        return None
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


def _visible(text: str, fmt: str) -> str:
    """What a reader sees of a `q` item: for html, the text the reader translates (engine.documents.formats.html),
    not its tags, attributes and URLs, which are Latin letters and made Chinese pages read as English."""
    if fmt != "html":
        return text
    try:
        units = documents.read_html(text).units
    except DocumentError:
        return text  # the translation itself says what is wrong with it
    return "\n".join(unit.source for unit in units if unit.translatable)


def _kept_warnings(kept: Sequence[tuple[int | None, str | None]], texts: list[str], batch: bool) -> list[str]:
    """The answer's warnings for what was kept as it was because the model's translation of it was empty: (the q
    item, None for a document; the paragraph, None for the whole item), in order, MAX_WARNINGS named."""
    out = []
    for item, paragraph in sorted(kept, key=lambda k: -1 if k[0] is None else k[0])[:MAX_WARNINGS]:
        where = f"q[{item}]: " if batch and item is not None else ""
        if paragraph is None:
            excerpt = excerpt_of(texts[item] if item is not None else "")
            out.append(f"{where}the model's translation of “{excerpt}” was empty, so the text is returned as it was")
        else:
            excerpt = excerpt_of(paragraph)
            out.append(f"{where}the model's translation of “{excerpt}” was empty, so it was kept as it was")
    if len(kept) > MAX_WARNINGS:
        out.append(f"… and {len(kept) - MAX_WARNINGS} more texts were kept as they were")
    return out


def _required(fields: dict, name: str) -> str:
    value = fields.get(name)
    if value is None or value == "":
        raise ApiError(f"Invalid request: missing {name} parameter")
    if not isinstance(value, str):
        raise ApiError(f"Invalid request: {name} must be a language code such as en")
    return value


def _alternatives(value: Any) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise ApiError("Invalid request: alternatives parameter is not a number")
    if isinstance(value, str):
        if not value.strip().isdigit():
            raise ApiError("Invalid request: alternatives parameter is not a number")
        value = int(value)
    if not isinstance(value, int):
        raise ApiError("Invalid request: alternatives parameter is not a number")
    return max(0, min(MAX_ALTERNATIVES, value))


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _safe(path: str) -> str:
    """A path fit for the log: short, printable (a download path's token is cut off)."""
    if path.startswith("/download_file/"):
        return "/download_file/…"
    return "".join(ch if ch.isprintable() else "?" for ch in path[:80])


def _loggable(fields: dict) -> dict:
    return {k: ("***" if k == "api_key" else v) for k, v in fields.items()}
