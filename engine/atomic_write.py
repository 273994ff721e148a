"""Replacing a file whole or not at all: a crash, a kill or a full disk leaves the old file or the new one, never a mix.

Both writers stage the new content in a temporary file beside the target, fsync it, rename it over the target and
fsync the folder. They differ in policy, by whose file it is:

- `write_user_file`: a file the user asked for and keeps (a translated document, an exported glossary or history).
  The temporary name is unique (mkstemp), so writers never share one; the result gets the mode an ordinary new file
  gets under the user's umask (mkstemp alone would leave it 0600); the folder must exist (the user chose it).
- `write_state_file`: Qiao's own state (the autosave, the last translation, the glossary, the autostart entry).
  The temporary name is predictable per target and per process (`.source.txt.<pid>.tmp`, `state_temp_path`), so a
  kill mid-write leaves at most one orphan per process and the next start deletes it (`remove_stale_temps`); the
  file is private (0600) and its folder is created when missing.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path

_PROCESS_START = time.time()


def write_user_file(path: Path, data: bytes) -> None:
    """Write a user's file whole or not at all, readable as the user's umask says: a uniquely named temporary file
    in its (existing) folder, fsynced, then renamed over it; nothing of the temporary file stays on failure."""
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


def state_temp_path(target: Path) -> Path:
    """Where `write_state_file` stages `target`'s new content in this process."""
    return target.with_name(f".{target.name}.{os.getpid()}.tmp")


def write_state_file(target: Path, data: bytes) -> None:
    """Write one of Qiao's own files whole or not at all, private to the user (0600), its folder created if missing:
    staged in `state_temp_path(target)`, fsynced, renamed over `target`; an orphan a kill leaves behind is found by
    its name at the next start (`remove_stale_temps`)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = state_temp_path(target)
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
    _sync_folder(target.parent)


def remove_stale_temps(target: Path, *legacy_globs: str) -> list[Path]:
    """Delete temp files a killed `write_state_file` of `target` left behind; returns what was deleted.

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
    """Make the rename itself durable where the system allows it (POSIX; Windows cannot open a folder for this and
    needs no help); best effort."""
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
