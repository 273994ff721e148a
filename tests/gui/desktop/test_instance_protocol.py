"""The single-instance protocol on its own: what a valid request is, what is refused and why, and no Qt needed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gui.desktop.instance_protocol import MAX_MESSAGE, MAX_TEXT, InstanceRequest, decode

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (b"\xff\xfe garbage", "not UTF-8 JSON"),
        (b"{not json", "not UTF-8 JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'"show"', "not a JSON object"),
        (b'{"action": "rm -rf"}', "unknown action"),
        (b'{"text": "hi"}', "unknown action"),
        (b'{"action": "popup", "text": 5}', "not a string"),
        (b'{"action": "translate"}', "without text"),
        (b'{"action": "translate", "text": "   "}', "without text"),
        (b'{"action": "popup", "text": "' + b"x" * (MAX_TEXT + 1) + b'"}', "text too long"),
        (b'{"action": "show", "text": "' + b"x" * MAX_MESSAGE + b'"}', "too long"),
    ],
)
def test_malformed_messages_are_refused_with_a_reason(line, why):
    with pytest.raises(ValueError, match=why):
        decode(line)


def test_unknown_fields_are_ignored():
    assert decode(b'{"action": "show", "text": null, "extra": [1]}') == InstanceRequest("show")


@pytest.mark.parametrize(
    "request_", [InstanceRequest("show"), InstanceRequest("popup"), InstanceRequest("translate", "中文 and ✓\nline")]
)
def test_a_request_is_one_line_that_decodes_to_itself(request_):
    encoded = request_.encode()
    assert encoded.endswith(b"\n") and encoded.count(b"\n") == 1
    assert decode(encoded.rstrip(b"\n")) == request_


def test_the_protocol_loads_no_qt():
    """A later start (qiao popup, qiao translate --app) can speak it without loading Qt."""
    code = "import sys, gui.desktop.instance_protocol; sys.exit(any(m.startswith('PySide6') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False).returncode == 0
