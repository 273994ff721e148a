"""The only network access Qiao has: fetching a model catalogue and a bundle, when the user asks for one.

urllib.request (the standard library) rather than requests: requests and its urllib3/idna/charset-normalizer/
certifi chain would add ~1 MB and four packages to the frozen app for two GET requests; urllib does Range, redirects,
timeouts, proxies from the environment and the system's certificate store, and adds 0 bytes.

URL policy (for the catalogue and every bundle it names, redirects included): https anywhere; plain http only to
this machine (127.0.0.1, ::1, localhost: tests and local mirrors), because a catalogue fetched over http from
elsewhere could be rewritten on the way, sha256 values and all; file: only where the catalogue itself is local.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from engine import __version__

LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")
USER_AGENT = f"Qiao/{__version__} (model download)"
OFFLINE = "you are offline or the server cannot be reached"


class PolicyError(urllib.error.URLError):
    """A URL (or a redirect to one) that the policy refuses."""


def url_problem(url: str, *, allow_file: bool) -> str | None:
    """Why Qiao will not fetch `url`, or None."""
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
    except ValueError as exc:
        return f"{url!r} is not a valid URL ({exc})"
    scheme = parts.scheme.lower()
    if scheme == "https":
        return None if host else f"{url!r} names no server"
    if scheme == "http":
        if host in LOOPBACK_HOSTS:
            return None
        return f"{url} is plain http: Qiao downloads over https (http only from this machine, 127.0.0.1/localhost)"
    if scheme == "file":
        return None if allow_file else f"{url}: a file: URL is allowed only in a catalogue that is itself a local file"
    return f"{url!r}: only https (or a local file) is supported"


class _PolicyRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects (GitHub release assets are one) only to URLs the policy allows: no https → http."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        problem = url_problem(newurl, allow_file=False)
        if problem is not None:
            raise PolicyError(f"redirected to a refused address: {problem}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def open_url(url: str, *, timeout: float, headers: dict[str, str] | None = None) -> Any:
    """urlopen with the policy's redirects and Qiao's User-Agent; raises urllib's errors (see `failure`)."""
    opener = urllib.request.build_opener(_PolicyRedirects)
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT, **(headers or {})})
    return opener.open(request, timeout=timeout)


def is_offline(message: str) -> bool:
    """Whether a `failure` message means the server could not be reached at all."""
    return message.startswith(OFFLINE)


def failure(exc: BaseException, url: str) -> str:
    """What went wrong with fetching `url`, for a person: the server's answer, a refusal, or "offline"."""
    if isinstance(exc, urllib.error.HTTPError):
        return f"the server answered {exc.code} {exc.reason} for {url}"
    if isinstance(exc, PolicyError):
        return str(exc.reason)
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, ssl.SSLCertVerificationError):
        return f"the server's certificate could not be verified ({reason.verify_message}) for {url}"
    if isinstance(reason, TimeoutError | socket.timeout):
        return f"the server did not answer in time ({url})"
    if isinstance(reason, FileNotFoundError):
        return f"{url}: no such file"
    if isinstance(reason, http.client.HTTPException | ConnectionResetError | ConnectionAbortedError):
        return f"the server broke off the connection ({url}: {reason or type(reason).__name__})"
    detail = getattr(reason, "strerror", None) or reason
    return f"{OFFLINE} ({url}: {detail})"
