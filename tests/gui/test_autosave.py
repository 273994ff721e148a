"""The source text survives restarts and crashes: debounced, atomic writes."""

from __future__ import annotations

from gui.autosave import Autosave


def test_saves_after_a_pause_not_on_every_change(qtbot, tmp_path):
    path = tmp_path / "state" / "source.txt"
    text = {"value": ""}
    store = Autosave(path, lambda: text["value"], debounce_ms=100)
    for word in ("Hello", "Hello brid", "Hello bridge"):
        text["value"] = word
        store.schedule()
    assert not path.exists(), "nothing written while typing"
    qtbot.waitUntil(path.exists, timeout=2000)
    assert path.read_text(encoding="utf-8") == "Hello bridge"
    assert Autosave(path, str).load() == "Hello bridge"


def test_flush_writes_now_and_keeps_line_endings_and_unicode(tmp_path):
    path = tmp_path / "source.txt"
    value = "Line one\r\nLine two\n\n桥 — “quotes”"
    store = Autosave(path, lambda: value, debounce_ms=10_000)
    store.schedule()
    store.flush()
    assert path.read_bytes() == value.encode("utf-8")
    assert not store.pending()


def test_emptying_the_text_removes_the_file(tmp_path):
    path = tmp_path / "source.txt"
    path.write_text("old", encoding="utf-8")
    store = Autosave(path, lambda: "")
    store.schedule()
    store.flush()
    assert not path.exists() and store.load() == ""


def test_unreadable_file_loads_as_empty(tmp_path):
    path = tmp_path / "source.txt"
    path.write_bytes(b"\xff\xfe\x00garbage")
    assert Autosave(path, str).load() == ""


def test_write_is_atomic_no_temp_files_left(tmp_path):
    path = tmp_path / "source.txt"
    store = Autosave(path, lambda: "x" * 1_000_000)
    store.schedule()
    store.flush()
    assert [p.name for p in tmp_path.iterdir()] == ["source.txt"]


def test_a_failing_disk_is_reported_not_raised(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("file in the way", encoding="utf-8")
    store = Autosave(blocker / "source.txt", lambda: "text")
    store.schedule()
    store.flush()
    assert store.last_error
