"""Writing a user's file whole or not at all: a translated document, an exported glossary or history.

A temporary file in the target's folder, fsynced, renamed over the target, the folder fsynced: a crash, a kill or a
full disk leaves the old file or the new one, never a mix. The result gets the mode an ordinary new file gets under
the user's umask (mkstemp alone would leave it 0600). The window's own state files use gui.atomic_file instead
(predictable temporary names, cleaned at start; private mode).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all: a temporary file in its folder, fsynced, then renamed over it."""
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        if os.name != "nt":  # mkstemp makes it 0600: a result is an ordinary file, as the user's umask says
            os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    _sync_folder(path.parent)


def _umask() -> int:
    """This process' umask, read without changing it where Linux tells it (os.umask would set it for a moment for
    every thread); elsewhere set and restored at once."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable where the system allows it (POSIX); best effort."""
    if os.name == "nt":
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
