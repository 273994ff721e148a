"""HistoryStore: entries in and out, the size limit, edits, the translation memory, export, two stores on a file."""

from __future__ import annotations

import csv
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from engine import atomic_write
from engine.errors import QiaoError
from engine.history import export as export_mod
from engine.history.errors import HistoryError
from engine.history.records import HistoryEntry, SentenceRecord
from engine.history.store import HistoryStore

from .helpers import entry


@pytest.fixture
def store(tmp_path: Path):
    with HistoryStore(tmp_path / "history.sqlite3") as s:
        yield s


def test_add_get_round_trip(store: HistoryStore) -> None:
    e = entry(variant="hans", beams=4, created="2026-12-01T10:00:00Z")
    new_id = store.add(e)
    got = store.get(new_id)
    assert got is not None
    assert got.id == new_id
    assert (got.source, got.output, got.pair, got.model, got.precision) == (
        e.source,
        e.output,
        "en-zh",
        "Helsinki-NLP/opus-mt-en-zh",
        "int8",
    )
    assert (got.variant, got.beams, got.created) == ("hans", 4, "2026-12-01T10:00:00Z")
    assert got.sentences == e.sentences
    assert store.get(new_id + 100) is None


def test_created_defaults_to_now_in_utc(store: HistoryStore) -> None:
    got = store.get(store.add(entry()))
    assert got is not None
    assert len(got.created) == 20 and got.created.endswith("Z") and got.created[10] == "T"


def test_recent_is_newest_first_with_offset(store: HistoryStore) -> None:
    ids = [store.add(entry(source=f"Text {i}.", output=f"文本{i}。")) for i in range(5)]
    assert [e.id for e in store.recent(limit=3)] == ids[::-1][:3]
    assert [e.id for e in store.recent(limit=3, offset=3)] == ids[::-1][3:]
    assert store.count() == 5


def test_size_limit_drops_the_oldest_on_add(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.sqlite3", max_entries=3) as s:
        ids = [s.add(entry(source=f"Text {i}.", output=f"文本{i}。")) for i in range(5)]
        assert [e.id for e in s.recent()] == ids[:1:-1]
        assert s.get(ids[0]) is None
        # their sentences and search index rows went with them
        assert s.search("Text 0") == []
        db = sqlite3.connect(tmp_path / "h.sqlite3")
        assert db.execute("SELECT COUNT(*) FROM sentences").fetchone()[0] == 3
        db.close()
        s.set_max_entries(1)
        assert [e.id for e in s.recent()] == [ids[-1]]


def test_ids_are_never_reused(store: HistoryStore) -> None:
    first = store.add(entry())
    store.delete([first])
    assert store.add(entry()) != first


def test_delete_and_clear(store: HistoryStore) -> None:
    a, b, c = (store.add(entry(source=f"Text {i}.", output=f"文本{i}。")) for i in range(3))
    assert store.delete([a, c, 999]) == 2
    assert [e.id for e in store.recent()] == [b]
    store.remember("en-zh", "Keep me.", "留下我。")
    assert store.clear() == 1
    assert store.recent() == [] and store.search("Text") == []
    assert store.memory("en-zh").lookup("Keep me.") == "留下我。"  # the memory is the user's work: clear keeps it


def test_sentence_edit_changes_the_shown_output_and_remembers(store: HistoryStore) -> None:
    new_id = store.add(entry())
    store.set_sentence_edit(new_id, 1, "您好，世界。", None)
    got = store.get(new_id)
    assert got is not None
    assert got.sentences[1] == SentenceRecord("Hello world.", "你好世界。", "您好，世界。", None)
    assert got.output == "我喜欢这座桥。您好，世界。"
    assert store.search("您好")[0].id == new_id  # the index follows the new output
    assert store.memory("en-zh").lookup("Hello world.") == "您好，世界。"
    assert store.memory("zh-en").lookup("Hello world.") is None

    store.set_sentence_edit(new_id, 0, None, "我爱这座桥。")  # a chosen alternative
    got = store.get(new_id)
    assert got is not None and got.sentences[0].shown == "我爱这座桥。"
    assert got.output == "我爱这座桥。您好，世界。"
    assert store.memory("en-zh").lookup("I like the bridge.") == "我爱这座桥。"

    store.set_sentence_edit(new_id, 1, None, None)  # back to the model's: forgotten
    got = store.get(new_id)
    assert got is not None and got.output == "我爱这座桥。你好世界。"
    assert store.memory("en-zh").lookup("Hello world.") is None


def test_sentence_edit_finds_the_right_one_of_two_equal_sentences(store: HistoryStore) -> None:
    e = HistoryEntry(
        "Yes. Yes.",
        "是。是。",
        "en-zh",
        "m",
        "int8",
        sentences=(SentenceRecord("Yes.", "是。"), SentenceRecord("Yes.", "是。")),
    )
    new_id = store.add(e)
    store.set_sentence_edit(new_id, 1, "对。", None)
    got = store.get(new_id)
    assert got is not None and got.output == "是。对。"


def test_sentence_edit_bad_ids(store: HistoryStore) -> None:
    new_id = store.add(entry())
    with pytest.raises(HistoryError, match="no history entry"):
        store.set_sentence_edit(new_id + 1, 0, "x", None)
    with pytest.raises(HistoryError, match="no sentence 5"):
        store.set_sentence_edit(new_id, 5, "x", None)


def test_remember_forget_and_update(store: HistoryStore) -> None:
    memory = store.memory("en-zh")
    assert memory.lookup("The cat.") is None
    store.remember("en-zh", "The cat.", "猫。")
    store.remember("en-zh", "The cat.", "这只猫。")
    assert memory.lookup("The cat.") == "这只猫。"
    assert store.memory_size("en-zh") == 1
    assert store.forget("en-zh", "The cat.") is True
    assert store.forget("en-zh", "The cat.") is False
    assert memory.lookup("The cat.") is None


def test_memory_lookup_from_another_thread_while_writing(store: HistoryStore) -> None:
    for i in range(50):
        store.remember("en-zh", f"Sentence {i}.", f"句子{i}。")
    memory = store.memory("en-zh")
    found: list[str | None] = []
    errors: list[BaseException] = []

    def ask() -> None:
        try:
            for i in range(50):
                found.append(memory.lookup(f"Sentence {i}."))
        except BaseException as exc:  # pragma: no cover - the assertion below reports it
            errors.append(exc)

    worker = threading.Thread(target=ask)
    worker.start()
    for i in range(50):  # the window's thread writes meanwhile
        store.add(entry(source=f"Text {i}.", output=f"文本{i}。"))
    worker.join()
    assert errors == []
    assert found == [f"句子{i}。" for i in range(50)]


def test_memory_of_a_closed_store_answers_none(tmp_path: Path) -> None:
    s = HistoryStore(tmp_path / "h.sqlite3")
    s.remember("en-zh", "A.", "甲。")
    memory = s.memory("en-zh")
    s.close()
    assert memory.lookup("A.") is None
    with pytest.raises(HistoryError, match="closed"):
        s.add(entry())


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
def test_export_reads_back(store: HistoryStore, tmp_path: Path, fmt: str) -> None:
    ids = [
        store.add(entry()),
        store.add(entry(source='Tab\there, "quotes", comma.\nNew line.', output="制表符，\t引号。\n新行。")),
    ]
    store.set_sentence_edit(ids[0], 0, "我爱这座桥。", None)
    out = tmp_path / f"out.{fmt}"
    assert store.export(out, fmt) == 2
    text = out.read_text(encoding="utf-8")
    if fmt == "jsonl":
        records = [json.loads(line) for line in text.splitlines()]
        assert [r["id"] for r in records] == ids  # oldest first
        assert records[0]["sentences"][0]["edited"] == "我爱这座桥。"
        assert records[1]["source"] == 'Tab\there, "quotes", comma.\nNew line.'
    else:
        rows = list(csv.reader(text.splitlines(keepends=True), delimiter="," if fmt == "csv" else "\t"))
        assert rows[0] == list(export_mod.COLUMNS)
        assert [int(r[0]) for r in rows[1:]] == ids
        assert rows[2][7] == 'Tab\there, "quotes", comma.\nNew line.'
        assert rows[2][8] == "制表符，\t引号。\n新行。"
        assert rows[1][9] == "1" and rows[2][9] == "0"  # sentences the user changed


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_export_quotes_cells_a_spreadsheet_would_run(store: HistoryStore, tmp_path: Path, fmt: str) -> None:
    """CSV injection: a text starting with = + - @ (or a tab or CR) gets a leading ' in CSV/TSV, never in JSON."""
    texts = ['=HYPERLINK("http://evil.example","x")', "+1", "-2", "@SUM(A1)", "\t=2", "\r=3", "'=4"]
    for text in texts:
        store.add(entry(source=text, output=text, sentences=()))
    out = tmp_path / f"out.{fmt}"
    store.export(out, fmt)
    with open(out, encoding="utf-8", newline="") as stream:
        rows = list(csv.reader(stream, delimiter=",\t"[fmt == "tsv"]))
    assert [r[7] for r in rows[1:]] == ["'" + t for t in texts]
    assert [r[8] for r in rows[1:]] == ["'" + t for t in texts]
    assert all(not cell or cell[0] not in "=+-@\t\r" for row in rows for cell in row)
    assert len(rows) == len(texts) + 1  # the lone CR stayed inside its quoted cell
    store.export(tmp_path / "out.jsonl", "jsonl")
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["source"] for line in lines] == texts  # the JSON export stays exact


def test_export_is_atomic(store: HistoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store.add(entry())
    out = tmp_path / "out.jsonl"
    out.write_text("the previous export\n", encoding="utf-8")

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_write.os, "replace", fail)
    with pytest.raises(OSError):
        store.export(out, "jsonl")
    assert out.read_text(encoding="utf-8") == "the previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".out")) == []


def test_export_unknown_format(store: HistoryStore, tmp_path: Path) -> None:
    with pytest.raises(QiaoError, match="unknown export format"):
        store.export(tmp_path / "x.xml", "xml")


def test_two_stores_on_one_file_see_each_other(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as window, HistoryStore(path) as cli:
        a = window.add(entry(source="From the window.", output="来自窗口。"))
        b = cli.add(entry(source="From the command line.", output="来自命令行。"))
        assert {e.id for e in window.recent()} == {a, b}
        assert cli.search("窗口")[0].id == a
        cli.delete([a])
        assert [e.id for e in window.recent()] == [b]
        cli.remember("en-zh", "X.", "叉。")
        assert window.memory("en-zh").lookup("X.") == "叉。"


def test_a_writer_waits_for_another_instead_of_failing(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as window:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # `qiao history delete` in the middle of its transaction
        other.execute("INSERT INTO memory (pair, source, target, updated) VALUES ('en-zh', 'a', 'b', 'now')")
        result: list[int] = []
        adding = threading.Thread(target=lambda: result.append(window.add(entry())))
        adding.start()
        other.execute("COMMIT")
        adding.join()
        other.close()
        assert len(result) == 1 and window.get(result[0]) is not None
        assert window.memory("en-zh").lookup("a") == "b"


def test_reads_and_lookups_do_not_wait_for_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        kept = store.add(entry())
        store.remember("en-zh", "Hello world.", "你好世界。")
        writer = sqlite3.connect(path, isolation_level=None)
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("DELETE FROM entries")  # not committed yet
        try:
            answers: list[object] = []
            reader = threading.Thread(target=lambda: answers.append(store.memory("en-zh").lookup("Hello world.")))
            reader.start()
            reader.join()
            assert answers == ["你好世界。"]
            assert [e.id for e in store.search("桥")] == [kept]  # the committed state, without waiting
        finally:
            writer.execute("ROLLBACK")
            writer.close()


def test_busy_past_the_timeout_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    with HistoryStore(path, busy_timeout=0.05) as window:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(HistoryError, match="busy"):
                window.add(entry())
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert window.add(entry()) > 0


def test_wal_and_synchronous_normal(store: HistoryStore) -> None:
    db = store._conn()
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == 5000


def test_a_re_translation_of_the_same_text_replaces_its_entry_and_moves_it_to_the_top(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        first = store.add(entry("I like the bridge. Hello world."))
        other = store.add(entry("Good morning.", "早上好。"))
        # A settings change redoes it (another variant and precision), a re-paste has other spacing and no final stop
        again = store.add(entry("I like the bridge. Hello world.", variant="hant", precision="fp32"))
        pasted = store.add(entry("I like  the bridge.\nHello world", "我喜欢这座桥。你好世界"))
        assert [e.id for e in store.recent()] == [pasted, other], "one entry per text, the newest on top"
        assert first < other < again < pasted and store.get(first) is None and store.get(again) is None
        assert store.get(pasted).source == "I like  the bridge.\nHello world"
        assert [e.id for e in store.search("bridge")] == [pasted], "the search index lost the merged entries"
        # Another direction, or a text that differs in more than spacing and final punctuation, is another entry
        back = store.add(entry("I like the bridge. Hello world.", pair="zh-en"))
        changed = store.add(entry("I like the bridges. Hello world."))
        assert [e.id for e in store.recent()] == [changed, back, pasted, other]


def test_source_key_ignores_only_spacing_and_final_punctuation() -> None:
    from engine.history.records import source_key

    key = source_key("en-zh", "Hello world.")
    assert source_key("en-zh", "  Hello   world!\n") == key == source_key("en-zh", "Hello world")
    assert source_key("en-zh", "Hello, world.") != key, "punctuation inside the text is part of it"
    assert source_key("en-zh", "hello world.") != key, "case is part of it"
    assert source_key("zh-en", "Hello world.") != key
    assert source_key("en-zh", "你好。") == source_key("en-zh", "你好")


def test_a_fix_remembers_the_variant_it_was_written_in(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        entry_id = store.add(entry(variant="hans"))
        store.set_sentence_edit(entry_id, 0, "我很喜欢这座桥。", None)
        memory = store.memory("en-zh")
        assert memory.lookup("I like the bridge.") == "我很喜欢这座桥。"
        assert memory.made_with("I like the bridge.") == ("en-zh", "hans")
        store.remember("en-zh", "Hello world.", "你好，世界。", "hant")
        assert memory.made_with("Hello world.") == ("en-zh", "hant")
        store.remember("en-zh", "Hello world.", "你好，世界。")
        assert memory.made_with("Hello world.") == ("en-zh", None), "not known: not guessed"
