"""Documents in the window, end to end on the worker thread with fake jobs: File → Open document…, files dropped on
the window or on a pane, the panel following the worker, typing served between a document's steps, the options of
the moment, a swap while a document runs, closing mid-document, and the wording in Chinese."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import QApplication

from gui.documents.document_queue import State
from gui.i18n import install_translators
from gui.settings import Key
from tests.gui.document_fakes import FakeJobs, RecordingFactory, use_fake_formats
from tests.gui.fakes import FakeFactory, PairFactory, PairLocator


@pytest.fixture(autouse=True)
def fake_formats(monkeypatch):
    use_fake_formats(monkeypatch)


def make(tmp_path: Path, *names: str) -> list[Path]:
    out = []
    for name in names:
        (tmp_path / name).write_text("Hello world.\n", encoding="utf-8")
        out.append(tmp_path / name)
    return out


def drop(widget, paths: list[Path] | None = None, text: str | None = None) -> bool:
    """Drag `paths` (as file URLs) or `text` onto `widget` and drop it there (Qt delivers a drop only to the widget
    that accepted the drag's entry); whether the drop was accepted."""
    mime = QMimeData()
    if paths is not None:
        mime.setUrls([QUrl.fromLocalFile(str(p)) for p in paths])
    if text is not None:
        mime.setText(text)
    args = (Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    enter = QDragEnterEvent(QPoint(5, 5), *args)
    QApplication.sendEvent(widget, enter)
    event = QDropEvent(QPointF(5, 5), *args)
    QApplication.sendEvent(widget, event)
    return enter.isAccepted() and event.isAccepted()


def states(window) -> list[State]:
    return [e.state for e in window.documents.entries.values()]


def test_file_open_document_has_its_own_shortcut_and_queues_the_chosen_files(qtbot, make_window, tmp_path, monkeypatch):
    jobs = FakeJobs(steps=2)
    window = make_window(FakeFactory(), document_job=jobs)
    assert window.file_menu.actions()[0] is window.open_document_action
    assert window.open_document_action.text() == "Open &document…"
    assert window.open_document_action.shortcut() == QKeySequence("Ctrl+O")
    every = [s for a in window.findChildren(type(window.open_document_action)) for s in a.shortcuts() if a.isEnabled()]
    assert every.count(QKeySequence("Ctrl+O")) == 1, "no other action uses Ctrl+O"
    assert not window.documents_panel.isVisible()
    a, b = make(tmp_path, "a.txt", "b.md")
    monkeypatch.setattr(window.documents_panel, "ask_documents", lambda: [str(a), str(b)])
    window.open_document_action.trigger()
    assert window.documents_panel.isVisible()
    qtbot.waitUntil(lambda: states(window) == [State.DONE, State.DONE], timeout=5000)
    assert [j.source for j in jobs.built] == [a, b]
    assert (tmp_path / "a.zh.txt").exists() and (tmp_path / "b.zh.md").exists()
    rows = list(window.documents_panel.rows.values())
    assert rows[0].open_button.isVisible() and rows[0].detail.text() == "Saved as a.zh.txt"
    assert window.documents_panel.toggleViewAction() in window.view_menu.actions()


def test_files_dropped_on_the_window_or_a_pane_are_queued_and_text_drops_still_edit(qtbot, make_window, tmp_path):
    jobs = FakeJobs(steps=1)
    window = make_window(FakeFactory(), document_job=jobs)
    window.source.setPlainText("keep me")
    a, b, c = make(tmp_path, "a.txt", "b.docx", "c.txt")
    assert drop(window, [a, b])
    assert drop(window.source.viewport(), [c])
    assert window.source.toPlainText() == "keep me", "a dropped .txt is a document, not pasted into the pane"
    qtbot.waitUntil(lambda: len(window.documents.entries) == 3 and window.documents.active() == 0, timeout=5000)
    assert [e.source for e in window.documents.entries.values()] == [a, b, c]
    assert window.documents_panel.isVisible()
    assert drop(window.source.viewport(), text="plain words ")  # a text drag is the editor's business, as before
    assert len(window.documents.entries) == 3
    assert window.source.toPlainText() == "plain words keep me"


def test_typing_is_translated_between_the_steps_of_a_document(qtbot, make_window, tmp_path):
    events: list = []
    jobs = FakeJobs(steps=3, hold=threading.Semaphore(0), events=events)
    window = make_window(RecordingFactory(events), document_job=jobs)
    (a,) = make(tmp_path, "long.txt")
    window.add_documents([a])
    jobs.release()
    qtbot.waitUntil(lambda: ("step", "long.txt", 0) in events, timeout=5000)
    (entry,) = window.documents.entries.values()
    qtbot.waitUntil(lambda: entry.progress is not None, timeout=5000)
    row = window.documents_panel.rows[entry.key]
    assert row.state.text() == "Translating" and row.bar.text() == "4 / 12 parts"
    window.source.setPlainText("hello world")
    window.translate()
    jobs.release(2)
    qtbot.waitUntil(lambda: entry.state is State.DONE and not window.translating, timeout=5000)
    assert events == [
        ("step", "long.txt", 0),
        ("step", "long.txt", 1),
        ("interactive", "hello world"),
        ("step", "long.txt", 2),
    ]
    assert window.target.toPlainText() == "你好世界"


def test_a_document_keeps_the_options_it_was_queued_with(qtbot, make_window, tmp_path, settings):
    jobs = FakeJobs(steps=2, hold=threading.Semaphore(0))
    window = make_window(FakeFactory(), document_job=jobs)
    settings.set(Key.BEAMS, 2)
    a, b = make(tmp_path, "a.txt", "b.txt")
    window.add_documents([a])
    settings.set(Key.BEAMS, 3)
    window.add_documents([b])
    jobs.release(4)
    qtbot.waitUntil(lambda: window.documents.active() == 0, timeout=5000)
    assert [j.translation.beams for j in jobs.built] == [2, 3]


def test_cancel_in_the_panel_stops_the_running_file_and_drops_a_waiting_one(qtbot, make_window, tmp_path):
    jobs = FakeJobs(steps=3, hold=threading.Semaphore(0))
    window = make_window(FakeFactory(), document_job=jobs)
    a, b, c = make(tmp_path, "a.txt", "b.txt", "c.txt")
    ka, kb, kc = window.documents.add([a, b, c])
    jobs.release()
    qtbot.waitUntil(lambda: window.documents.entries[ka].progress is not None, timeout=5000)
    rows = window.documents_panel.rows
    rows[kb].cancel_button.click()
    assert window.documents.entries[kb].state is State.CANCELLED, "a waiting file is dropped at once"
    rows[ka].cancel_button.click()
    qtbot.waitUntil(lambda: window.documents.entries[ka].state is State.CANCELLED, timeout=2000)
    assert rows[ka].state.text() == "Cancelled" and not (tmp_path / "a.zh.txt").exists()
    jobs.release(3)
    qtbot.waitUntil(lambda: window.documents.entries[kc].state is State.DONE, timeout=5000)
    assert [j.source.name for j in jobs.built] == ["a.txt", "c.txt"]


def test_a_swap_while_a_document_runs_stops_it_and_says_how_to_go_on(qtbot, make_window, tmp_path):
    jobs = FakeJobs(steps=4, hold=threading.Semaphore(0))
    locator = PairLocator(tmp_path)
    window = make_window(PairFactory(), locator, pair_lister=locator.pairs, document_job=jobs)
    (a,) = make(tmp_path, "a.txt")
    (key,) = window.documents.add([a])
    jobs.release()
    qtbot.waitUntil(lambda: window.documents.entries[key].progress is not None, timeout=5000)
    window.swap()
    jobs.release()
    qtbot.waitUntil(lambda: window.documents.entries[key].state is State.FAILED, timeout=5000)
    assert (
        window.documents_panel.rows[key]
        .detail.text()
        .startswith("Stopped because the translation direction changed. Switch back to English → Chinese")
    )
    qtbot.waitUntil(lambda: window.direction == "zh-en", timeout=5000)
    window.documents_panel.rows[key].retry_button.click()  # now for the direction shown: zh→en
    jobs.release(4)
    qtbot.waitUntil(lambda: window.documents.entries[key].state is State.DONE, timeout=5000)
    assert jobs.built[-1].target_lang == "en" and (tmp_path / "a.en.txt").exists()


def test_closing_the_window_mid_document_stops_promptly(qtbot, make_window, tmp_path):
    jobs = FakeJobs(steps=1000, step_s=0.01)  # 10 s if it ran to the end
    window = make_window(FakeFactory(), document_job=jobs)
    window.add_documents(make(tmp_path, "big.txt"))
    qtbot.waitUntil(lambda: bool(jobs.built) and jobs.built[0].steps_run > 0, timeout=5000)
    started = time.perf_counter()
    window.close()
    assert not window.engine.thread.isRunning() and time.perf_counter() - started < 3.0
    assert not (tmp_path / "big.zh.txt").exists()


def test_the_document_strings_are_translated(qtbot, make_window, tmp_path):
    install_translators("zh_CN")
    window = make_window(FakeFactory(), document_job=FakeJobs())
    assert window.open_document_action.text() == "打开文档(&D)…"
    assert window.documents_panel.windowTitle() == "文档"
    assert window.documents_panel.add_button.text() == "添加文档…"


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_panels_mnemonics_do_not_clash_with_the_windows(qtbot, make_window, tmp_path, language):
    from tests.gui.window.test_window_details import duplicates, window_scope

    install_translators(language)
    window = make_window(FakeFactory(), document_job=FakeJobs())
    window.add_documents(make(tmp_path, "a.txt"))
    assert window.documents_panel.isVisible()
    texts = window_scope(window)
    assert window.documents_panel.name_label.text() in texts
    assert duplicates(texts) == {}
