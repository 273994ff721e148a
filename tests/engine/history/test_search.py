"""History search in each mode (FTS5 trigram, FTS5 words, LIKE without FTS5): the same answers, Chinese inside a
sentence, prefixes, and no query that raises."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest

from engine.history import schema
from engine.history.store import HistoryStore

from .helpers import entry

MODES = {
    schema.MODE_TRIGRAM: ("trigram", "unicode61"),
    schema.MODE_WORDS: ("unicode61",),
    schema.MODE_LIKE: (),
}


@pytest.fixture(params=list(MODES))
def store(request, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    if request.param == schema.MODE_TRIGRAM and "trigram" not in schema.fts5_tokenizers():
        pytest.skip("this SQLite has no trigram tokenizer")
    monkeypatch.setattr(schema, "fts5_tokenizers", lambda: MODES[request.param])
    with HistoryStore(tmp_path / "history.sqlite3") as s:
        assert s.mode == request.param
        s.ids = {
            "bridge": s.add(entry("I like the bridge over the river.", "我喜欢河上的这座桥。")),
            "hello": s.add(entry("Hello, world! Wonderful weather.", "你好，世界！天气真好。")),
            "syntax": s.add(entry('He said "NEAR" -5 * (x) AND y_z 100%.', "他说“附近”-5 *（x）和 y_z 100%。")),
        }
        yield s


def found(store: HistoryStore, query: str) -> set[str]:
    names = {v: k for k, v in store.ids.items()}
    return {names[e.id] for e in store.search(query)}


@pytest.mark.parametrize(
    "query, expected",
    [
        ("喜欢", {"bridge"}),  # a two-character Chinese word inside a sentence
        ("这座桥", {"bridge"}),
        ("河上", {"bridge"}),
        ("世界", {"hello"}),
        ("bridge", {"bridge"}),
        ("BRIDGE", {"bridge"}),
        ("the brid", {"bridge"}),  # the last word is a prefix: the user is still typing it
        ("wonder", {"hello"}),
        ("hello 天气", {"hello"}),  # every word, from either side, in any order
        ("river hello", set()),
        ("NEAR", {"syntax"}),
        ("y_z", {"syntax"}),
        ("100%", {"syntax"}),
        ("zebra", set()),
    ],
)
def test_search_finds(store: HistoryStore, query: str, expected: set[str]) -> None:
    assert found(store, query) == expected


@pytest.mark.parametrize(
    "query",
    [
        '"',
        '""',
        "*",
        "-",
        "NEAR",
        "NEAR(",
        'NEAR("a" "b", 2)',
        "AND",
        "OR NOT",
        "a OR",
        "(",
        ")",
        "^",
        ":",
        "x:y",
        "source:",
        "{",
        "col*",
        '"unterminated',
        "\\",
        "%",
        "_",
        "'",
        "';DROP TABLE entries;--",
        "\x00",
        "​",
        "   ",
    ],
)
def test_fts_syntax_never_raises(store: HistoryStore, query: str) -> None:
    assert isinstance(store.search(query), list)
    assert store.count() == 3


def test_search_syntax_characters_are_text(store: HistoryStore) -> None:
    assert found(store, "-5") == {"syntax"}
    assert found(store, "(x)") == {"syntax"}
    assert found(store, '"NEAR"') == {"syntax"}


def test_random_queries_never_raise(store: HistoryStore) -> None:
    alphabet = "ab \"*-:^()_%\\'NEARORAND喜欢桥。，"
    rng = random.Random(13)
    for _ in range(300):
        query = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))
        assert isinstance(store.search(query), list)


def test_empty_query_gives_the_most_recent(store: HistoryStore) -> None:
    assert [e.id for e in store.search("  ")] == sorted(store.ids.values(), reverse=True)


def test_search_limit(store: HistoryStore) -> None:
    for i in range(5):
        store.add(entry(f"Bridge number {i}.", f"第{i}座桥。"))
    assert len(store.search("bridge", limit=3)) == 3


def test_without_fts5_the_fallback_is_logged(tmp_path: Path, monkeypatch, caplog) -> None:
    monkeypatch.setattr(schema, "fts5_tokenizers", lambda: ())
    with caplog.at_level(logging.WARNING, logger="engine.history.schema"), HistoryStore(tmp_path / "h.sqlite3") as s:
        assert s.mode == schema.MODE_LIKE
    assert any("no FTS5" in r.getMessage() for r in caplog.records)


def test_the_index_catches_up_after_a_python_without_fts5(tmp_path: Path, monkeypatch) -> None:
    """A database written while FTS5 was missing (no triggers) gets its index rebuilt when FTS5 is back."""
    path = tmp_path / "h.sqlite3"
    with HistoryStore(path) as s:
        first = s.add(entry("Before.", "之前的文本。"))
    monkeypatch.setattr(schema, "fts5_tokenizers", lambda: ())
    with HistoryStore(path) as s:
        second = s.add(entry("Written without the index.", "没有索引时写的。"))  # the triggers would fail here
        s.delete([first])
    monkeypatch.undo()
    with HistoryStore(path) as s:
        assert s.mode != schema.MODE_LIKE
        assert [e.id for e in s.search("without the index")] == [second]
        assert s.search("之前的") == []
