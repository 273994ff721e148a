"""The last finished translation, kept on disk beside the autosaved source, so a restart shows it again.

One JSON file (`translation.json` in the state folder), replaced atomically when a translation finishes or the
user edits it: the source's SHA-256 and length (the source itself is already in `source.txt`), the translated text
as shown, the settings that produced it and when, and the sentences the user made their own (by their place in the
source, with the English only where the model read it differently, e.g. wrapped lines joined), so their edits
survive a restart and a re-translation after it; where each sentence is in both texts, so the restored
translation is aligned and its edits are followed as before; and what the guards flagged in each sentence (kind and
reason, glossary terms not placed), so a sentence cut at the length limit or a repetition keeps its margin mark and
tooltip after a restart (a file written before flags were kept loads without them). At start the window shows it
as current only if the restored source and the settings still match; otherwise as out of date. A cancelled request
is not saved: its partial text would come back looking complete.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from engine.atomic_write import remove_stale_temps, write_state_file

FORMAT = 1


def source_digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class SentencePlaces:
    """Where each sentence is in both texts: flat [start0, end0, start1, end1, …] lists (a 70 000-sentence
    translation writes and reads them in milliseconds), the English of the sentences the model read
    differently from the source text (index → text), and the guards' findings of the flagged sentences
    (index → ((kind, detail), …) and index → glossary terms not placed)."""

    source: tuple[int, ...] = ()
    target: tuple[int, ...] = ()
    read_as: dict[int, str] = field(default_factory=dict)
    flags: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    unmet: dict[int, tuple[str, ...]] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.source) // 2

    def rows(self) -> list[tuple[int, int, int, int, str | None]]:
        """(source start, source end, target start, target end, English read or None) per sentence."""
        s, t, read_as = self.source, self.target, self.read_as
        return [(s[2 * i], s[2 * i + 1], t[2 * i], t[2 * i + 1], read_as.get(i)) for i in range(len(self))]


@dataclass(frozen=True)
class SavedTranslation:
    """What was on screen when the last translation finished."""

    source_sha256: str
    source_chars: int
    target: str
    options: dict[str, object] = field(default_factory=dict)  # precision, script, beams, … as the settings had them
    finished_at: float = 0.0  # seconds since the epoch
    # (start, end, source as the model read it or None when it is source[start:end], the user's text)
    edits: tuple[tuple[int, int, str | None, str], ...] = ()
    sentences: SentencePlaces | None = None  # where each sentence is (None: not kept)

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

    def save(
        self,
        source: str,
        target: str,
        options: Mapping[str, object],
        *,
        now: float | None = None,
        edits: Sequence[tuple[int, int, str | None, str]] = (),
        sentences: SentencePlaces | None = None,
    ) -> None:
        """Keep a finished translation, edits included (raises OSError, as any write may)."""
        record = {
            "format": FORMAT,
            "source_sha256": source_digest(source),
            "source_chars": len(source),
            "target": target,
            "options": dict(options),
            "finished_at": time.time() if now is None else now,
        }
        if edits:
            record["edits"] = list(edits)  # tuples are written as JSON arrays
        if sentences is not None and len(sentences):
            places: dict[str, object] = {
                "source": list(sentences.source),
                "target": list(sentences.target),
                "read_as": {str(i): text for i, text in sentences.read_as.items()},
            }
            if sentences.flags:
                places["flags"] = {str(i): [list(pair) for pair in found] for i, found in sentences.flags.items()}
            if sentences.unmet:
                places["unmet"] = {str(i): list(terms) for i, terms in sentences.unmet.items()}
            record["sentences"] = places
        write_state_file(self.path, json.dumps(record, ensure_ascii=False).encode("utf-8", "replace"))

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
                edits=_edits(record.get("edits", [])),
                sentences=_sentences(record.get("sentences")),
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


def _edits(value: object) -> tuple[tuple[int, int, str | None, str], ...]:
    """The saved edits; a damaged list is dropped as a whole (the text itself still comes back)."""
    if not isinstance(value, list):
        return ()
    out = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 4):
            return ()
        start, end, key, text = item
        if not (
            isinstance(start, int) and isinstance(end, int) and 0 <= start <= end and isinstance(text, str)
        ) or not (key is None or isinstance(key, str)):
            return ()
        out.append((start, end, key, text))
    return tuple(out)


def _sentences(value: object) -> SentencePlaces | None:
    """The saved sentence places; damaged ones are dropped as a whole (the text comes back without them)."""
    if not isinstance(value, dict):
        return None
    source, target, read_as = value.get("source"), value.get("target"), value.get("read_as", {})
    if not (isinstance(source, list) and isinstance(target, list) and isinstance(read_as, dict)):
        return None
    if len(source) != len(target) or len(source) % 2:
        return None
    if not all(type(x) is int and x >= 0 for x in source) or not all(type(x) is int and x >= 0 for x in target):
        return None
    places: dict[int, str] = {}
    for key, text in read_as.items():
        if not (isinstance(key, str) and key.isdigit() and isinstance(text, str)):
            return None
        places[int(key)] = text
    count = len(source) // 2
    return SentencePlaces(
        tuple(source),
        tuple(target),
        places,
        _by_sentence(value.get("flags"), count, _flag_pairs),
        _by_sentence(value.get("unmet"), count, _terms),
    )


def _by_sentence(value: object, count: int, read: Callable[[object], tuple | None]) -> dict:
    """index → what `read` makes of each entry; a damaged map is dropped as a whole (the sentences come back
    without it). Absent (a file written before flags were kept): nothing."""
    if not isinstance(value, dict):
        return {}
    out = {}
    for key, item in value.items():
        found = read(item)
        if not (isinstance(key, str) and key.isdigit() and int(key) < count) or found is None:
            return {}
        out[int(key)] = found
    return out


def _flag_pairs(item: object) -> tuple[tuple[str, str], ...] | None:
    if not isinstance(item, list):
        return None
    pairs = []
    for pair in item:
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            return None
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _terms(item: object) -> tuple[str, ...] | None:
    if not (isinstance(item, list) and all(isinstance(x, str) for x in item)):
        return None
    return tuple(item)
