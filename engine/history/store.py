"""The history database: every finished translation, the user's edits, and the translation memory built from them.

One SQLite file (stdlib sqlite3), one connection per thread that uses the store (the window's thread reads, a
background thread writes, the engine's thread asks the memory): in WAL mode none of them waits for another's
reads, and writers queue on SQLite's own lock. Settings, and why:
- WAL: readers (`qiao history` while the window writes) never block the writer or each other.
- synchronous=NORMAL: in WAL mode a commit is then durable against the process dying (kill -9, a crash) — the WAL
  write has reached the OS when commit returns — and only a power cut or OS crash can lose the last commits, never
  corrupt the file. FULL would fsync on every commit (milliseconds each, on the window's thread) to protect a
  history of translations that can be redone against power cuts: not worth it.
- busy_timeout 5 s: a second process writing at the same moment waits its turn instead of failing.
A file that is not a readable database is moved aside (`history.sqlite3.damaged-<time>`) and a fresh one created
(HistoryDamaged says so); a file from a newer Qiao is left untouched (HistoryTooNew). Both are QiaoErrors.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from engine.atomic_write import write_user_file
from engine.history import export as export_mod
from engine.history import schema, search
from engine.history.errors import HistoryDamaged, HistoryError, HistoryTooNew
from engine.history.records import HistoryEntry, SentenceRecord, source_key

log = logging.getLogger(__name__)

DEFAULT_MAX_ENTRIES = 10_000
BUSY_TIMEOUT_S = 5.0
_HEADER = b"SQLite format 3\x00"
_ENTRY_COLUMNS = "id, created, source, output, pair, model, precision, variant, beams"


def now_iso() -> str:
    """The current time as the history writes it: ISO 8601 UTC to the second ("2026-12-01T17:40:00Z")."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class PairMemory:
    """The translation memory of one language pair, backed by the store: what `TranslationOptions.memory` asks.

    `lookup` may be called from any thread (the engine's worker); it never raises — a closed or busy store
    answers None, so a translation goes on without the memory rather than failing."""

    def __init__(self, store: HistoryStore, pair: str) -> None:
        self.store = store
        self.pair = pair

    def lookup(self, source: str) -> str | None:
        try:
            return self.store.recall(self.pair, source)
        except HistoryError as exc:
            log.warning("translation memory not asked: %s", exc)
            return None

    def made_with(self, source: str) -> tuple[str, str | None]:
        """(pair, target variant) the remembered text of `source` was written in (variant None: not known)."""
        try:
            return self.pair, self.store.recall_variant(self.pair, source)
        except HistoryError as exc:
            log.warning("translation memory not asked: %s", exc)
            return self.pair, None

    def __repr__(self) -> str:
        return f"PairMemory({self.pair!r})"


class HistoryStore:
    """See the module docstring. Every method may raise HistoryError (a QiaoError); search never raises on what
    the user typed."""

    def __init__(
        self,
        path: Path,
        *,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        busy_timeout: float = BUSY_TIMEOUT_S,
    ) -> None:
        self.path = Path(path)
        self.max_entries = max(1, int(max_entries))
        self._busy_timeout = busy_timeout
        self._lock = threading.Lock()  # guards the registry of connections, not their use
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._closed = True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        problem = _unreadable(self.path)
        db = None
        if problem is None:
            try:
                db = self._connect()
                version = schema.user_version(db)
                if version > schema.VERSION:
                    db.close()
                    raise HistoryTooNew(self.path, version, schema.VERSION)
                problem = _check(db)
                if problem is None:
                    schema.migrate(db)
                    self.mode = schema.ensure_search(db)
            except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed", …
                problem = str(exc)
        if problem is not None:
            if db is not None:
                db.close()
            moved = self._set_aside()
            db = self._connect()
            schema.migrate(db)
            self.mode = schema.ensure_search(db)
            self._adopt(db)
            raise HistoryDamaged(self.path, moved, problem)
        assert db is not None  # no problem: it opened
        self._adopt(db)

    def _adopt(self, db: sqlite3.Connection) -> None:
        """`db` (migrated, checked) becomes this thread's connection; the store is open."""
        self._local.db = db
        self._connections.append(db)
        self._closed = False

    # ---- opening --------------------------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None, check_same_thread=False)
        db.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout * 1000)}")
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            log.warning("history database not in WAL mode (%s): readers may wait for writers", mode)
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("PRAGMA foreign_keys = ON")
        return db

    def _set_aside(self) -> Path | None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        target = self.path.with_name(f"{self.path.name}.damaged-{stamp}")
        n = 1
        while target.exists():
            n += 1
            target = self.path.with_name(f"{self.path.name}.damaged-{stamp}-{n}")
        try:
            os.replace(self.path, target)
        except OSError as exc:
            log.error("could not move the damaged history %s aside: %s", self.path, exc)
            try:
                self.path.unlink()
            except OSError:
                return None
            return None
        for suffix in ("-wal", "-shm"):  # they belong to the damaged file, never to the fresh one
            side = self.path.with_name(self.path.name + suffix)
            if side.exists():
                with contextlib.suppress(OSError):
                    os.replace(side, target.with_name(target.name + suffix))
        log.warning("damaged history database moved to %s", target)
        return target

    def close(self) -> None:
        """Close every thread's connection; later calls raise HistoryError (a memory lookup answers None)."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
        for db in connections:
            db.close()

    @property
    def closed(self) -> bool:
        return self._closed

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection (each thread has its own: in WAL mode, the window's reads, the engine's memory
        lookups and a background write never wait for each other; writers queue on SQLite's lock)."""
        db = getattr(self._local, "db", None)
        with self._lock:
            if self._closed:
                raise HistoryError("the history database is closed")
            if db is not None and db in self._connections:
                return db
        try:
            db = self._connect()
        except sqlite3.Error as exc:
            raise HistoryError(f"the history database {self.path}: {exc}") from exc
        with self._lock:
            if self._closed:
                db.close()
                raise HistoryError("the history database is closed")
            self._connections.append(db)
        self._local.db = db
        return db

    def _run(self, work):
        """`work(db)` on this thread's connection, SQLite's errors as HistoryError."""
        db = self._conn()
        try:
            return work(db)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise HistoryError(
                    f"the history database {self.path} is busy (another Qiao is writing to it); try again"
                ) from exc
            raise HistoryError(f"the history database {self.path}: {exc}") from exc
        except sqlite3.ProgrammingError as exc:  # closed under a thread's feet
            raise HistoryError(f"the history database is closed ({exc})") from exc
        except sqlite3.DatabaseError as exc:
            raise HistoryError(f"the history database {self.path} is damaged ({exc}); restart Qiao") from exc

    # ---- entries --------------------------------------------------------------------------------------------------

    def add(self, entry: HistoryEntry) -> int:
        """Store a finished translation; returns its id. It replaces the entries of the same text in the same
        direction (`source_key`: a re-translation after a settings change, a re-paste with other spacing or final
        punctuation), so the newest version is on top and the history holds one entry per text. The oldest
        entries beyond max_entries go."""

        def work(db: sqlite3.Connection) -> int:
            key = source_key(entry.pair, entry.source)
            with schema.transaction(db):
                db.execute("DELETE FROM entries WHERE source_key = ?", (key,))
                cur = db.execute(
                    "INSERT INTO entries (created, source, output, pair, model, precision, variant, beams, "
                    "source_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        entry.created or now_iso(),
                        entry.source,
                        entry.output,
                        entry.pair,
                        entry.model,
                        entry.precision,
                        entry.variant,
                        entry.beams,
                        key,
                    ),
                )
                assert cur.lastrowid is not None  # an INSERT's row
                entry_id = cur.lastrowid
                db.executemany(
                    "INSERT INTO sentences (entry_id, idx, source, output, edited, chosen) VALUES (?, ?, ?, ?, ?, ?)",
                    [(entry_id, i, s.source, s.output, s.edited, s.chosen) for i, s in enumerate(entry.sentences)],
                )
                self._prune(db)
            return entry_id

        return self._run(work)

    def _prune(self, db: sqlite3.Connection) -> None:
        # COUNT(*) reads the small entries_created index, and the oldest are found from the start of the table:
        # "all but the newest N" (ORDER BY id DESC OFFSET N) would read every row, texts and all, on each add.
        over = int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]) - self.max_entries
        if over > 0:
            db.execute("DELETE FROM entries WHERE id IN (SELECT id FROM entries ORDER BY id LIMIT ?)", (over,))

    def set_max_entries(self, max_entries: int) -> None:
        """A new size limit, applied now (the oldest entries beyond it go)."""
        self.max_entries = max(1, int(max_entries))

        def work(db: sqlite3.Connection) -> None:
            with schema.transaction(db):
                self._prune(db)

        self._run(work)

    def get(self, entry_id: int) -> HistoryEntry | None:
        def work(db: sqlite3.Connection) -> HistoryEntry | None:
            row = db.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries WHERE id = ?", (int(entry_id),)).fetchone()
            return self._entries(db, [row])[0] if row else None

        return self._run(work)

    def recent(self, limit: int = 50, offset: int = 0) -> list[HistoryEntry]:
        """Newest first."""

        def work(db: sqlite3.Connection) -> list[HistoryEntry]:
            rows = db.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM entries ORDER BY id DESC LIMIT ? OFFSET ?", (int(limit), int(offset))
            ).fetchall()
            return self._entries(db, rows)

        return self._run(work)

    def count(self) -> int:
        return self._run(lambda db: int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]))

    def search(self, query: str, limit: int = 50) -> list[HistoryEntry]:
        """Entries whose source or output hold every word of `query` (engine.history.search), newest first;
        an empty query gives the most recent ones."""
        where, params = search.condition(query, self.mode)
        if not where:
            return self.recent(limit)

        def run(db: sqlite3.Connection, where: str, params: list[str]) -> list[HistoryEntry]:
            rows = db.execute(
                f"SELECT {_ENTRY_COLUMNS} FROM entries e WHERE {where} ORDER BY e.id DESC LIMIT ?",
                (*params, int(limit)),
            ).fetchall()
            return self._entries(db, rows)

        def work(db: sqlite3.Connection) -> list[HistoryEntry]:
            try:
                return run(db, where, params)
            except sqlite3.OperationalError as exc:  # the index refused the query: LIKE cannot
                if "locked" in str(exc) or "busy" in str(exc):
                    raise
                log.warning("history search %r fell back to LIKE: %s", query, exc)
                return run(db, *search.like_condition(query))

        return self._run(work)

    def _entries(self, db: sqlite3.Connection, rows: Sequence[tuple]) -> list[HistoryEntry]:
        ids = [r[0] for r in rows]
        sentences: dict[int, list[SentenceRecord]] = {i: [] for i in ids}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for entry_id, source, output, edited, chosen in db.execute(
                f"SELECT entry_id, source, output, edited, chosen FROM sentences WHERE entry_id IN ({marks}) "
                "ORDER BY entry_id, idx",
                chunk,
            ):
                sentences[entry_id].append(SentenceRecord(source, output, edited, chosen))
        return [
            HistoryEntry(
                source=source,
                output=output,
                pair=pair,
                model=model,
                precision=precision,
                variant=variant,
                beams=beams,
                sentences=tuple(sentences[entry_id]),
                created=created,
                id=entry_id,
            )
            for entry_id, created, source, output, pair, model, precision, variant, beams in rows
        ]

    def delete(self, ids: Iterable[int]) -> int:
        """Remove these entries (their sentences with them); returns how many existed."""
        wanted = [int(i) for i in ids]

        def work(db: sqlite3.Connection) -> int:
            with schema.transaction(db):
                return sum(db.execute("DELETE FROM entries WHERE id = ?", (i,)).rowcount for i in wanted)

        return self._run(work)

    def clear(self) -> int:
        """Remove every entry (the translation memory stays: it is the user's own work); returns how many."""

        def work(db: sqlite3.Connection) -> int:
            with schema.transaction(db):
                return db.execute("DELETE FROM entries").rowcount

        return self._run(work)

    def export(self, path: Path, format: str = "jsonl") -> int:
        """Write every entry, oldest first, to `path` (jsonl, csv or tsv), atomically; returns how many."""
        format = export_mod.format_for(Path(path), format)

        def work(db: sqlite3.Connection) -> list[HistoryEntry]:
            rows = db.execute(f"SELECT {_ENTRY_COLUMNS} FROM entries ORDER BY id").fetchall()
            return self._entries(db, rows)

        entries = self._run(work)
        write_user_file(Path(path), export_mod.render(entries, format).encode("utf-8"))
        return len(entries)

    # ---- edits and the translation memory ------------------------------------------------------------------------

    def set_sentence_edit(self, entry_id: int, index: int, edited: str | None, chosen: str | None) -> None:
        """Sentence `index` of entry `entry_id` now shows the user's edit (or the alternative they chose); the
        entry's output follows, and the translation memory remembers it for that source sentence (both None:
        back to the model's output, and forgotten)."""

        def work(db: sqlite3.Connection) -> None:
            with schema.transaction(db):
                entry = db.execute(
                    "SELECT pair, output, variant FROM entries WHERE id = ?", (int(entry_id),)
                ).fetchone()
                if entry is None:
                    raise HistoryError(f"no history entry {entry_id}")
                rows = db.execute(
                    "SELECT idx, source, output, edited, chosen FROM sentences WHERE entry_id = ? ORDER BY idx",
                    (int(entry_id),),
                ).fetchall()
                if not 0 <= index < len(rows):
                    raise HistoryError(f"history entry {entry_id} has no sentence {index}")
                records = [SentenceRecord(r[1], r[2], r[3], r[4]) for r in rows]
                old = records[index]
                new = SentenceRecord(old.source, old.output, edited, chosen)
                db.execute(
                    "UPDATE sentences SET edited = ?, chosen = ? WHERE entry_id = ? AND idx = ?",
                    (edited, chosen, int(entry_id), index),
                )
                output = _replace_shown(entry[1], records, index, new.shown)
                if output != entry[1]:
                    db.execute("UPDATE entries SET output = ? WHERE id = ?", (output, int(entry_id)))
                if edited is None and chosen is None:
                    db.execute("DELETE FROM memory WHERE pair = ? AND source = ?", (entry[0], old.source))
                else:
                    _remember(db, entry[0], old.source, new.shown, entry[2])

        self._run(work)

    def remember(self, pair: str, source_sentence: str, target: str, variant: str | None = None) -> None:
        """From now on, `source_sentence` (as the model reads it) translates as `target` for `pair`; `variant` is
        the target variant `target` is written in (None: not known)."""

        def work(db: sqlite3.Connection) -> None:
            with schema.transaction(db):
                _remember(db, pair, source_sentence, target, variant)

        self._run(work)

    def forget(self, pair: str, source_sentence: str) -> bool:
        """The model translates `source_sentence` again; returns whether the memory had it."""

        def work(db: sqlite3.Connection) -> bool:
            with schema.transaction(db):
                cur = db.execute("DELETE FROM memory WHERE pair = ? AND source = ?", (pair, source_sentence))
                return cur.rowcount > 0

        return self._run(work)

    def recall(self, pair: str, source_sentence: str) -> str | None:
        """The user's translation of `source_sentence` for `pair`, or None."""

        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute(
                "SELECT target FROM memory WHERE pair = ? AND source = ?", (pair, source_sentence)
            ).fetchone()
            return row[0] if row else None

        return self._run(work)

    def recall_variant(self, pair: str, source_sentence: str) -> str | None:
        """The target variant the remembered translation of `source_sentence` was written in; None if not known."""

        def work(db: sqlite3.Connection) -> str | None:
            row = db.execute(
                "SELECT variant FROM memory WHERE pair = ? AND source = ?", (pair, source_sentence)
            ).fetchone()
            return row[0] if row else None

        return self._run(work)

    def memory_size(self, pair: str | None = None) -> int:
        if pair is None:
            return self._run(lambda db: int(db.execute("SELECT COUNT(*) FROM memory").fetchone()[0]))
        return self._run(
            lambda db: int(db.execute("SELECT COUNT(*) FROM memory WHERE pair = ?", (pair,)).fetchone()[0])
        )

    def memory(self, pair: str) -> PairMemory:
        """The translation memory for `pair`, to put in `TranslationOptions.memory` (thread-safe lookup)."""
        return PairMemory(self, pair)


def _remember(db: sqlite3.Connection, pair: str, source: str, target: str, variant: str | None = None) -> None:
    db.execute(
        "INSERT INTO memory (pair, source, target, updated, variant) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (pair, source) DO UPDATE SET target = excluded.target, updated = excluded.updated, "
        "variant = excluded.variant",
        (pair, source, target, now_iso(), variant),
    )


def _replace_shown(output: str, records: Sequence[SentenceRecord], index: int, new: str) -> str:
    """`output` with sentence `index`'s shown text replaced by `new`: the sentences are found in order (each after
    the one before), so the same text earlier in the output is left alone. Unchanged if it cannot be found."""
    at = 0
    for i, record in enumerate(records):
        shown = record.shown
        found = output.find(shown, at) if shown else -1
        if i == index:
            if found < 0:
                return output
            return output[:found] + new + output[found + len(shown) :]
        if found >= 0:
            at = found + len(shown)
    return output


def _unreadable(path: Path) -> str | None:
    """Why `path` is certainly not a whole SQLite database (read without SQLite), or None (absent, empty, or it
    looks whole). SQLite itself reads a truncated file as a smaller, valid one (the lost pages simply gone), so the
    size its header records is compared with the file's."""
    try:
        with open(path, "rb") as f:
            head = f.read(100)
            size = os.fstat(f.fileno()).st_size
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if not head:
        return None
    if not head.startswith(_HEADER) or len(head) < 100:
        return "not a SQLite database"
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    header_valid = head[24:28] == head[92:96] and pages > 0  # SQLite trusts the count only then
    if header_valid and size < page_size * pages:
        return f"truncated: {size:,} of {page_size * pages:,} bytes"
    return None


def _check(db: sqlite3.Connection) -> str | None:
    """SQLite's quick check of the file (pages, indexes), or None when it passes."""
    rows = db.execute("PRAGMA quick_check").fetchall()
    if rows and rows[0][0] == "ok":
        return None
    return "; ".join(str(r[0]) for r in rows[:3]) or "failed its check"
