"""Glossaries as CSV or TSV files: what spreadsheets export and what a person types in a text editor.

One entry per line: `source,target,case_sensitive,whole_word` (a header line with those names is optional and may
put them in another order; a missing column takes its default: match any case, whole words). An empty target means
do not translate. Fields follow the spreadsheet convention (Python's csv "excel" / "excel-tab" dialects): a field
with the delimiter, a quote or a line break is quoted, quotes doubled. Blank lines and lines starting with `#` are
skipped; `# protect: no` switches the automatic placeholder/link/code protection off (`Glossary.protect`).
UTF-8, with or without a BOM. A line that cannot be read is an InputError naming its line number.

Spreadsheet safety (CSV formula injection): in the files Qiao writes (`format_glossary`) a term starting with `=`,
`+`, `-`, `@`, a tab or a carriage return is written with a `'` in front (engine.csv_cells), so a spreadsheet shows
it as text instead of running it, and such a file begins with the comment line `EXPORT_MARK`. Reading a file that
carries the mark takes that one quote off again, so an exported glossary imports as the same terms; in a file
without the mark (typed by a person, made by another program) a leading quote is part of the term.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import stat
from pathlib import Path

from engine.atomic_write import write_user_file
from engine.csv_cells import neutralise, restore
from engine.errors import InputError
from engine.glossary import Glossary, GlossaryEntry

MAX_BYTES = 8 * 1024 * 1024  # a glossary is typed or exported by a person: 8 MB is ~100,000 long entries
MAX_ENTRIES = 100_000
FORMATS = ("csv", "tsv")
COLUMNS = ("source", "target", "case_sensitive", "whole_word")
_ALIASES = {
    "source": "source",
    "source term": "source",
    "term": "source",
    "target": "target",
    "target term": "target",
    "translation": "target",
    "case_sensitive": "case_sensitive",
    "case sensitive": "case_sensitive",
    "case": "case_sensitive",
    "match case": "case_sensitive",
    "whole_word": "whole_word",
    "whole word": "whole_word",
    "whole words": "whole_word",
}
_TRUE = {"1", "true", "yes", "y", "x", "on"}
_FALSE = {"0", "false", "no", "n", "off"}
_PROTECT = re.compile(r"#\s*protect\s*[:=]\s*(\S+)\s*$", re.IGNORECASE)
# The first line of every file Qiao writes: its cells that begin with a formula character carry an added quote.
EXPORT_MARK = "# Qiao glossary: a ' before a leading = + - @ was added for spreadsheets and is removed on import"


def read_glossary(source: str | os.PathLike[str], format: str | None = None) -> Glossary:
    """A glossary from a file (a path) or from its text (a str with a line break, or that names no file).

    `format` "csv" or "tsv"; None: from the file's extension (.csv, .tsv/.tab), else sniffed from the first entry
    line (a tab → TSV, else CSV)."""
    name = "glossary"
    if isinstance(source, os.PathLike) or ("\n" not in source and "\r" not in source and _names_a_file(source)):
        path = Path(source)
        name = path.name
        data = _read_file(path)
        format = format or _format_of(path)
        text = _decode(data, name)
    else:
        text = str(source)
        if len(text) > MAX_BYTES:
            raise InputError(_too_big(name, len(text.encode("utf-8"))))
        text = text.removeprefix("\ufeff")
    if format is not None and format not in FORMATS:
        raise InputError(f"unknown glossary format {format!r}: use csv or tsv")
    return _parse(text, format or _sniff(text), name)


def _names_a_file(text: str) -> bool:
    """Whether a one-line `text` is a path rather than a glossary's text: it names something that exists and is
    not a folder (a device or a FIFO too, so that it is refused as a file instead of read as a one-term glossary)."""
    try:
        return os.path.exists(text) and not os.path.isdir(text)
    except (OSError, ValueError):  # a name too long, a NUL: text, not a path
        return False


def _read_file(path: Path) -> bytes:
    """The file's bytes, at most MAX_BYTES: only a regular file (a FIFO would block, /dev/zero never ends), opened
    without waiting and checked again once open, read up to one byte past the limit (it may grow meanwhile)."""
    name = path.name
    try:
        with open(path, "rb", opener=_no_wait) as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise InputError(f"{path} is not a regular file (a device, a pipe or a socket); give a CSV or TSV file")
            if info.st_size > MAX_BYTES:
                raise InputError(_too_big(name, info.st_size))
            data = stream.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError(f"cannot read the glossary {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_BYTES:
        raise InputError(_too_big(name, len(data)))
    return data


def _no_wait(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NONBLOCK", 0))


def _too_big(name: str, size: int) -> str:
    return (
        f"{name} is {size / 1e6:.1f} MB; a glossary may be at most {MAX_BYTES // (1024 * 1024)} MB "
        f"({MAX_ENTRIES:,} entries)"
    )


def _format_of(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in (".tsv", ".tab"):
        return "tsv"
    return None


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"{name}, line {line}: not UTF-8 text (save the glossary as UTF-8)") from exc


def _sniff(text: str) -> str:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            return "tsv" if "\t" in line else "csv"
    return "tsv"


class _Lines:
    """The text's lines for csv.reader, remembering which ones the current record took (for comments, numbers)."""

    def __init__(self, text: str) -> None:
        self._lines = io.StringIO(text, newline="")
        self.taken: list[str] = []
        self.number = 0  # lines read so far

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        line = self._lines.readline()
        if not line:
            raise StopIteration
        self.number += 1
        self.taken.append(line)
        return line


def _parse(text: str, format: str, name: str) -> Glossary:
    lines = _Lines(text)
    reader = csv.reader(lines, dialect="excel-tab" if format == "tsv" else "excel", strict=True)
    columns: tuple[str, ...] | None = None
    entries: dict[tuple[str, bool], GlossaryEntry] = {}
    protect = True
    marked = False  # Qiao wrote this file: its formula cells carry an added quote (engine.csv_cells)
    while True:
        lines.taken = []
        start = lines.number + 1
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            raise InputError(f"{name}, line {start}: {exc}") from exc
        first = lines.taken[0].strip() if lines.taken else ""
        if first.startswith("#"):
            if first.rstrip(",;\t ") == EXPORT_MARK:  # a spreadsheet that saved it again may pad the line
                marked = True
                continue
            m = _PROTECT.match(first)
            if m:
                protect = _flag(m.group(1), True, name, start, "protect")
            continue
        if not any(field.strip() for field in row):
            continue
        if columns is None:
            columns = _header(row, name, start)
            if columns is not None:
                continue
            columns = COLUMNS
        if marked:
            row = [restore(field.strip()) for field in row]
        entry = _entry(row, columns, name, start)
        key = (entry.source if entry.case_sensitive else entry.source.casefold(), entry.case_sensitive)
        entries.pop(key, None)  # a later line for the same term wins
        entries[key] = entry
        if len(entries) > MAX_ENTRIES:
            raise InputError(f"{name} has more than {MAX_ENTRIES:,} entries; split it or remove some")
    return Glossary(entries=tuple(entries.values()), protect=protect)


def _header(row: list[str], name: str, line: int) -> tuple[str, ...] | None:
    """The columns a header line names, or None when the line is an entry."""
    names = [field.strip().lower() for field in row]
    known = [_ALIASES.get(n) for n in names[:2]]
    if None in known or "source" not in [_ALIASES.get(n) for n in names]:
        return None  # an entry whose term happens to be "source" ("source,来源") is not a header
    columns = []
    for field, key in zip(row, names, strict=True):
        column = _ALIASES.get(key)
        if column is None:
            raise InputError(
                f"{name}, line {line}: unknown column {field.strip()!r}; the columns are {', '.join(COLUMNS)}"
            )
        if column in columns:
            raise InputError(f"{name}, line {line}: the column {column} is named twice")
        columns.append(column)
    return tuple(columns)


def _entry(row: list[str], columns: tuple[str, ...], name: str, line: int) -> GlossaryEntry:
    if len(row) > len(columns):
        extra = " ".join(f"{f!r}" for f in row[len(columns) :] if f.strip())
        if extra:
            raise InputError(
                f"{name}, line {line} has {len(row)} fields; a glossary line has at most {len(columns)} "
                f"({', '.join(columns)})"
            )
    values = dict(zip(columns, (f.strip() for f in row), strict=False))
    source = values.get("source", "")
    if not source:
        raise InputError(f"{name}, line {line} has no source term")
    target = values.get("target", "") or None
    return GlossaryEntry(
        source=source,
        target=target,
        case_sensitive=_flag(values.get("case_sensitive", ""), False, name, line, "case_sensitive"),
        whole_word=_flag(values.get("whole_word", ""), True, name, line, "whole_word"),
    )


def _flag(value: str, default: bool, name: str, line: int, column: str) -> bool:
    word = value.strip().lower()
    if not word:
        return default
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise InputError(f"{name}, line {line}: {column} must be yes or no, not {value.strip()!r}")


def format_glossary(glossary: Glossary, format: str = "tsv") -> str:
    """The file text `write_glossary` writes: a header, then one line per entry (yes/no flags). A term a
    spreadsheet would run as a formula gets a `'` in front, and the file then starts with `EXPORT_MARK` so that
    `read_glossary` takes exactly those quotes off again."""
    if format not in FORMATS:
        raise InputError(f"unknown glossary format {format!r}: use csv or tsv")
    out = io.StringIO()
    dialect = "excel-tab" if format == "tsv" else "excel"
    writer = csv.writer(out, dialect=dialect, lineterminator="\n")
    # a term starting with "#" is quoted, or reading it back would take its line for a comment
    quoted = csv.writer(out, dialect=dialect, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(COLUMNS)
    marked = False
    for e in glossary.entries:
        terms = [e.source, e.target or ""]
        safe = [neutralise(t) for t in terms]
        marked = marked or safe != terms
        row = [*safe, "yes" if e.case_sensitive else "no", "yes" if e.whole_word else "no"]
        (quoted if e.source.lstrip().startswith("#") else writer).writerow(row)
    head = (EXPORT_MARK + "\n" if marked else "") + ("" if glossary.protect else "# protect: no\n")
    return head + out.getvalue()


def write_glossary(glossary: Glossary, path: str | os.PathLike[str], format: str | None = None) -> None:
    """Write `glossary` to `path` whole or not at all (temporary file beside it, fsynced, renamed over it).
    `format` None: from the extension (.csv → CSV, anything else TSV)."""
    path = Path(path)
    fmt = format or _format_of(path) or "tsv"
    data = format_glossary(glossary, fmt).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    write_user_file(path, data)
    if os.name == "posix":
        with contextlib.suppress(OSError):
            fd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
