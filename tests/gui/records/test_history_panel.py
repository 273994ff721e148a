"""HistoryPanel and attach_history: the list, search as you type, reopen, delete (Del), export, clear with a
confirmation, the switch and the size limit, View → History (Ctrl+H), and a store that could not be opened."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox

from engine.history.records import HistoryEntry, SentenceRecord
from engine.history.store import HistoryStore
from gui.records.history_panel import EDITED_MARK, attach_history, open_history_store
from gui.settings import Key
from tests.gui.history_fakes import HistoryWindow

SOURCE = "I like the bridge. Hello world."
PAIRS = [("I like the bridge.", "我喜欢这座桥。"), ("Hello world.", "你好世界。")]


@pytest.fixture
def store(tmp_path: Path):
    with HistoryStore(tmp_path / "history.sqlite3") as s:
        yield s


@pytest.fixture
def window(qtbot, settings):
    w = HistoryWindow(settings)
    qtbot.addWidget(w)
    w.show()
    return w


def add(store: HistoryStore, source: str, output: str, edited: bool = False) -> int:
    sentence = SentenceRecord(source, output, edited=output + "！" if edited else None)
    return store.add(HistoryEntry(source, output, "en-zh", "m", "int8", sentences=(sentence,)))


def shown_ids(panel) -> list[int]:
    return [e.id for e in panel.entries()]


def open_panel(window, store, problem=""):
    panel = attach_history(window, store, problem)
    panel.show()
    panel.refresh()
    return panel


def test_view_menu_toggle_with_ctrl_h(window, store, qtbot) -> None:
    panel = attach_history(window, store)
    assert not panel.isVisible()
    action = panel.toggleViewAction()
    assert action in window.view_menu.actions()
    assert action.shortcut().toString() == "Ctrl+H"
    qtbot.keyClick(window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    assert panel.isVisible()
    qtbot.keyClick(window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    assert not panel.isVisible()


def test_a_window_without_a_view_menu_gets_one(qtbot, settings, store) -> None:
    w = HistoryWindow(settings, with_view_menu=False)
    qtbot.addWidget(w)
    panel = attach_history(w, store)
    assert panel.toggleViewAction() in w.view_menu.actions()
    assert w.view_menu in [a.menu() for a in w.menuBar().actions()]


def test_rows_newest_first_with_the_edited_mark(window, store) -> None:
    a = add(store, "The river is long.", "这条河很长。")
    b = add(store, "Hello world.", "你好世界。", edited=True)
    panel = open_panel(window, store)
    assert shown_ids(panel) == [b, a]
    first, second = (panel.list.item(i).text().split("\n") for i in range(2))
    assert first[1:] == ["Hello world.", "你好世界。"] and EDITED_MARK in first[0]
    assert second[1:] == ["The river is long.", "这条河很长。"] and EDITED_MARK not in second[0]


def test_a_finished_translation_shows_up(window, store, qtbot) -> None:
    panel = open_panel(window, store)
    assert panel.entries() == [] and panel.empty.isVisible()
    window.finish(SOURCE, PAIRS)
    qtbot.waitUntil(lambda: len(panel.entries()) == 1)
    assert panel.entries()[0].output == "我喜欢这座桥。你好世界。"
    assert not panel.empty.isVisible()


def test_search_as_you_type_is_debounced(window, store, qtbot) -> None:
    add(store, "The river is long.", "这条河很长。")
    bridge = add(store, "I like the bridge.", "我喜欢这座桥。")
    panel = open_panel(window, store)
    searches: list[str] = []
    real = store.search
    store.search = lambda q, limit=50: searches.append(q) or real(q, limit)  # type: ignore[method-assign]
    qtbot.keyClicks(panel.search, "brid")  # (QTest types Latin-1 only)
    assert searches == []  # not on every key
    qtbot.waitUntil(lambda: shown_ids(panel) == [bridge])
    assert searches == ["brid"]
    panel.search.setText("喜欢")  # a Chinese word inside the sentence
    qtbot.waitUntil(lambda: searches[-1] == "喜欢")
    assert shown_ids(panel) == [bridge]
    panel.search.setText('NEAR "(')
    qtbot.waitUntil(lambda: panel.entries() == [])
    assert panel.empty.isVisible() and panel.empty.text() == "Nothing in the history matches."


def test_reopen_hands_the_entry_to_the_window(window, store, qtbot) -> None:
    entry_id = add(store, "Hello world.", "你好世界。")
    panel = open_panel(window, store)
    panel.list.setCurrentRow(0)
    assert panel.reopen_button.isEnabled()
    qtbot.mouseClick(panel.reopen_button, Qt.MouseButton.LeftButton)
    assert [e.id for e in window.shown] == [entry_id]
    assert window.shown[0].sentences[0].source == "Hello world."
    panel.list.setFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_Return)  # Enter reopens too
    assert len(window.shown) == 2


def test_reopen_is_off_for_a_window_that_cannot_show_entries(qtbot, settings, store) -> None:
    w = HistoryWindow(settings, with_reopen=False)
    qtbot.addWidget(w)
    w.show()
    add(store, "Hello world.", "你好世界。")
    panel = open_panel(w, store)
    panel.list.setCurrentRow(0)
    assert not panel.reopen_button.isEnabled()
    panel.reopen_selected()  # nothing to call: no error either


def test_delete_with_the_del_key(window, store, qtbot) -> None:
    a = add(store, "One.", "一。")
    b = add(store, "Two.", "二。")
    c = add(store, "Three.", "三。")
    panel = open_panel(window, store)
    panel.list.item(0).setSelected(True)
    panel.list.item(2).setSelected(True)
    panel.list.setFocus()
    qtbot.keyClick(panel.list, Qt.Key.Key_Delete)
    assert shown_ids(panel) == [b]
    assert store.get(a) is None and store.get(c) is None


def test_export_writes_the_chosen_format(window, store, tmp_path, monkeypatch) -> None:
    add(store, "Hello world.", "你好世界。")
    panel = open_panel(window, store)
    target = tmp_path / "exported"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(target), "TSV (*.tsv)")))
    panel.export()
    written = tmp_path / "exported.tsv"
    assert written.read_text(encoding="utf-8").splitlines()[0].split("\t")[:2] == ["id", "created"]
    assert window.statusBar().currentMessage().startswith("Exported 1 translation")

    named = tmp_path / "mine.jsonl"  # the suffix typed wins over the filter left selected
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(named), "CSV (*.csv)")))
    panel.export()
    assert json.loads(named.read_text(encoding="utf-8").splitlines()[0])["source"] == "Hello world."

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: ("", "")))
    panel.export()  # cancelled: nothing happens


def test_a_failed_export_is_shown_in_the_panel(window, store, tmp_path, monkeypatch) -> None:
    add(store, "Hello world.", "你好世界。")
    panel = open_panel(window, store)
    folder = tmp_path / "no" / "such" / "folder" / "x.jsonl"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(folder), "")))
    panel.export()
    assert panel.message.isVisible() and "could not be exported" in panel.message.text()


def test_clear_all_asks_first(window, store, monkeypatch) -> None:
    add(store, "One.", "一。")
    add(store, "Two.", "二。")
    panel = open_panel(window, store)
    asked: list[str] = []

    def answer(button):
        def ask(parent, title, text, *args):
            asked.append(text)
            return button

        return staticmethod(ask)

    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Cancel))
    panel.clear_all()
    assert len(panel.entries()) == 2 and "2" in asked[0]
    monkeypatch.setattr(QMessageBox, "question", answer(QMessageBox.StandardButton.Yes))
    panel.clear_all()
    assert panel.entries() == [] and store.count() == 0


def test_the_switch_and_the_limit_are_the_settings(window, store, settings, qtbot) -> None:
    panel = open_panel(window, store)
    assert panel.keep_box.isChecked() and panel.limit_box.value() == 10_000
    panel.keep_box.setChecked(False)
    assert settings.get(Key.HISTORY_ENABLED) is False
    assert "off" in panel.empty.text()
    window.finish(SOURCE, PAIRS)
    window.history_recorder.wait()
    assert store.count() == 0
    panel.limit_box.setValue(500)
    panel.limit_box.editingFinished.emit()
    assert settings.get(Key.HISTORY_LIMIT) == 500
    window.history_recorder.wait()
    assert store.max_entries == 500
    settings.set(Key.HISTORY_ENABLED, True)  # changed elsewhere (the Settings dialog): the panel follows
    assert panel.keep_box.isChecked()
    settings.set(Key.HISTORY_LIMIT, 2000)
    assert panel.limit_box.value() == 2000


def test_a_store_that_failed_shows_why_and_the_window_goes_on(window, tmp_path) -> None:
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as s:
        s.add(HistoryEntry("A.", "甲。", "en-zh", "m", "int8"))
    import sqlite3

    db = sqlite3.connect(path)
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    store, problem = open_history_store(path)
    assert store is None and "newer Qiao" in str(problem)
    panel = open_panel(window, store, problem)
    assert panel.message.isVisible() and "written by a newer version of Qiao" in panel.message.text()
    assert not panel.search.isEnabled() and not panel.list.isEnabled()
    assert window.history_recorder is None
    window.finish(SOURCE, PAIRS)  # nothing records, nothing breaks


def test_a_damaged_store_is_replaced_and_said_once(window, tmp_path, qtbot) -> None:
    path = tmp_path / "history.sqlite3"
    path.write_bytes(os.urandom(4096))
    store, problem = open_history_store(path)
    assert store is not None and "damaged" in str(problem)
    panel = open_panel(window, store, problem)
    assert panel.message.isVisible() and "a new, empty one was started" in panel.message.text()
    assert str(problem.moved_to) in panel.message.text()
    window.finish(SOURCE, PAIRS)
    qtbot.waitUntil(lambda: len(panel.entries()) == 1)  # the fresh history works
    store.close()


def test_an_unusable_folder_is_worded_for_a_person(window, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    store, problem = open_history_store(blocker / "history.sqlite3")  # its folder cannot be made
    assert store is None and isinstance(problem, OSError)
    panel = open_panel(window, store, problem)
    assert panel.message.text().startswith("The history is not available: ")


def test_the_interface_language_retranslates(window, store, qapp) -> None:
    from gui.i18n import install_translators

    panel = open_panel(window, store)
    install_translators("zh_CN")
    try:
        assert panel.windowTitle()  # untranslated strings stay English until the .ts files have them
    finally:
        install_translators("en")
    assert panel.windowTitle() == "History"


def test_on_the_real_window(make_window, store, qtbot) -> None:
    """attach_history on MainWindow: View → History is there, a finished translation is kept with its model, and
    the store's memory is in the request's options."""
    from tests.gui.fakes import FakeFactory

    window = make_window(FakeFactory())
    panel = attach_history(window, store)
    assert panel.toggleViewAction() in window.view_menu.actions()
    window.source.setPlainText("hello world")
    window.translate()
    qtbot.waitUntil(lambda: store.count() == 1, timeout=5000)
    [entry] = store.recent()
    assert (entry.source, entry.output, entry.pair) == ("hello world", window.target.toPlainText(), "en-zh")
    assert entry.model == window.model.model_id and entry.precision == window.model.precision
    store.remember("en-zh", "hello world", "你好，世界")
    assert window.requests.options().memory.lookup("hello world") == "你好，世界"
    window.history_recorder.close()
