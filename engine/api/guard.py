"""The checks every request passes before any work: the Host header, the Origin header, and the API key.

Why each exists:
- Host: a web page on evil.example can make its own name resolve to 127.0.0.1 (DNS rebinding) and then talk to
  the API as "same origin". Its requests still carry `Host: evil.example:PORT`, so only `localhost`, an IP literal
  (no rebinding is possible through one) or the name the user bound to, each with the server's port, are served;
  anything else is 421.
- Origin: any web page can POST to 127.0.0.1 (a form or fetch needs no permission), and browsers name the page in
  `Origin`. The rule: no Origin (command-line tools, editors, e-readers, scripts) is allowed; browser-extension
  origins (chrome-extension://, moz-extension://, safari-web-extension://) are allowed, since an extension the
  user installed is a client they chose; a web page's origin (and "null", sent by sandboxed frames and files) is
  403 unless the user allowed that exact origin (`--allow-origin https://example.org`).
- API key: optional (`--api-key-file`); compared in constant time; from the `api_key` field as LibreTranslate's
  clients send it, or `Authorization: Bearer KEY`.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass

from engine.api.errors import ApiError

DEFAULT_HOST = "127.0.0.1"
# Not LibreTranslate's 5000: macOS (12+) runs its AirPlay receiver on port 5000, so `localhost:5000` there answers
# 403 from AirPlay, and a LibreTranslate server a user also runs would collide. Tools that talk to LibreTranslate
# take a server URL anyway; Qiao's is http://127.0.0.1:5454.
DEFAULT_PORT = 5454
EXTENSION_SCHEMES = ("chrome-extension://", "moz-extension://", "safari-web-extension://", "ms-browser-extension://")


@dataclass(frozen=True)
class Access:
    """Who may talk to the server: its address, the key (None: no key), the web origins the user allowed."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    api_key: str | None = None
    allow_origins: tuple[str, ...] = ()


def _host_and_port(header: str) -> tuple[str, int | None] | None:
    """("localhost", 5454) from "localhost:5454", ("::1", 5454) from "[::1]:5454"; None when malformed."""
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        if end < 0:
            return None
        name, rest = header[1:end], header[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    else:
        name, _, port_text = header.partition(":")
    if port_text and not port_text.isdigit():
        return None
    return name, int(port_text) if port_text else None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def check_host(access: Access, header: str | None) -> None:
    """421 unless `Host` names this server: localhost, an IP literal or the bound name, with the bound port."""
    if not header:
        raise ApiError("the request has no Host header", status=400)
    parsed = _host_and_port(header)
    if parsed is None:
        raise ApiError("the Host header is malformed", status=400)
    name, port = parsed
    if port is None:
        port = 80
    named = name in ("localhost", access.host.lower()) or _is_ip(name)
    if not named or port != access.port:
        raise ApiError(
            f"this server answers as localhost:{access.port} or 127.0.0.1:{access.port}, not {header!r} "
            "(a page using another name for this address is refused: DNS rebinding)",
            status=421,
        )


def normal_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def origin_allowed(access: Access, origin: str | None) -> bool:
    """Whether a request with this Origin header may be served (see the module docstring for the rule)."""
    if origin is None:
        return True
    value = normal_origin(origin)
    if value.startswith(EXTENSION_SCHEMES):
        return True
    return value in {normal_origin(o) for o in access.allow_origins}


def check_origin(access: Access, origin: str | None) -> None:
    if not origin_allowed(access, origin):
        shown = origin if origin is not None and len(origin) <= 200 else "(too long to show)"
        raise ApiError(
            f"requests from web pages are refused (Origin: {shown}); start the server with --allow-origin "
            "ORIGIN to allow one",
            status=403,
        )


def check_key(access: Access, given: object, authorization: str | None) -> None:
    """403 unless the server has no key or the request carries it (compared in constant time)."""
    if access.api_key is None:
        return
    if (not isinstance(given, str) or not given) and authorization and authorization[:7].lower() == "bearer ":
        given = authorization[7:].strip()
    if not isinstance(given, str) or not given:
        raise ApiError("Please provide an API key (api_key): this server requires one", status=403)
    if not hmac.compare_digest(given.encode("utf-8", "replace"), access.api_key.encode("utf-8")):
        raise ApiError("Invalid API key", status=403)


def is_loopback(host: str) -> bool:
    """Whether binding to `host` keeps the server on this machine ("localhost" or a loopback IP)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
