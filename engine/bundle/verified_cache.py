"""Remember which bundle files already passed their sha256 check, so each app start does not re-hash 80–300 MB.

A file is trusted again only while its size, modification time and inode are unchanged; anything else (a copied,
replaced or touched file) is hashed again. `qiao model verify` never uses this cache.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from engine.paths import verified_files_file


class VerifiedFiles:
    """A small JSON map: absolute path → [size, mtime_ns, inode, sha256]."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or verified_files_file()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            self._entries: dict[str, list] = data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            self._entries = {}
        self._dirty = False

    @staticmethod
    def _key(path: Path) -> tuple[str, list]:
        st = path.stat()
        return str(path.resolve()), [st.st_size, st.st_mtime_ns, st.st_ino]

    def is_verified(self, path: Path, sha256: str) -> bool:
        key, stamp = self._key(path)
        return self._entries.get(key) == [*stamp, sha256]

    def remember(self, path: Path, sha256: str) -> None:
        key, stamp = self._key(path)
        self._entries[key] = [*stamp, sha256]
        self._dirty = True

    def forget(self, path: Path) -> None:
        """Drop a file's entry (it failed a check: the next start must hash it again)."""
        try:
            key = str(path.resolve())
        except OSError:
            return
        if self._entries.pop(key, None) is not None:
            self._dirty = True

    def save(self) -> None:
        """Best effort: a read-only home or full disk only costs a re-hash next time."""
        if not self._dirty:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self._entries), encoding="utf-8")
            os.replace(tmp, self.path)
            self._dirty = False
        except OSError:
            pass
