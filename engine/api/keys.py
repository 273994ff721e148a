"""The API key file, read the same way by `qiao serve --api-key-file` and the app's "Local translation API".

It lives here, beside the guard that checks the key, rather than in the CLI: the window imports it too, and nothing
below the CLI may import the CLI. A file other users can read is still used but comes back with a warning, which
each caller shows where its user looks (the CLI on stderr, the window in its notice bar).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import NamedTuple

from engine.errors import InputError

MAX_KEY_FILE_BYTES = 4096


class KeyFile(NamedTuple):
    """A key file's key, and "" or why its permissions are too loose."""

    key: str
    warning: str = ""


def read_key(path: Path) -> KeyFile:
    """The API key a file holds (its first line, stripped), with a warning when other users can read the file.
    InputError for an empty, huge, non-UTF-8 or unreadable one."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(MAX_KEY_FILE_BYTES + 1)
            mode = os.fstat(stream.fileno()).st_mode
    except OSError as exc:
        raise InputError(f"cannot read the API key file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_KEY_FILE_BYTES:
        raise InputError(f"{path} is not an API key file (over {MAX_KEY_FILE_BYTES} bytes)")
    try:
        lines = data.decode("utf-8").strip().splitlines()
    except UnicodeDecodeError:
        raise InputError(f"the API key file {path} is not UTF-8 text") from None
    key = lines[0].strip() if lines else ""
    if not key:
        raise InputError(f"the API key file {path} is empty")
    warning = ""
    if os.name == "posix" and mode & (stat.S_IRGRP | stat.S_IROTH):
        warning = f"{path} can be read by other users (chmod 600 {path})"
    return KeyFile(key, warning)
