"""The last finished translation, kept on disk beside the autosaved source, so a restart shows it again.

One JSON file (`translation.json` in the state folder), replaced atomically when a translation finishes: the
source's SHA-256 and length (the source itself is already in `source.txt`), the translated text, the settings that
produced it and when. At start the window shows it as current only if the restored source and the settings still
match; otherwise as out of date. A cancelled request is not saved: its partial text would come back looking
complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from gui.atomic_file import remove_stale_temps, write_atomic

FORMAT = 1


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class SavedTranslation:
    """What was on screen when the last translation finished."""

    source_sha256: str
    source_chars: int
    target: str
    options: dict[str, object] = field(default_factory=dict)  # precision, script, beams, … as the settings had them
    finished_at: float = 0.0  # seconds since the epoch

    def matches_source(self, source: str) -> bool:
        return len(source) == self.source_chars and source_digest(source) == self.source_sha256

    def matches(self, source: str, options: Mapping[str, object]) -> bool:
        """The translation of exactly this text with exactly these settings."""
        return dict(options) == self.options and self.matches_source(source)


class LastTranslation:
    """Reads and atomically replaces one `translation.json`."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.cleaned = remove_stale_temps(self.path)

    def save(self, source: str, target: str, options: Mapping[str, object], *, now: float | None = None) -> None:
        """Keep a finished translation (raises OSError, as any write may)."""
        record = {
            "format": FORMAT,
            "source_sha256": source_digest(source),
            "source_chars": len(source),
            "target": target,
            "options": dict(options),
            "finished_at": time.time() if now is None else now,
        }
        write_atomic(self.path, json.dumps(record, ensure_ascii=False).encode("utf-8", "replace"))

    def load(self) -> SavedTranslation | None:
        """The saved translation, or None if there is none or it is unreadable (then the pane starts empty)."""
        try:
            record = json.loads(self.path.read_bytes().decode("utf-8"))
            if not isinstance(record, dict) or record.get("format") != FORMAT:
                return None
            saved = SavedTranslation(
                source_sha256=record["source_sha256"],
                source_chars=record["source_chars"],
                target=record["target"],
                options=record["options"],
                finished_at=record["finished_at"],
            )
        except (OSError, ValueError, KeyError, TypeError, RecursionError):
            return None
        kinds = (
            (saved.source_sha256, str),
            (saved.source_chars, int),
            (saved.target, str),
            (saved.options, dict),
            (saved.finished_at, (int, float)),
        )
        if any(not isinstance(value, kind) for value, kind in kinds):
            return None
        return saved

    def clear(self) -> None:
        with contextlib.suppress(OSError):
            self.path.unlink()
