"""Replacing a file so that a crash, a kill or a full disk leaves either the old or the new content, never a mix.

The temporary file has a predictable name per target and per process (`.source.txt.<pid>.tmp`), so a kill
mid-write leaves at most one orphan per process, and the next start can recognise and delete it.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

_PROCESS_START = time.time()


def temp_path(target: Path) -> Path:
    """Where `write_atomic` stages `target`'s new content in this process."""
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def write_atomic(target: Path, data: bytes) -> None:
    """Write `data` to a temp file beside `target`, fsync it, then rename it over `target` (and fsync the folder)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(target)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0), 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_folder(target.parent)


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX; Windows cannot open a folder for this and needs no help)."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_stale_temps(target: Path, *legacy_globs: str) -> list[Path]:
    """Delete temp files a killed writer of `target` left behind; returns what was deleted.

    Ours are `.<name>.<pid>.tmp` (plus `legacy_globs`, names older versions used). One is stale if it was last
    written before this process started: a writer that is alive (another window) keeps its file's time fresh.
    """
    found = set(target.parent.glob(f".{target.name}.*.tmp"))
    for pattern in legacy_globs:
        found.update(target.parent.glob(pattern))
    removed = []
    for path in sorted(found):
        try:
            if path.stat().st_mtime >= _PROCESS_START:
                continue
            path.unlink()
            removed.append(path)
        except OSError:
            continue  # gone already, or not ours to delete: nothing to clean
    return removed
