"""The last finished translation's file: round trip, matching, and damage read as "nothing saved"."""

from __future__ import annotations

import json

import pytest

from gui.window.last_translation import LastTranslation, SentencePlaces, source_digest

OPTIONS = {"precision": "int8", "script": "hans", "beams": 0}


def test_round_trip_keeps_the_target_the_options_and_the_time(tmp_path):
    store = LastTranslation(tmp_path / "translation.json")
    store.save("The weather is nice today.", "天气很好。", OPTIONS, now=1_700_000_000.5)
    saved = store.load()
    assert saved is not None
    assert saved.target == "天气很好。" and saved.options == OPTIONS and saved.finished_at == 1_700_000_000.5
    assert saved.matches("The weather is nice today.", OPTIONS)
    assert not saved.matches("The weather is nice today!", OPTIONS), "another source"
    assert not saved.matches("The weather is nice today.", {**OPTIONS, "script": "hant"}), "another script"
    record = json.loads((tmp_path / "translation.json").read_text(encoding="utf-8"))
    assert record["source_sha256"] == source_digest("The weather is nice today.")
    assert "The weather" not in json.dumps(record), "the source lives in source.txt only, not twice"
    assert [p.name for p in tmp_path.iterdir()] == ["translation.json"]


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"{",
        b"\xff\xfe",
        b"[]",
        b'{"format": 99}',
        b'{"format": 1, "source_sha256": "x", "source_chars": 1, "target": 5, "options": {}, "finished_at": 0}',
        b'{"format": 1, "source_sha256": "x", "source_chars": "1", "target": "t", "options": {}, "finished_at": 0}',
        b'{"format": 1, "source_sha256": "x", "source_chars": 1, "target": "t", "options": [], "finished_at": 0}',
        b'{"format": 1, "target": "t"}',
        b"[" * 100_000,
    ],
)
def test_a_damaged_file_reads_as_no_translation(tmp_path, content):
    path = tmp_path / "translation.json"
    path.write_bytes(content)
    assert LastTranslation(path).load() is None


def test_missing_file_and_clear(tmp_path):
    store = LastTranslation(tmp_path / "translation.json")
    assert store.load() is None
    store.save("a", "b", OPTIONS)
    store.clear()
    store.clear()
    assert store.load() is None


def test_the_guards_findings_round_trip_and_an_older_file_without_them_still_loads(tmp_path):
    """A cut or repeated sentence keeps its kind and reason (and glossary terms not placed) through the file."""
    path = tmp_path / "translation.json"
    store = LastTranslation(path)
    places = SentencePlaces(
        (0, 6, 7, 12),
        (0, 3, 3, 6),
        {},
        {1: (("repetition", "The model repeated “lease”."), ("cut", "Cut at the length limit."))},
        {0: ("weather",)},
    )
    store.save("Hello. World", "你好。世界", OPTIONS, sentences=places)
    saved = store.load()
    assert saved is not None and saved.sentences == places
    record = json.loads(path.read_text(encoding="utf-8"))
    del record["sentences"]["flags"], record["sentences"]["unmet"]  # as written before flags were kept
    path.write_text(json.dumps(record), encoding="utf-8")
    old = LastTranslation(path).load()
    assert old is not None and old.target == "你好。世界"
    assert old.sentences == SentencePlaces((0, 6, 7, 12), (0, 3, 3, 6)), "the places come back, with no flags"


@pytest.mark.parametrize(
    "flags",
    [[["cut"]], "cut", {"9": [["cut", "x"]]}, {"x": [["cut", "x"]]}, {"1": [["cut", 5]]}],
)
def test_damaged_flags_are_dropped_but_the_sentences_stay(tmp_path, flags):
    path = tmp_path / "translation.json"
    LastTranslation(path).save(
        "Hello. World", "你好。世界", OPTIONS, sentences=SentencePlaces((0, 6, 7, 12), (0, 3, 3, 6))
    )
    record = json.loads(path.read_text(encoding="utf-8"))
    record["sentences"]["flags"] = flags if isinstance(flags, dict) else {"1": flags}
    path.write_text(json.dumps(record), encoding="utf-8")
    saved = LastTranslation(path).load()
    assert saved is not None and saved.sentences is not None
    assert saved.sentences.source == (0, 6, 7, 12) and saved.sentences.flags == {}
