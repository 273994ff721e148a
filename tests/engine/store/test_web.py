"""engine.store.web: the URL policy, and failures worded for a person (offline is said so)."""

from __future__ import annotations

import http.client
import io
import socket
import urllib.error

import pytest

from engine.store.web import OFFLINE, failure, url_problem

URL = "https://example.org/a.zip"


@pytest.mark.parametrize(
    ("url", "allow_file", "ok"),
    [
        (URL, False, True),
        ("https:///a.zip", False, False),
        ("http://example.org/a.zip", False, False),
        ("http://127.0.0.1:9/a.zip", False, True),
        ("http://localhost/a.zip", False, True),
        ("http://127.0.0.1.example.org/a.zip", False, False),
        ("file:///tmp/a.zip", False, False),
        ("file:///tmp/a.zip", True, True),
        ("ftp://example.org/a.zip", True, False),
        ("http://[::1", False, False),
    ],
)
def test_url_policy(url, allow_file, ok):
    assert (url_problem(url, allow_file=allow_file) is None) == ok


def test_failures_are_worded_for_a_person():
    err = urllib.error.HTTPError(URL, 503, "Service Unavailable", {}, io.BytesIO())
    assert failure(err, URL) == f"the server answered 503 Service Unavailable for {URL}"
    err.close()
    refused = urllib.error.URLError(ConnectionRefusedError(111, "Connection refused"))
    assert failure(refused, URL) == f"{OFFLINE} ({URL}: Connection refused)"
    unknown_host = urllib.error.URLError(socket.gaierror(-2, "Name or service not known"))
    assert failure(unknown_host, URL).startswith(OFFLINE)
    assert "did not answer in time" in failure(urllib.error.URLError(TimeoutError()), URL)
    assert "broke off the connection" in failure(http.client.RemoteDisconnected("closed"), URL)
