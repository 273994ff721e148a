"""Writing the history out: JSON Lines (everything, sentences included, exactly), CSV or TSV (one row per entry,
each text cell that a spreadsheet would run as a formula prefixed with `'`: engine.csv_cells).

The file is written beside its target under a temporary name, flushed to disk and renamed over it, so an
interrupted export never leaves half a file where a previous export was.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path

from engine.csv_cells import neutralise
from engine.errors import InputError
from engine.history.records import HistoryEntry

FORMATS = ("jsonl", "csv", "tsv")
COLUMNS = ("id", "created", "pair", "model", "precision", "variant", "beams", "source", "output", "edited")


def format_for(path: Path, format: str | None) -> str:
    """The format asked for, or the one the file name's suffix says (jsonl when it says none of them)."""
    if format is None:
        suffix = path.suffix.lower().lstrip(".")
        format = {"json": "jsonl", "ndjson": "jsonl"}.get(suffix, suffix)
        return format if format in FORMATS else "jsonl"
    if format not in FORMATS:
        raise InputError(f"unknown export format {format!r}: use {', '.join(FORMATS)}")
    return format


def entry_record(entry: HistoryEntry) -> dict:
    """One entry as plain JSON values (what jsonl writes and `qiao history --json` prints)."""
    record = {f.name: getattr(entry, f.name) for f in fields(entry)}  # asdict's deep copies took most of the time
    record["sentences"] = [{f.name: getattr(s, f.name) for f in fields(s)} for s in entry.sentences]
    return record


def _edited(entry: HistoryEntry) -> int:
    return sum(1 for s in entry.sentences if s.edited is not None or s.chosen is not None)


def render(entries: Iterable[HistoryEntry], format: str) -> str:
    """The whole export's text."""
    out = io.StringIO()
    if format == "jsonl":
        for entry in entries:
            out.write(json.dumps(entry_record(entry), ensure_ascii=False) + "\n")
        return out.getvalue()
    # RFC 4180's CRLF rows: with it the writer also quotes a cell holding a lone CR (with "\n" it did not, and
    # such a cell broke its row in two for every reader)
    writer = csv.writer(out, delimiter="," if format == "csv" else "\t", lineterminator="\r\n")
    writer.writerow(COLUMNS)
    for e in entries:
        row = (e.id, e.created, e.pair, e.model, e.precision, e.variant or "", e.beams or "", e.source, e.output)
        writer.writerow([neutralise(cell) for cell in (*row, _edited(e))])
    return out.getvalue()
