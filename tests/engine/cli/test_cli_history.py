"""`qiao history`: list, search, show, delete, clear and export on a tmp database, through engine.cli.main.main."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.history.records import HistoryEntry, SentenceRecord
from engine.history.store import HistoryStore


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as store:
        store.add(
            HistoryEntry(
                "I like the bridge. Hello world.",
                "我喜欢这座桥。你好世界。",
                "en-zh",
                "Helsinki-NLP/opus-mt-en-zh",
                "int8",
                variant="hans",
                beams=4,
                sentences=(
                    SentenceRecord("I like the bridge.", "我喜欢这座桥。"),
                    SentenceRecord("Hello world.", "你好世界。"),
                ),
                created="2026-12-01T10:00:00Z",
            )
        )
        store.add(HistoryEntry("The river is long.", "这条河很长。", "en-zh", "m", "fp32", sentences=()))
        store.set_sentence_edit(1, 1, "您好，世界。", None)
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["history", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_list_newest_first_with_edit_mark(db: Path, capsys) -> None:
    code, out, _ = run(capsys, "list", "--db", str(db))
    assert code == 0
    lines = out.splitlines()
    assert [int(line.split()[0]) for line in lines] == [2, 1]
    assert "这条河很长" in lines[0] and "✎" not in lines[0]
    assert "I like the bridge" in lines[1] and "我喜欢这座桥。您好，世界。" in lines[1] and lines[1].endswith("✎")


def test_db_before_the_action_works_too(db: Path, capsys) -> None:
    code, out, _ = run(capsys, "--db", str(db), "list", "--limit", "1")
    assert code == 0 and len(out.splitlines()) == 1


def test_list_json(db: Path, capsys) -> None:
    code, out, _ = run(capsys, "list", "--json", "--db", str(db))
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["id"] for r in records] == [2, 1]
    assert records[1]["sentences"][1] == {
        "source": "Hello world.",
        "output": "你好世界。",
        "edited": "您好，世界。",
        "chosen": None,
    }


def test_search_chinese_and_json(db: Path, capsys) -> None:
    code, out, _ = run(capsys, "search", "喜欢", "--json", "--db", str(db))
    assert code == 0 and [json.loads(line)["id"] for line in out.splitlines()] == [1]
    code, out, err = run(capsys, "search", 'NEAR "(', "--db", str(db))
    assert code == 0 and out == "" and "nothing in the history matches" in err


def test_show_plain_and_json(db: Path, capsys) -> None:
    code, out, _ = run(capsys, "show", "1", "--db", str(db))
    assert code == 0
    assert out.startswith("#1  2026-12-01T10:00:00Z  en-zh  Helsinki-NLP/opus-mt-en-zh  int8  beams 4  hans")
    assert "Source:\n  I like the bridge. Hello world." in out
    assert "Translation:\n  我喜欢这座桥。您好，世界。" in out
    assert "sentence 2: Hello world.\n    model:  你好世界。\n    edited: 您好，世界。" in out
    code, out, _ = run(capsys, "show", "2", "--json", "--db", str(db))
    assert code == 0 and json.loads(out)["output"] == "这条河很长。"


def test_show_unknown_and_bad_ids(db: Path, capsys) -> None:
    code, out, err = run(capsys, "show", "99", "--db", str(db))
    assert code == 1 and out == "" and "no history entry 99" in err
    with pytest.raises(SystemExit) as exit_:
        main(["history", "show", "abc", "--db", str(db)])
    assert exit_.value.code == 2
    assert "not an entry id: 'abc'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["history", "delete", "0", "--db", str(db)])
    assert "ids start at 1" in capsys.readouterr().err


def test_delete(db: Path, capsys) -> None:
    code, _, err = run(capsys, "delete", "2", "77", "--db", str(db))
    assert code == 1 and "deleted 1 entry" in err and "no history entry 77" in err
    with HistoryStore(db) as store:
        assert [e.id for e in store.recent()] == [1]
    code, _, err = run(capsys, "delete", "1", "--db", str(db))
    assert code == 0


def test_clear_asks_for_yes(db: Path, capsys) -> None:
    code, _, err = run(capsys, "clear", "--db", str(db))
    assert code == 1 and "all 2 entries" in err and "--yes" in err
    code, _, err = run(capsys, "clear", "--yes", "--db", str(db))
    assert code == 0 and "removed 2 entries" in err
    with HistoryStore(db) as store:
        assert store.count() == 0
        assert store.memory("en-zh").lookup("Hello world.") == "您好，世界。"


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "tsv"])
def test_export(db: Path, tmp_path: Path, capsys, fmt: str) -> None:
    out_file = tmp_path / "out.txt"
    code, _, err = run(capsys, "export", str(out_file), "--format", fmt, "--db", str(db))
    assert code == 0 and f"exported 2 entries to {out_file} ({fmt})" in err
    text = out_file.read_text(encoding="utf-8")
    if fmt == "jsonl":
        assert [json.loads(line)["id"] for line in text.splitlines()] == [1, 2]
    else:
        sep = "," if fmt == "csv" else "\t"
        assert text.splitlines()[0].split(sep)[:3] == ["id", "created", "pair"]


def test_export_format_from_the_suffix(db: Path, tmp_path: Path, capsys) -> None:
    out_file = tmp_path / "out.csv"
    assert run(capsys, "export", str(out_file), "--db", str(db))[0] == 0
    assert out_file.read_text(encoding="utf-8").startswith("id,created,")


def test_missing_database_says_no_history_yet(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nothing.sqlite3"
    for argv, expected in (
        (["list"], 0),
        (["search", "x"], 0),
        (["clear", "--yes"], 0),
        (["show", "1"], 1),
        (["delete", "1"], 1),
        (["export", str(tmp_path / "x.jsonl")], 1),
    ):
        code, out, err = run(capsys, *argv, "--db", str(missing))
        assert (code, out) == (expected, ""), argv
        assert "no history yet" in err
    assert not missing.exists()  # reading never creates it


def test_default_database_is_in_the_data_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("QIAO_DATA_DIR", str(tmp_path / "data"))
    code, _, err = run(capsys, "list")
    assert code == 0 and str(tmp_path / "data" / "history.sqlite3") in err


def test_damaged_database_is_one_clear_line(tmp_path: Path, capsys) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    code, out, err = run(capsys, "list", "--db", str(path))
    assert code == 1 and out == ""
    assert err.startswith("qiao: the history database") and "damaged" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert run(capsys, "list", "--db", str(path))[0] == 0  # a fresh one took its place


def test_help_lists_history(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "history" in capsys.readouterr().out
