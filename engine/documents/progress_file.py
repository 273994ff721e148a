"""The progress file a document job keeps beside its result, so a cancelled or crashed run continues where it was.

JSON Lines, UTF-8: a header naming what the work was (the fingerprint: the input's sha256, the format, the
translation options, the target language, the model, Qiao's version), then one line per finished unit (its index
and the new text of each of its runs, and `kept` where the model gave nothing for some of its text, which was kept
in the source language: "unit" for the whole unit, left as it was, "sentences" for some of its sentences). Lines
are appended and fsynced once per step, so after a kill -9 at most the last line is torn: reading stops at the
first line that is not a complete JSON record, and the file is cut back to the last good line before anything is
appended. Any other doubt (another input, other settings, a damaged header)
means starting over, never mixing two translations into one document.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from engine.documents.model import Unit

SUFFIX = ".qiao-partial"
VERSION = 1  # of this file's layout


def path_for(output: Path) -> Path:
    """The progress file of the result `output`: hidden, beside it (`.report.zh.docx.qiao-partial`)."""
    return output.with_name(f".{output.name}{SUFFIX}")


KEPT_KINDS = ("unit", "sentences")  # what a record's `kept` may say (see the module docstring)


def load(
    path: Path, fingerprint: dict, units: Sequence[Unit], kept: dict[int, str] | None = None
) -> dict[int, list[str]] | None:
    """The finished units recorded in `path` for this exact work, by index; None when the file is missing or is
    not for `fingerprint` (then the caller starts over). A torn or damaged tail is dropped and cut off the file.
    `kept`, when given, receives each finished unit's `kept` kind (KEPT_KINDS) by index."""
    if not path.is_file():
        return None
    with open(path, "rb") as stream:
        records = _records(stream)
        header = next(records, None)
        if header is None or header[0].get("qiao_partial") != VERSION or header[0].get("fingerprint") != fingerprint:
            return None
        good_end = header[1]
        done: dict[int, list[str]] = {}
        for record, end in records:
            entry = _entry(record, units)
            if entry is None:
                break
            done[entry[0]] = entry[1]
            if kept is not None and record.get("kept") in KEPT_KINDS:
                kept[entry[0]] = record["kept"]
            good_end = end
    if good_end < path.stat().st_size:
        with open(path, "r+b") as stream:
            stream.truncate(good_end)
    return done


def _records(stream) -> Iterator[tuple[dict, int]]:
    """(record, offset just after its line) for each complete JSON-object line, up to the first that is not one."""
    offset = 0
    for line in stream:
        offset += len(line)
        if not line.endswith(b"\n"):
            return  # torn: the write of this line never finished
        try:
            record = json.loads(line)
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(record, dict):
            return
        yield record, offset


def _entry(record: dict, units: Sequence[Unit]) -> tuple[int, list[str]] | None:
    """(index, run texts) when `record` is a finished unit that fits this document; None otherwise."""
    index, runs = record.get("i"), record.get("runs")
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(units):
        return None
    unit = units[index]
    if not isinstance(runs, list) or len(runs) != len(unit.runs) or not all(isinstance(r, str) for r in runs):
        return None
    if any(run.fixed and text != run.text for run, text in zip(unit.runs, runs, strict=True)):
        return None
    return index, runs


class Writer:
    """Appends finished units; each `append` is durable (flushed and fsynced) before it returns."""

    def __init__(self, path: Path, fingerprint: dict, *, fresh: bool) -> None:
        """`fresh`: start a new file with a header (the first append creates it); else append to the one there."""
        self.path = path
        self._header = {"qiao_partial": VERSION, "fingerprint": fingerprint} if fresh else None

    def append(self, finished: Sequence[tuple[int, Sequence[str]]], kept: Mapping[int, str] | None = None) -> None:
        """`kept`: the `kept` kind of the units in `finished` that have one (see the module docstring)."""
        if not finished:
            return
        kept = kept or {}
        lines = [] if self._header is None else [_line(self._header)]
        for index, runs in finished:
            record: dict[str, object] = {"i": index, "runs": list(runs)}
            if index in kept:
                record["kept"] = kept[index]
            lines.append(_line(record))
        mode = "wb" if self._header is not None else "ab"
        with open(self.path, mode) as stream:
            stream.write("".join(lines).encode("utf-8"))
            stream.flush()
            os.fsync(stream.fileno())
        self._header = None

    def remove(self) -> None:
        """Delete the file (the result is written: nothing is left to continue)."""
        remove(self.path)


def remove(path: Path) -> None:
    """Delete `path` if it is there."""
    path.unlink(missing_ok=True)


def _line(record: dict) -> str:
    # ensure_ascii: a line is pure ASCII, so no character of the text can ever read as a line break.
    return json.dumps(record, ensure_ascii=True, separators=(",", ":")) + "\n"
