"""The history database's schema: an ordered list of migrations, the version in `PRAGMA user_version`.

Version N is what the first N migrations make; opening a database runs the ones it lacks, each in its own
transaction with the new version number, so a crash mid-migration leaves the old version intact. Never edit a
migration that has shipped: add the next one.

The full-text index is not part of the numbered schema, because whether it can exist depends on the SQLite this
Python was built with, not on the file: `ensure_search` (run after the migrations, on every open) creates the FTS5
table and its triggers when FTS5 is there (trigram tokenizer where available, so Chinese substrings match; else
unicode61), rebuilding it from the entries, and drops the triggers when it is not (they would make every insert
fail with "no such module: fts5"); search then falls back to LIKE. A later open with FTS5 rebuilds the index.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable

from engine.history.records import source_key

log = logging.getLogger(__name__)

FTS_TABLE = "entries_fts"
_TRIGGERS = ("entries_fts_ai", "entries_fts_ad", "entries_fts_au")

# Search modes: how `engine.history.search` turns a query into SQL for this database.
MODE_TRIGRAM = "trigram"  # FTS5, trigram tokenizer: every term of 3+ characters is an indexed substring match
MODE_WORDS = "unicode61"  # FTS5, word tokenizer: words and prefixes; Chinese (not split into words) by LIKE
MODE_LIKE = "like"  # no FTS5 in this SQLite: substring LIKE over the entries


def _v1(db: sqlite3.Connection) -> None:
    """The first schema: entries and their sentences."""
    db.execute(
        """CREATE TABLE entries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created TEXT NOT NULL,
            source TEXT NOT NULL,
            output TEXT NOT NULL,
            pair TEXT NOT NULL,
            model TEXT NOT NULL,
            precision TEXT NOT NULL,
            variant TEXT,
            beams INTEGER
        )"""
    )
    db.execute(
        """CREATE TABLE sentences (
            entry_id INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            source TEXT NOT NULL,
            output TEXT NOT NULL,
            edited TEXT,
            chosen TEXT,
            PRIMARY KEY (entry_id, idx)
        )"""
    )
    # Sentences go with their entry whether or not a connection turned foreign keys on.
    db.execute(
        "CREATE TRIGGER entries_sentences_ad AFTER DELETE ON entries BEGIN "
        "DELETE FROM sentences WHERE entry_id = old.id; END"
    )


def _v2(db: sqlite3.Connection) -> None:
    """Translation memory (the user's fixes by pair and source sentence) and the index the list reads by."""
    db.execute(
        """CREATE TABLE memory (
            pair TEXT NOT NULL,
            source TEXT NOT NULL,
            target TEXT NOT NULL,
            updated TEXT NOT NULL,
            PRIMARY KEY (pair, source)
        ) WITHOUT ROWID"""
    )
    db.execute("CREATE INDEX entries_created ON entries(created)")


def _v3(db: sqlite3.Connection) -> None:
    """Re-translations merge (each entry's `source_key`, indexed, so a new entry finds its older versions), and a
    fix remembers the target variant it was written in (NULL: not known), so it can be told apart later."""
    db.execute("ALTER TABLE entries ADD COLUMN source_key TEXT")
    rows = db.execute("SELECT id, pair, source FROM entries").fetchall()
    db.executemany("UPDATE entries SET source_key = ? WHERE id = ?", [(source_key(p, s), i) for i, p, s in rows])
    db.execute("CREATE INDEX entries_source_key ON entries(source_key)")
    db.execute("ALTER TABLE memory ADD COLUMN variant TEXT")


MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1, _v2, _v3)
VERSION = len(MIGRATIONS)


def user_version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def migrate(db: sqlite3.Connection, migrations: tuple[Callable[[sqlite3.Connection], None], ...] = MIGRATIONS) -> int:
    """Run the migrations the database lacks, one transaction each; returns the version it is now at.

    The caller checks first that the version is not newer than `len(migrations)`."""
    version = user_version(db)
    for number in range(version, len(migrations)):
        with _transaction(db):
            migrations[number](db)
            db.execute(f"PRAGMA user_version = {number + 1}")
        log.info("history database migrated to schema %d", number + 1)
    return user_version(db)


class _transaction:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on error), for a connection in autocommit mode (isolation_level None)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> sqlite3.Connection:
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.db.execute("COMMIT")
        else:
            self.db.execute("ROLLBACK")


transaction = _transaction


# ---- full-text search --------------------------------------------------------------------------------------------


def fts5_tokenizers() -> tuple[str, ...]:
    """The FTS5 tokenizers this Python's SQLite offers, of those search can use ("trigram", "unicode61"); ()
    without FTS5."""
    found = []
    probe = sqlite3.connect(":memory:")
    try:
        for tokenizer in ("trigram", "unicode61"):
            try:
                probe.execute(f"CREATE VIRTUAL TABLE probe_{tokenizer} USING fts5(a, tokenize='{tokenizer}')")
                found.append(tokenizer)
            except sqlite3.OperationalError:
                pass
    finally:
        probe.close()
    return tuple(found)


def _existing_fts_sql(db: sqlite3.Connection) -> str | None:
    row = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (FTS_TABLE,)).fetchone()
    return row[0] if row else None


def _triggers_present(db: sqlite3.Connection) -> bool:
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    return all(t in names for t in _TRIGGERS)


def _create_triggers(db: sqlite3.Connection) -> None:
    delete = (
        f"INSERT INTO {FTS_TABLE}({FTS_TABLE}, rowid, source, output) "
        "VALUES ('delete', old.id, old.source, old.output);"
    )
    insert = f"INSERT INTO {FTS_TABLE}(rowid, source, output) VALUES (new.id, new.source, new.output);"
    db.execute(f"CREATE TRIGGER IF NOT EXISTS entries_fts_ai AFTER INSERT ON entries BEGIN {insert} END")
    db.execute(f"CREATE TRIGGER IF NOT EXISTS entries_fts_ad AFTER DELETE ON entries BEGIN {delete} END")
    db.execute(
        f"CREATE TRIGGER IF NOT EXISTS entries_fts_au AFTER UPDATE OF source, output ON entries "
        f"BEGIN {delete} {insert} END"
    )


def ensure_search(db: sqlite3.Connection, tokenizers: tuple[str, ...] | None = None) -> str:
    """Make the full-text index match what this SQLite can do; returns the search mode (MODE_*)."""
    tokenizers = fts5_tokenizers() if tokenizers is None else tokenizers
    existing = _existing_fts_sql(db)
    if not tokenizers:
        _drop_triggers(db)
        log.warning("this Python's SQLite has no FTS5: history search uses LIKE (slower on a long history)")
        return MODE_LIKE
    if existing is not None:
        tokenizer = "trigram" if "trigram" in existing else "unicode61"
        if tokenizer not in tokenizers:  # made by a SQLite with trigram, opened by one without: start it again
            _drop_triggers(db)
            try:
                with transaction(db):
                    db.execute(f"DROP TABLE {FTS_TABLE}")
            except sqlite3.OperationalError as exc:
                log.warning("history search index (%s) unusable here (%s): search uses LIKE", tokenizer, exc)
                return MODE_LIKE
            existing = None
    if existing is None:
        tokenizer = tokenizers[0]
        with transaction(db):
            db.execute(
                f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(source, output, content='entries', "
                f"content_rowid='id', tokenize='{tokenizer}')"
            )
            _create_triggers(db)
            db.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
    elif not _triggers_present(db):  # opened without FTS5 in between: the index missed those changes
        with transaction(db):
            _create_triggers(db)
            db.execute(f"INSERT INTO {FTS_TABLE}({FTS_TABLE}) VALUES ('rebuild')")
        log.info("history search index rebuilt")
    return MODE_TRIGRAM if tokenizer == "trigram" else MODE_WORDS


def _drop_triggers(db: sqlite3.Connection) -> None:
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    if any(t in names for t in _TRIGGERS):
        with transaction(db):
            for name in _TRIGGERS:
                db.execute(f"DROP TRIGGER IF EXISTS {name}")
