"""Edits are the user's: an edited sentence is marked, kept in the session's EditMemory (first in the window's
translation memory), survives a re-translation and a restart, is copied as shown; a changed English sentence gets a
fresh translation. Also the window's Tools menu and reopening a history entry."""

from __future__ import annotations

import json

from PySide6.QtGui import QAction, QGuiApplication

from engine.history.records import HistoryEntry, SentenceRecord
from engine.results import ORIGIN_MEMORY
from gui.review.edit_memory import EditMemory
from gui.review.review_editor import MARK_EDIT
from gui.sentence_view import EDIT_ORIGIN_MEMORY, EDIT_ORIGIN_USER
from tests.gui.fakes import FakeFactory

SOURCE = "Hello world. The model is good. Good morning."


def translate(qtbot, window, text: str | None = None) -> None:
    if text is not None:
        window.source.setPlainText(text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and len(window.target_pane.ranges) > 0, timeout=10_000)


def type_in_sentence(qtbot, window, i: int, keys: str, offset: int = 1) -> None:
    cursor = window.target.textCursor()
    cursor.setPosition(window.target_pane.sentence_range(i)[0] + offset)
    window.target.setTextCursor(cursor)
    window.target.setFocus()
    qtbot.keyClicks(window.target, keys)


def test_edit_memory_is_a_translation_memory_safe_across_threads():
    import threading

    memory = EditMemory()
    memory.remember("Hello.", "你好！")
    memory.remember("  ", "ignored")
    assert memory.lookup("Hello.") == "你好！" and memory.lookup("Bye.") is None and len(memory) == 1
    found: list[str | None] = []
    t = threading.Thread(target=lambda: found.append(memory.lookup("Hello.")))
    t.start()
    t.join()
    assert found == ["你好！"]
    memory.forget("Hello.")
    assert memory.lookup("Hello.") is None


def test_an_edit_survives_translating_again_and_is_marked_as_the_users(qtbot, make_window):
    factory = FakeFactory()
    window = make_window(factory)
    assert window.requests.memory.lookup("x") is None
    translate(qtbot, window, SOURCE)
    edited: list[int] = []
    window.target_pane.sentence_edited.connect(edited.append)
    type_in_sentence(qtbot, window, 1, "QQ")
    assert edited and set(edited) == {1}
    mine = window.target_pane.sentences()[1].text
    assert mine == "这QQ模型词好。"
    marks = [m for m, _, _ in window.target.visible_marks() if m.kind == MARK_EDIT]
    assert [(m.start, m.end) for m in marks] == [window.target_pane.sentence_range(1)]
    assert "You edited this sentence" in marks[0].tooltip
    # The memory the engine asks is the window's chain, the user's edits first
    assert window.requests.memory.lookup("The model is good.") == mine

    # Change another sentence's English and translate again: the edited one comes back as the user wrote it
    window.source.setPlainText("Hello bridge. The model is good. Good morning.")
    translate(qtbot, window)
    options = factory.translator.calls[-1]["options"]
    assert options.memory is window.requests.memory
    result = window.last_result
    assert [s.origin for s in result.sentences][1] == ORIGIN_MEMORY
    texts = [s.text for s in window.target_pane.sentences()]
    assert texts == ["你好桥。", mine, "好早上。"]
    assert window.target_pane.edit_origin(1) == EDIT_ORIGIN_MEMORY and window.target_pane.is_edited(1)
    assert window.target_pane.edit_origin(0) is None
    assert any(m.kind == MARK_EDIT for m, _, _ in window.target.visible_marks())

    # The edited English changed: the new sentence is the model's; the old edit stays for the old English
    window.source.setPlainText("Hello bridge. The model is very good. Good morning.")
    translate(qtbot, window)
    assert window.target_pane.sentences()[1].text == "这模型词词好。"
    assert window.target_pane.edit_origin(1) is None
    assert window.target_pane.edits.lookup("The model is good.") == mine


def test_copy_gives_the_edited_text(qtbot, make_window):
    window = make_window(FakeFactory())
    translate(qtbot, window, SOURCE)
    type_in_sentence(qtbot, window, 0, "Z", offset=0)
    window.copy_result()
    assert QGuiApplication.clipboard().text() == "Z你好世界。这模型词好。好早上。"


def test_the_last_translation_keeps_the_edits_across_a_restart(qtbot, make_window, tmp_path):
    window = make_window(FakeFactory())
    translate(qtbot, window, SOURCE)
    type_in_sentence(qtbot, window, 2, "W")
    saved = tmp_path / "state" / "translation.json"
    # The save runs by itself after a short delay, on the writer thread: the file may not exist yet
    qtbot.waitUntil(lambda: saved.exists() and "W" in json.loads(saved.read_text("utf-8"))["target"], timeout=5000)
    record = json.loads(saved.read_text("utf-8"))
    assert record["target"] == "你好世界。这模型词好。好W早上。"
    assert record["edits"] == [[32, 45, None, "好W早上。"]], "by its place in the source; no English copied"
    window.shutdown()

    factory = FakeFactory()
    again = make_window(factory)
    assert again.target.toPlainText() == "你好世界。这模型词好。好W早上。"
    assert again.target_pane.edits.lookup("Good morning.") == "好W早上。"
    assert not again.target.isReadOnly(), "a restored translation can be edited"
    # Its sentences came back with it: aligned, the user's own marked as theirs
    assert [s.text for s in again.target_pane.sentences()] == ["你好世界。", "这模型词好。", "好W早上。"]
    assert again.target_pane.edit_origin(2) == EDIT_ORIGIN_MEMORY and again.target_pane.edit_origin(0) is None
    assert again.source_pane.sentence_count() == 3
    assert any(m.kind == MARK_EDIT for m, _, _ in again.target.visible_marks())
    # A new edit after the restart is followed like any other
    cursor = again.target.textCursor()
    cursor.setPosition(0)
    again.target.setTextCursor(cursor)
    again.target.setFocus()
    qtbot.keyClicks(again.target, "U")
    again.store.flush()
    record = json.loads((tmp_path / "state" / "translation.json").read_text("utf-8"))
    assert record["edits"] == [[0, 12, None, "U你好世界。"], [32, 45, None, "好W早上。"]]
    assert record["sentences"] == {"source": [0, 12, 13, 31, 32, 45], "target": [0, 6, 6, 12, 12, 17], "read_as": {}}
    translate(qtbot, again)
    assert again.target.toPlainText() == "U你好世界。这模型词好。好W早上。"
    assert again.target_pane.edit_origin(0) == EDIT_ORIGIN_MEMORY
    assert again.target_pane.edit_origin(2) == EDIT_ORIGIN_MEMORY


def test_an_edit_at_close_is_saved_at_once(qtbot, make_window, tmp_path):
    window = make_window(FakeFactory())
    translate(qtbot, window, SOURCE)
    type_in_sentence(qtbot, window, 0, "V")
    window.shutdown()  # before the save delay ran out
    record = json.loads((tmp_path / "state" / "translation.json").read_text("utf-8"))
    assert record["target"].startswith("你V好")


def test_show_history_entry_shows_it_without_translating_and_keeps_its_edits(qtbot, make_window):
    factory = FakeFactory()
    window = make_window(factory)
    calls = len(factory.translator.calls)
    entry = HistoryEntry(
        source="Hello world. Good morning.",
        output="哈喽世界。好早上。",
        pair="en-zh",
        model="fake",
        precision="int8",
        sentences=(
            SentenceRecord("Hello world.", "你好世界。", edited="哈喽世界。"),
            SentenceRecord("Good morning.", "好早上。"),
        ),
        created="2026-12-01T17:40:00Z",
        id=7,
    )
    window.show_history_entry(entry)
    assert window.source.toPlainText() == entry.source
    assert window.target.toPlainText() == entry.output
    assert not window.target.isReadOnly()
    qtbot.wait(50)
    assert len(factory.translator.calls) == calls and not window.translating, "nothing was translated"
    assert window.requests.translated_source == entry.source
    assert window.target_pane.edits.lookup("Hello world.") == "哈喽世界。"
    assert window.target_pane.info.text() == "From history"
    translate(qtbot, window)
    assert window.target_pane.info.text() == ""
    assert window.target.toPlainText() == "哈喽世界。好早上。"
    assert window.target_pane.edit_origin(0) == EDIT_ORIGIN_MEMORY and window.target_pane.edit_origin(1) is None


def test_the_tools_menu_appears_once_something_is_in_it(qtbot, make_window):
    window = make_window(FakeFactory())
    assert window.tools_menu.title() == "T&ools"
    assert not window.tools_menu.menuAction().isVisible()
    action = QAction("&Glossary…", window)
    window.tools_menu.addAction(action)
    assert window.tools_menu.menuAction().isVisible()
    window.tools_menu.removeAction(action)
    qtbot.waitUntil(lambda: not window.tools_menu.menuAction().isVisible(), timeout=2000)
    assert window.view_menu.title() == "&View"
    assert window.underline_action in window.view_menu.actions()


def test_typing_in_the_whole_target_keeps_the_users_text_and_origin(qtbot, make_window):
    window = make_window(FakeFactory())
    translate(qtbot, window, SOURCE)
    type_in_sentence(qtbot, window, 1, "K")
    assert window.target_pane.edit_origin(1) == EDIT_ORIGIN_USER
    # A settings change that redoes the translation keeps the edit too
    from gui.settings import Key

    window.settings.set(Key.BEAMS, 2)
    qtbot.waitUntil(lambda: window.last_result is not None and window.last_result.stats.beams == 2, timeout=5000)
    qtbot.waitUntil(lambda: len(window.target_pane.ranges) > 0, timeout=5000)
    assert window.target_pane.sentences()[1].text == "这K模型词好。"


def test_the_last_translation_file_round_trips_edits_and_sentences_and_drops_damaged_ones(tmp_path):
    from gui.window.last_translation import LastTranslation, SentencePlaces

    store = LastTranslation(tmp_path / "translation.json")
    store.save(
        "Hi. Bye.",
        "嗨。再见！",
        {},
        edits=[(4, 8, None, "再见！")],
        sentences=SentencePlaces((0, 3, 4, 8), (0, 2, 2, 5), {1: "Bye ."}),
    )
    saved = store.load()
    assert saved.edits == ((4, 8, None, "再见！"),)
    assert saved.sentences.rows() == [(0, 3, 0, 2, None), (4, 8, 2, 5, "Bye .")]
    record = json.loads((tmp_path / "translation.json").read_text("utf-8"))
    record["edits"] = [[4, "8", None, "x"]]
    record["sentences"]["target"] = [0, 2, 2, -5]
    (tmp_path / "translation.json").write_text(json.dumps(record), "utf-8")
    damaged = store.load()
    assert damaged is not None and damaged.target == "嗨。再见！"
    assert damaged.edits == () and damaged.sentences is None


def test_the_program_replacing_the_text_is_not_an_edit(qtbot, make_window):
    window = make_window(FakeFactory())
    translate(qtbot, window, SOURCE)
    edited: list[int] = []
    changed: list[bool] = []
    window.target_pane.sentence_edited.connect(edited.append)
    window.target_pane.text_edited.connect(lambda: changed.append(True))
    window.target.setPlainText("别的。")
    window.target.clear()
    assert edited == [] and changed == [] and len(window.target_pane.edits) == 0
    assert window.target_pane.sentences() == []
    translate(qtbot, window)  # the window clears the pane when a request starts
    assert len(window.target_pane.edits) == 0 and edited == []
    assert window.target.toPlainText() == "你好世界。这模型词好。好早上。"


def test_the_english_is_kept_only_for_sentences_read_differently_from_the_source(qtbot, make_window, tmp_path):
    from engine.results import SentenceResult, Translation

    window = make_window(FakeFactory())
    source = "Hello\nworld. Good morning."
    window.source.setPlainText(source)
    window.requests.adopt(source, "你好世界。好早上。")
    window.target.setPlainText("你好世界。好早上。")
    rows = [
        SentenceResult(0, "Hello world.", (0, 12), (0, 5)),  # wrapped lines joined: not the source's characters
        SentenceResult(1, "Good morning.", (13, 26), (5, 9)),
    ]
    window.target_pane.set_result(Translation(text="你好世界。好早上。", sentences=rows), source)
    type_in_sentence(qtbot, window, 0, "R")
    window.store.flush()
    record = json.loads((tmp_path / "state" / "translation.json").read_text("utf-8"))
    assert record["sentences"]["read_as"] == {"0": "Hello world."}
    assert record["edits"] == [[0, 12, "Hello world.", "你R好世界。"]]
