"""What a later start of Qiao says to the running one, and the limits a message must keep; no sockets, no Qt.

One JSON object per connection, one line, at most `MAX_MESSAGE` bytes:
`{"action": "show" | "popup" | "translate", "text": str | null}`; the server answers `ok` or `error: …` and closes.
Anything else (not JSON, not an object, nested deeper than `MAX_DEPTH`, an unknown action, a wrong type, too long,
never finished in `READ_TIMEOUT_MS`) is refused by `decode` with a reason that never quotes the content (a deeply
nested message made json.loads raise RecursionError in the read slot); the servers (gui.desktop.single_instance,
gui.desktop.instance_pipe) log it and answer `ERROR_ANSWER`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

ACTIONS = ("show", "popup", "translate")
MAX_MESSAGE = 512 * 1024  # bytes of one request line: the popup's 20,000-character limit, JSON-escaped, fits
MAX_TEXT = 100_000  # characters of a request's text
MAX_CONNECTIONS = 16  # open at once; more are closed unread
READ_TIMEOUT_MS = 2000  # a client that does not finish its line in time is cut off
CLIENT_TIMEOUT_MS = 3000
ERROR_ANSWER = b"error: malformed request\n"
MAX_DEPTH = 4  # nesting of JSON arrays/objects in a message (a valid one has 1): json.loads recurses per level
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(rb"[\[\]{}]")


class InstanceError(Exception):
    """The single-instance socket cannot be set up safely (the app then runs without it)."""


@dataclass(frozen=True)
class InstanceRequest:
    """What a second start asks of the running Qiao."""

    action: str  # "show" | "popup" | "translate"
    text: str | None = None  # popup: the text (None: read the selection); translate: the text for the window

    def encode(self) -> bytes:
        return json.dumps({"action": self.action, "text": self.text}, ensure_ascii=False).encode("utf-8") + b"\n"


def decode(line: bytes) -> InstanceRequest:
    """Parse one request line; ValueError (with a reason, never the content) when it is not a valid request."""
    if len(line) > MAX_MESSAGE:
        raise ValueError(f"too long ({len(line)} bytes)")
    if _depth(line) > MAX_DEPTH:  # checked before parsing: 100,000 '[' made json.loads raise RecursionError
        raise ValueError(f"nested more than {MAX_DEPTH} levels deep")
    try:
        raw = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"not UTF-8 JSON ({type(exc).__name__})") from None
    if not isinstance(raw, dict):
        raise ValueError(f"not a JSON object ({type(raw).__name__})")
    action, text = raw.get("action"), raw.get("text")
    if action not in ACTIONS:
        raise ValueError("unknown action")
    if text is not None and not isinstance(text, str):
        raise ValueError(f"text is a {type(text).__name__}, not a string")
    if text is not None and len(text) > MAX_TEXT:
        raise ValueError(f"text too long ({len(text)} characters)")
    if action == "translate" and not (text and text.strip()):
        raise ValueError("translate without text")
    return InstanceRequest(action, text)


def _depth(line: bytes) -> int:
    """The deepest nesting of arrays and objects in `line`, brackets inside JSON strings not counted."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub(b'""', line)):
        depth += 1 if bracket in (b"[", b"{") else -1
        deepest = max(deepest, depth)
    return deepest
