"""The source text survives restarts and crashes: debounced, atomic writes."""

from __future__ import annotations

from gui.window.autosave import Autosave


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


def test_a_failed_save_stays_pending_is_reported_once_and_retried_until_it_works(qtbot, tmp_path, monkeypatch):
    """Root may write anywhere, so a read-only folder is simulated where the OS would refuse: at `os.replace`."""
    import os

    path = tmp_path / "source.txt"
    text = {"value": "first"}
    store = Autosave(path, lambda: text["value"], debounce_ms=10, retry_ms=50)
    failures, recoveries = [], []
    store.failed.connect(failures.append)
    store.recovered.connect(lambda: recoveries.append(True))
    real_replace = os.replace

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    for value in ("first", "second", "third"):
        text["value"] = value
        store.schedule()
        store.flush()
    assert len(failures) == 1 and "Permission denied" in failures[0], "told once, not per edit"
    assert store.pending() and store.last_error and not path.exists()
    assert [p.name for p in tmp_path.iterdir()] == [], "no temp file left by the failed attempts"
    monkeypatch.setattr(os, "replace", real_replace)
    qtbot.waitUntil(lambda: not store.pending(), timeout=2000)  # the retry timer, with no further edit
    assert path.read_text(encoding="utf-8") == "third"
    assert recoveries == [True] and store.last_error is None and len(failures) == 1


def test_a_folder_that_cannot_exist_fails_without_raising_and_keeps_the_text_pending(tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("file in the way", encoding="utf-8")
    store = Autosave(blocker / "source.txt", lambda: "text", retry_ms=60_000)
    failures = []
    store.failed.connect(failures.append)
    store.schedule()
    store.flush()
    store.flush()
    assert store.pending() and len(failures) == 1


def test_emptying_the_text_also_removes_its_companion_files(tmp_path):
    path = tmp_path / "source.txt"
    companion = tmp_path / "translation.json"
    for p in (path, companion):
        p.write_text("old", encoding="utf-8")
    store = Autosave(path, lambda: "", companions=[companion])
    store.schedule()
    store.flush()
    assert not path.exists() and not companion.exists()


def test_a_lone_surrogate_does_not_stop_the_save(tmp_path):
    path = tmp_path / "source.txt"
    store = Autosave(path, lambda: "bad \ud800 char")
    store.schedule()
    store.flush()
    assert store.last_error is None and store.load() == "bad ? char"


def test_the_paused_typing_save_writes_off_the_ui_thread_and_reports_on_it(qtbot, tmp_path, monkeypatch):
    import threading
    import time

    import gui.window.autosave as autosave_module

    writers, reported = [], []
    real_write = autosave_module.write_state_file

    def slow_write(path, data):
        writers.append(threading.get_ident())
        time.sleep(0.2)
        if data == b"refuse":
            raise OSError(28, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(autosave_module, "write_state_file", slow_write)
    path = tmp_path / "source.txt"
    text = {"value": "typed"}
    store = Autosave(path, lambda: text["value"], debounce_ms=10, retry_ms=60_000)
    store.failed.connect(lambda reason: reported.append((reason, threading.get_ident())))
    store.schedule()
    qtbot.waitUntil(lambda: len(writers) == 1, timeout=2000)
    assert writers[0] != threading.get_ident(), "the write ran on the UI thread"
    assert store.pending(), "a write under way is still pending"
    store.flush()  # close while it is being written: waits for it rather than racing it
    assert path.read_text(encoding="utf-8") == "typed" and not store.pending() and len(writers) == 1
    text["value"] = "refuse"
    store.schedule()
    qtbot.waitUntil(lambda: bool(reported), timeout=2000)
    assert "No space" in reported[0][0] and reported[0][1] == threading.get_ident(), "reported on the UI thread"
    assert store.pending() and path.read_text(encoding="utf-8") == "typed"
