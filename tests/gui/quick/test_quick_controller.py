"""QuickTranslate: every trigger reaches the popup and the worker's popup channel; latest wins."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData

from engine.options import TranslationOptions
from engine.results import Translation
from gui.quick.clipboard_text import MAX_CHARS
from gui.quick.controller import CHANNEL, QuickSettings, QuickTranslate
from gui.quick.shortcut import ShortcutResult

from .fakes import FakeBackend, FakeClock, FakePopupWorker

OPTIONS = TranslationOptions(beams=2, variant="hant")


@pytest.fixture
def quick(qtbot, clipboard):
    def make(settings: QuickSettings | None = None, backend: FakeBackend | None = None):
        worker = FakePopupWorker()
        clock = FakeClock()
        q = QuickTranslate(worker, lambda: OPTIONS, settings, backend=backend or FakeBackend(), clock=clock)
        qtbot.addWidget(q.popup)
        return q, worker, clock

    return make


def test_the_shortcut_translates_the_clipboard_in_the_popup_channel(quick, clipboard):
    q, worker, _ = quick()
    clipboard.setText("Thank you very much.")
    q.backend.press()
    assert worker.requests == [(1, "Thank you very much.", OPTIONS, CHANNEL)]
    assert q.popup.isVisible() and q.popup.state == "translating"


def test_streamed_pieces_then_the_final_text(quick, clipboard):
    q, worker, _ = quick()
    q.show_text("Thank you very much.")
    rid = worker.last[0]
    worker.translation_progress.emit(rid, "非常", 0, 1)
    worker.translation_progress.emit(rid, "感谢", 0, 1)
    assert q.popup.result.toPlainText() == "非常感谢"
    worker.translation_finished.emit(rid, Translation(text="非常感谢。"))
    assert q.popup.result.toPlainText() == "非常感谢。" and q.popup.state == "done"


def test_latest_wins_reports_for_the_replaced_request_are_ignored(quick):
    q, worker, _ = quick()
    q.show_text("first text")
    first = worker.last[0]
    q.show_text("second text")
    second = worker.last[0]
    worker.translation_progress.emit(first, "旧", 0, 1)
    worker.translation_finished.emit(first, Translation(text="旧的", cancelled=True))
    worker.translation_failed.emit(first, "old failure")
    assert q.popup.result.toPlainText() == "" and q.popup.source_text == "second text"
    worker.translation_finished.emit(second, Translation(text="第二"))
    assert q.popup.result.toPlainText() == "第二"


def test_a_cancelled_result_for_the_current_id_does_not_end_it(quick):
    q, worker, _ = quick()
    q.show_text("x y")
    worker.translation_finished.emit(worker.last[0], Translation(text="", cancelled=True))
    assert q.popup.state == "translating"


def test_failure_is_shown_in_the_popup(quick):
    q, worker, _ = quick()
    q.show_text("x y")
    worker.translation_failed.emit(worker.last[0], "The model is not loaded.")
    assert q.popup.state == "failed" and "not loaded" in q.popup.result.toPlainText()


def test_nothing_to_translate_is_a_message_not_a_request(quick, clipboard):
    q, worker, _ = quick()
    clipboard.clear()
    q.trigger()
    assert worker.requests == [] and q.popup.isVisible() and q.popup.state == "problem"
    assert "Nothing selected" in q.popup.result.toPlainText()
    image = QMimeData()
    image.setData("image/png", b"\x89PNG")
    clipboard.setMimeData(image)
    q.trigger()
    assert worker.requests == [] and "no text" in q.popup.result.toPlainText()


def test_huge_text_is_refused_but_can_go_to_the_window(quick, qtbot):
    q, worker, _ = quick()
    q.show_text("word " * MAX_CHARS)
    assert worker.requests == [] and "too long" in q.popup.result.toPlainText()
    with qtbot.waitSignal(q.open_in_window) as sig:
        q.popup.window_button.click()
    assert len(sig.args[0]) == 5 * MAX_CHARS


def test_a_problem_after_a_request_drops_that_request(quick):
    q, worker, _ = quick()
    q.show_text("x y")
    rid = worker.last[0]
    q.show_text("")
    worker.translation_finished.emit(rid, Translation(text="late"))
    assert q.popup.state == "problem"


def test_copy_twice_opens_the_popup(quick, clipboard):
    _q, worker, clock = quick(QuickSettings(copy_twice=True))
    clipboard.setText("Good morning")
    clock.advance(0.2)
    clipboard.setText("Good morning")
    assert [r[1] for r in worker.requests] == ["Good morning"]


def test_copy_twice_is_off_unless_chosen(quick, clipboard):
    _q, worker, clock = quick()
    clipboard.setText("Good morning")
    clock.advance(0.2)
    clipboard.setText("Good morning")
    assert worker.requests == []


def test_clipboard_watching_translates_new_text_and_pauses(quick, clipboard, qtbot):
    q, worker, _ = quick(QuickSettings(clipboard_watch=True))
    q.watcher._timer.setInterval(10)
    clipboard.setText("Hello world")
    qtbot.waitUntil(lambda: len(worker.requests) == 1, timeout=2000)
    q.set_watch_paused(True)
    clipboard.setText("Not while paused")
    qtbot.wait(150)
    assert [r[1] for r in worker.requests] == ["Hello world"]
    q.set_watch_paused(False)
    clipboard.setText("Resumed text")
    qtbot.waitUntil(lambda: len(worker.requests) == 2, timeout=2000)


def test_watching_and_copy_twice_together_open_one_request(quick, clipboard, qtbot):
    q, worker, clock = quick(QuickSettings(clipboard_watch=True, copy_twice=True))
    q.watcher._timer.setInterval(10)
    clipboard.setText("Thank you")
    clock.advance(0.1)
    clipboard.setText("Thank you")
    qtbot.wait(150)
    assert [r[1] for r in worker.requests] == ["Thank you"]


def test_shortcut_registered_once_and_again_only_when_changed(quick, qtbot):
    backend = FakeBackend()
    q, _, _ = quick(QuickSettings(shortcut="Ctrl+Alt+T"), backend)
    assert backend.registered == ["Ctrl+Alt+T"] and q.shortcut_result.ok
    q.apply(QuickSettings(shortcut="Ctrl+Alt+T", copy_twice=True))
    assert backend.registered == ["Ctrl+Alt+T"]
    with qtbot.waitSignal(q.shortcut_changed) as sig:
        q.apply(QuickSettings(shortcut="Ctrl+Shift+Y"))
    assert backend.registered[-1] == "Ctrl+Shift+Y" and sig.args[0].ok
    q.apply(QuickSettings(shortcut=""))
    assert backend.unregistered >= 1


def test_conflicts_and_bad_shortcuts_are_reported(quick):
    q, _, _ = quick(backend=FakeBackend(ShortcutResult("conflict", "taken by Crow Translate")))
    assert q.shortcut_result.status == "conflict" and "Crow" in q.shortcut_result.reason
    result = q.apply(QuickSettings(shortcut="T"))
    assert result.status == "invalid" and "Ctrl, Alt or Meta" in result.reason


def test_open_in_window_is_forwarded(quick, qtbot):
    q, _worker, _ = quick()
    q.show_text("Thank you very much.")
    with qtbot.waitSignal(q.open_in_window) as sig:
        q.popup.window_button.click()
    assert sig.args == ["Thank you very much."]


def test_shutdown_frees_the_shortcut(quick):
    backend = FakeBackend()
    q, _, _ = quick(backend=backend)
    q.shutdown()
    assert backend.unregistered == 1


def test_reports_from_the_worker_thread_are_handled_on_the_gui_thread(quick, qtbot):
    import threading

    q, worker, _ = quick()
    q.show_text("Thank you very much.")
    rid = worker.last[0]
    seen: list[int] = []
    original = q.popup.append
    q.popup.append = lambda delta: (seen.append(threading.get_ident()), original(delta))
    emitter = threading.Thread(
        target=lambda: (
            worker.translation_progress.emit(rid, "非常", 0, 1),
            worker.translation_finished.emit(rid, Translation(text="非常感谢。")),
        )
    )
    emitter.start()
    emitter.join()
    qtbot.waitUntil(lambda: q.popup.state == "done", timeout=2000)
    assert seen == [threading.get_ident()] and q.popup.result.toPlainText() == "非常感谢。"
