"""Nothing the user waited for is lost: the last finished Chinese comes back with its English after a crash, is
marked out of date when the English changed, and a state folder that cannot be written is reported once."""

from __future__ import annotations

import json
import threading
import time

from PySide6.QtCore import QDateTime, QLocale
from PySide6.QtWidgets import QPlainTextEdit

from gui.settings import Key, Settings
from gui.window.last_translation import LastTranslation
from tests.gui.event_loop_ticks import gaps as tick_gaps
from tests.gui.event_loop_ticks import tick_recorder
from tests.gui.fakes import FakeFactory, fake_translate_text

SOURCE = "Hello world.\nGood morning bridge."


def wait_done(qtbot, window, timeout: int = 10_000) -> None:
    qtbot.waitUntil(lambda: not window.translating, timeout=timeout)


def translated_window(qtbot, make_window, text: str = SOURCE):
    window = make_window(FakeFactory())
    window.source.setPlainText(text)
    window.translate()
    wait_done(qtbot, window)
    assert window.target.toPlainText() == fake_translate_text(text)
    window.store.flush()  # the translation's file is written on the session writer thread
    window.autosave.flush()
    return window


def test_a_finished_translation_comes_back_after_a_crash_marked_restored(qtbot, make_window, tmp_path):
    translated_window(qtbot, make_window)
    record = json.loads((tmp_path / "state" / "translation.json").read_text(encoding="utf-8"))
    assert record["target"] == fake_translate_text(SOURCE) and record["options"]["precision"] == "int8"
    factory = FakeFactory()
    again = make_window(factory)  # a crash: the first window never shut down
    assert again.source.toPlainText() == SOURCE
    assert again.target.toPlainText() == fake_translate_text(SOURCE)
    assert "Restored" in again.target_pane.info.text()
    assert "was restored" in again.status_message() and "loaded" in again.status_message()
    finished = QDateTime.fromMSecsSinceEpoch(round(record["finished_at"] * 1000))
    assert QLocale().toString(finished.time(), QLocale.FormatType.ShortFormat) in again.status_message(), "when"
    assert again.copy_button.isEnabled()
    assert factory.built[-1].calls == [], "nothing re-translated: the restored text is current"


def test_a_restored_translation_is_redone_when_a_setting_changes(qtbot, make_window, settings):
    translated_window(qtbot, make_window)
    again = make_window(FakeFactory())
    settings.set(Key.VARIANT, "hant")
    qtbot.waitUntil(lambda: again.target.toPlainText() == fake_translate_text(SOURCE, "hant"), timeout=5000)
    assert again.target_pane.info.text() == ""


def test_english_changed_since_shows_the_old_chinese_marked_out_of_date(qtbot, make_window, tmp_path):
    translated_window(qtbot, make_window)
    (tmp_path / "state" / "source.txt").write_text(SOURCE + " More words.", encoding="utf-8")
    factory = FakeFactory()
    again = make_window(factory)
    assert again.target.toPlainText() == fake_translate_text(SOURCE)
    assert "Out of date" in again.target_pane.info.text() and "Press Translate" in again.status_message()
    assert factory.built[-1].calls == [], "not re-translated unasked (translate as you type is off)"
    again.translate()
    wait_done(qtbot, again)
    assert again.target.toPlainText() == fake_translate_text(SOURCE + " More words.")
    assert again.target_pane.info.text() == ""


def test_another_script_since_counts_as_out_of_date(qtbot, make_window, tmp_path, settings):
    translated_window(qtbot, make_window)
    other = Settings(tmp_path / "config" / "other.ini")
    other.set(Key.VARIANT, "hant")
    again = make_window(FakeFactory(), settings_obj=other)
    assert "Out of date" in again.target_pane.info.text()


def test_with_translate_as_you_type_on_a_changed_english_is_translated_once_the_model_is_ready(
    qtbot, make_window, tmp_path, settings
):
    translated_window(qtbot, make_window)
    (tmp_path / "state" / "source.txt").write_text("Hello bridge.", encoding="utf-8")
    settings.set(Key.LIVE_TRANSLATE, True)
    factory = FakeFactory(load_delay=0.3)
    again = make_window(factory, wait_ready=False)
    assert again.target.toPlainText() == fake_translate_text(SOURCE), "the old text stays while the model loads"
    qtbot.waitUntil(lambda: again.target.toPlainText() == fake_translate_text("Hello bridge."), timeout=5000)
    assert [c["text"] for c in factory.built[-1].calls] == ["Hello bridge."]


def test_a_cancelled_translation_is_not_kept_as_if_complete(qtbot, make_window, tmp_path):
    translated_window(qtbot, make_window)
    saved = (tmp_path / "state" / "translation.json").read_bytes()
    slow = make_window(FakeFactory(token_delay=0.01))
    slow.source.setPlainText("\n".join(["bridge bridge bridge."] * 200))
    slow.translate()
    qtbot.waitUntil(lambda: len(slow.target.toPlainText()) >= 5, timeout=5000)
    slow.cancel()
    wait_done(qtbot, slow)
    assert slow.last_result.cancelled
    assert (tmp_path / "state" / "translation.json").read_bytes() == saved, "the partial text was saved"


def test_clearing_the_text_forgets_the_saved_translation(qtbot, make_window, tmp_path):
    window = translated_window(qtbot, make_window)
    window.clear()
    window.autosave.flush()
    assert not (tmp_path / "state" / "translation.json").exists()
    again = make_window(FakeFactory())
    assert again.source.toPlainText() == "" and again.target.toPlainText() == ""


def test_a_state_folder_that_cannot_be_written_is_reported_once_and_saving_resumes(qtbot, make_window, tmp_path):
    """The tests run as root, who may write into a chmod 0500 folder; a file where the folder should be makes the
    OS refuse for everyone (NotADirectoryError / FileExistsError), like a read-only folder does for a user."""
    state = tmp_path / "state"
    state.write_text("a file in the way", encoding="utf-8")
    window = make_window(FakeFactory())
    for word in ("Hello", " world", " again"):
        qtbot.keyClicks(window.source, word)
        window.autosave.flush()
    notices = [m for m in window.notice.messages() if "not being saved" in m]
    assert len(notices) == 1 and str(state) in notices[0], window.notice.messages()
    assert window.autosave.pending()
    state.unlink()
    window.notice.dismiss()
    qtbot.keyClicks(window.source, "!")
    window.autosave.flush()
    assert (state / "source.txt").read_text(encoding="utf-8") == "Hello world again!"
    assert window.notice.messages() == [], "nothing more to say once saving works"


def test_opening_a_large_autosave_copies_the_document_once_and_counts_its_words(
    qtbot, make_window, tmp_path, monkeypatch
):
    text = "\n\n".join(f"Paragraph {i} has a few words in it." for i in range(60_000))
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "source.txt").write_text(text, encoding="utf-8")
    copies = []
    real = QPlainTextEdit.toPlainText

    def counted(self):
        if self.objectName() == "source":
            copies.append(1)
        return real(self)

    monkeypatch.setattr(QPlainTextEdit, "toPlainText", counted)
    window = make_window(FakeFactory(), wait_ready=False)
    assert len(copies) <= 1, f"the 3 MB document was copied {len(copies)} times while the window opened"
    assert window.source_pane.info.text() == f"{len(text.split())} words"
    assert not window.source.document().isUndoAvailable(), "the restored text is not an undo step"


def slow_saves(monkeypatch, seconds: float) -> list[int]:
    """LastTranslation.save made slow (a loaded disk's fsync); the threads it ran on are recorded."""
    threads: list[int] = []
    original = LastTranslation.save

    def slow(self, *args, **kwargs):
        threads.append(threading.get_ident())
        time.sleep(seconds)
        original(self, *args, **kwargs)

    monkeypatch.setattr(LastTranslation, "save", slow)
    return threads


def test_the_translation_file_is_written_off_the_ui_thread(qtbot, make_window, tmp_path, monkeypatch):
    threads = slow_saves(monkeypatch, 0.6)
    window = make_window(FakeFactory())
    window.source.setPlainText(SOURCE)
    timer, ticks = tick_recorder(window)
    timer.start()
    window.translate()
    wait_done(qtbot, window)
    qtbot.waitUntil(lambda: bool(threads), timeout=5000)
    qtbot.wait(700)  # the slow write runs meanwhile
    timer.stop()
    gaps = tick_gaps(ticks)
    assert threads[0] != threading.get_ident(), "saved on the UI thread"
    assert gaps and max(gaps) < 0.3, f"UI froze for {max(gaps):.3f}s while the translation was saved"
    window.store.flush()
    record = json.loads((tmp_path / "state" / "translation.json").read_text(encoding="utf-8"))
    assert record["target"] == fake_translate_text(SOURCE)


def test_clearing_right_after_a_slow_save_still_forgets_the_translation(qtbot, make_window, tmp_path, monkeypatch):
    """The removal is queued behind the write, never overtaken by it."""
    threads = slow_saves(monkeypatch, 0.4)
    window = make_window(FakeFactory())
    window.source.setPlainText(SOURCE)
    window.translate()
    wait_done(qtbot, window)
    qtbot.waitUntil(lambda: bool(threads), timeout=5000)  # being written now
    window.clear()
    window.autosave.flush()
    window.store.flush()
    assert not (tmp_path / "state" / "translation.json").exists()
    assert not (tmp_path / "state" / "source.txt").exists()


def test_closing_right_after_a_translation_finishes_keeps_it(qtbot, make_window, tmp_path):
    window = make_window(FakeFactory())
    window.source.setPlainText(SOURCE)
    window.translate()
    wait_done(qtbot, window)
    window.shutdown()  # the deferred save has not run yet, or is being written
    record = json.loads((tmp_path / "state" / "translation.json").read_text(encoding="utf-8"))
    assert record["target"] == fake_translate_text(SOURCE)


def test_the_store_needs_the_window_parts_not_the_window(qtbot, tmp_path, settings):
    """SessionStore takes the panes, the settings and the notice bar (issue 28: it took the MainWindow, which
    imports it, a circle); it restores the source and reports a failed save with no window at all."""
    from PySide6.QtWidgets import QWidget

    from gui.notice_bar import NoticeBar
    from gui.window.session_store import SessionParts, SessionStore
    from gui.window.source_pane import SourcePane
    from gui.window.target_pane import TargetPane

    host = QWidget()
    qtbot.addWidget(host)
    state = tmp_path / "state"
    state.mkdir()
    (state / "source.txt").write_text(SOURCE, encoding="utf-8")
    parts = SessionParts(SourcePane(host), TargetPane(host), settings, NoticeBar(host))
    store = SessionStore(parts, state / "source.txt", host)
    store.restore_source()
    assert parts.source_pane.editor.toPlainText() == SOURCE
    assert not parts.source_pane.editor.document().isUndoAvailable()  # no 20 MB undo copy of the restored text
    store._save_failed("disk full")
    assert any("disk full" in m for m in parts.notice.messages())
    store.flush()  # not started: nothing translated, nothing to write
    assert not (state / "translation.json").exists()
