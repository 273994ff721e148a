"""Request bodies read within a limit and parsed into fields: JSON, form-encoded or multipart (file uploads).

Clients of LibreTranslate send all three: libretranslatepy and browser extensions form-encoded, most scripts JSON,
file uploads multipart. Every limit is checked before the body is parsed (Content-Length first, then the bytes
actually read, for a chunked body), and every malformed body is a 4xx with a reason, never a traceback.
"""

from __future__ import annotations

import email.parser
import email.policy
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from engine.api.errors import ApiError
from engine.bundle import strict_json

MAX_JSON_BYTES = 1 * 2**20  # JSON and form bodies: far more text than one request may hold
MAX_FILE_BYTES = 20 * 2**20  # a multipart upload (/translate_file)
MAX_FIELDS = 1000
_CHUNK = 64 * 1024


@dataclass
class Upload:
    """A file part of a multipart body."""

    filename: str
    data: bytes


@dataclass
class Body:
    """A request's fields (strings, or lists of strings for a repeated form field; any JSON value) and files."""

    fields: dict[str, Any] = field(default_factory=dict)
    files: dict[str, Upload] = field(default_factory=dict)


def too_large(limit: int) -> ApiError:
    return ApiError(f"the request body is over {limit // 2**20} MB, Qiao's limit for it", status=413)


def read_bytes(environ: dict, limit: int) -> bytes:
    """The body, at most `limit` bytes (413 beyond it, told by Content-Length before anything is read)."""
    length_text = environ.get("CONTENT_LENGTH") or ""
    if length_text:
        try:
            length = int(length_text)
        except ValueError:
            raise ApiError("Content-Length is not a number") from None
        if length < 0:
            raise ApiError("Content-Length is negative")
        if length > limit:
            raise too_large(limit)
    stream = environ.get("wsgi.input")
    if stream is None:
        return b""
    parts: list[bytes] = []
    total = 0
    while True:  # waitress hands a chunked body without Content-Length, already bounded by its own limit
        chunk = stream.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            break
        parts.append(chunk)
        total += len(chunk)
        if total > limit:
            raise too_large(limit)
    return b"".join(parts)


def parse(environ: dict, *, files: bool = False) -> Body:
    """The query string's fields, overridden by the body's (as LibreTranslate's Flask `request.values` merges)."""
    body = Body(fields=_form(environ.get("QUERY_STRING", "").encode("latin-1"), "the query string"))
    ctype = (environ.get("CONTENT_TYPE") or "").strip()
    media = ctype.split(";")[0].strip().lower()
    if media == "multipart/form-data":
        if not files:
            raise ApiError("this endpoint takes JSON or form fields, not a multipart upload", status=415)
        data = read_bytes(environ, MAX_FILE_BYTES)
        parsed = _multipart(ctype, data)
        body.fields.update(parsed.fields)
        body.files.update(parsed.files)
        return body
    data = read_bytes(environ, MAX_JSON_BYTES)
    sniffed = media in ("", "text/plain") and data.lstrip()[:1] in (b"{", b"[")  # fetch() without a JSON type
    if media == "application/json" or sniffed:
        body.fields.update(_json(data))
    elif media in ("application/x-www-form-urlencoded", "text/plain", ""):
        body.fields.update(_form(data, "the form body"))
    else:
        raise ApiError(f"Qiao reads JSON or form-encoded bodies, not {media}", status=415)
    return body


def _text(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(f"{what} is not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def _json(data: bytes) -> dict[str, Any]:
    if not data.strip():
        return {}
    text = _text(data, "the JSON body")
    try:
        value = strict_json.loads(text)
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise ApiError(f"Invalid JSON: {reason}") from None
    if not isinstance(value, dict):
        raise ApiError("Invalid JSON format: the body must be a JSON object of fields")
    return value


def _form(data: bytes, what: str) -> dict[str, Any]:
    if not data:
        return {}
    text = _text(data, what)
    try:
        pairs = parse_qsl(text, keep_blank_values=True, errors="strict", max_num_fields=MAX_FIELDS)
    except UnicodeDecodeError:
        raise ApiError(f"{what} holds percent-escapes that are not UTF-8") from None
    except ValueError as exc:  # more than MAX_FIELDS fields
        raise ApiError(f"{what} is malformed ({exc})") from None
    return _merge(pairs)


def _merge(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """A repeated field (q=a&q=b) becomes a list, as LibreTranslate's batch form."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            previous = out[key]
            out[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            out[key] = value
    return out


def _multipart(ctype: str, data: bytes) -> Body:
    """Parsed by the standard library's e-mail parser (MIME multipart is its format), never by hand."""
    if "boundary=" not in ctype.lower():
        raise ApiError("the multipart body has no boundary")
    try:
        header = f"Content-Type: {ctype}\r\nMIME-Version: 1.0\r\n\r\n".encode("latin-1")
    except UnicodeEncodeError:
        raise ApiError("the Content-Type header is not plain ASCII") from None
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(header + data)
    if not message.is_multipart() or message.defects:
        raise ApiError("the multipart body is malformed")
    body = Body()
    pairs: list[tuple[str, str]] = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if not isinstance(name, str):
            continue
        payload = part.get_payload(decode=True)
        if not isinstance(payload, bytes):
            payload = b""
        filename = part.get_filename()
        if filename is not None:
            body.files[name] = Upload(filename, payload)
        else:
            pairs.append((name, _text(payload, f"the field {name!r}")))
        if len(pairs) + len(body.files) > MAX_FIELDS:
            raise ApiError("the multipart body has too many parts")
    body.fields = _merge(pairs)
    return body
