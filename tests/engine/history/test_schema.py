"""The schema's versions: a version-1 file migrates with its data; damaged and newer files are reported."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from engine.errors import QiaoError
from engine.history import schema
from engine.history.errors import HistoryDamaged, HistoryTooNew
from engine.history.store import HistoryStore

from .helpers import entry


def make_version_1(path: Path) -> None:
    """A version-1 database written by hand, as the first release left it (entries and sentences only)."""
    db = sqlite3.connect(path)
    db.executescript(
        """
        CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, created TEXT NOT NULL, source TEXT NOT NULL,
            output TEXT NOT NULL, pair TEXT NOT NULL, model TEXT NOT NULL, precision TEXT NOT NULL, variant TEXT,
            beams INTEGER);
        CREATE TABLE sentences (entry_id INTEGER NOT NULL REFERENCES entries(id) ON DELETE CASCADE,
            idx INTEGER NOT NULL, source TEXT NOT NULL, output TEXT NOT NULL, edited TEXT, chosen TEXT,
            PRIMARY KEY (entry_id, idx));
        CREATE TRIGGER entries_sentences_ad AFTER DELETE ON entries BEGIN
            DELETE FROM sentences WHERE entry_id = old.id; END;
        INSERT INTO entries VALUES (7, '2025-01-02T03:04:05Z', 'Old bridge.', '旧桥。', 'en-zh', 'opus', 'fp32',
            'hans', 4);
        INSERT INTO sentences VALUES (7, 0, 'Old bridge.', '旧桥。', '老桥。', NULL);
        PRAGMA user_version = 1;
        """
    )
    db.commit()
    db.close()


def test_migrations_are_ordered_and_numbered() -> None:
    assert schema.VERSION == len(schema.MIGRATIONS) == 3


def test_a_version_1_database_migrates_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_version_1(path)
    with HistoryStore(path) as store:
        assert schema.user_version(store._conn()) == schema.VERSION
        old = store.get(7)
        assert old is not None
        assert (old.source, old.output, old.precision, old.variant, old.beams) == (
            "Old bridge.",
            "旧桥。",
            "fp32",
            "hans",
            4,
        )
        assert old.sentences[0].edited == "老桥。"
        assert [e.id for e in store.search("旧桥")] == [7]  # the new index covers the old rows
        store.remember("en-zh", "Old bridge.", "老桥。")  # version 2's table
        assert store.memory("en-zh").lookup("Old bridge.") == "老桥。"
        assert store.add(entry()) == 8
        assert store.memory("en-zh").made_with("Old bridge.") == ("en-zh", None), "version 3: a fix's variant"


def test_version_2_entries_get_their_merge_key(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_version_1(path)
    db = sqlite3.connect(path, isolation_level=None)
    schema.migrate(db, schema.MIGRATIONS[:2])
    db.close()
    with HistoryStore(path) as store:
        assert schema.user_version(store._conn()) == schema.VERSION
        new = store.add(entry("Old bridge", "旧桥"))  # the same text as entry 7, re-translated after the update
        assert [e.id for e in store.recent()] == [new] and store.get(7) is None


def test_a_failing_migration_leaves_the_old_version(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    make_version_1(path)

    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("disk gone")

    db = sqlite3.connect(path, isolation_level=None)
    with pytest.raises(RuntimeError):
        schema.migrate(db, (schema.MIGRATIONS[0], broken))
    assert schema.user_version(db) == 1
    assert db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'half_done'").fetchone()[0] == 0
    db.close()


def test_a_fresh_database_is_at_the_current_version(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "new" / "history.sqlite3") as store:
        assert schema.user_version(store._conn()) == schema.VERSION


def damaged_copies(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if ".damaged-" in p.name)


def _assert_set_aside(path: Path, data: bytes, exc: HistoryDamaged) -> None:
    assert isinstance(exc, QiaoError)
    assert str(path) in str(exc) and "damaged" in str(exc) and "new, empty history" in str(exc)
    copies = [p for p in damaged_copies(path.parent) if not p.name.endswith(("-wal", "-shm"))]
    assert copies == [exc.moved_to]
    assert exc.moved_to is not None and exc.moved_to.read_bytes() == data  # kept as it was
    with HistoryStore(path) as store:  # a fresh, working history in its place
        assert store.recent() == []
        assert store.add(entry()) > 0


def test_random_bytes_are_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    data = os.urandom(8192)
    path.write_bytes(data)
    with pytest.raises(HistoryDamaged, match="not a SQLite database") as caught:
        HistoryStore(path)
    _assert_set_aside(path, data, caught.value)


def test_a_truncated_file_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        for i in range(200):
            store.add(entry(f"Sentence number {i}. " * 20, f"第{i}句。" * 20))
    whole = path.read_bytes()
    data = whole[: len(whole) // 2]
    path.write_bytes(data)
    with pytest.raises(HistoryDamaged, match="truncated") as caught:
        HistoryStore(path)
    _assert_set_aside(path, data, caught.value)


def test_a_damaged_page_is_set_aside(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        for i in range(200):
            store.add(entry(f"Sentence number {i}. " * 20, f"第{i}句。" * 20))
    data = bytearray(path.read_bytes())
    page = 4096
    for n in range(2, len(data) // page):  # every page but the first: its b-tree headers are now junk
        data[n * page : n * page + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    with pytest.raises(HistoryDamaged) as caught:
        HistoryStore(path)
    _assert_set_aside(path, bytes(data), caught.value)


def test_a_newer_schema_is_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        store.add(entry())
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {schema.VERSION + 1}")
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(HistoryTooNew, match="newer Qiao") as caught:
        HistoryStore(path)
    assert isinstance(caught.value, QiaoError)
    assert caught.value.version == schema.VERSION + 1
    assert path.read_bytes() == before
    assert damaged_copies(tmp_path) == []


def test_an_empty_file_becomes_a_history(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_bytes(b"")
    with HistoryStore(path) as store:
        assert store.add(entry()) == 1
