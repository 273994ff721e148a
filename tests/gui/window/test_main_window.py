"""The window as a user drives it: on the real engine and the tiny committed model, and on the fake engine only
where a test needs control over timing (cancel, latest-wins, responsiveness, mid-translation switches)."""

from __future__ import annotations

import gc
import threading
import time
from itertools import pairwise

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QPushButton, QWidget

from gui.quick.clipboard_text import is_qiao_copy
from gui.settings import Key
from gui.window.main_window import MainWindow
from tests.gui.event_loop_ticks import gaps as tick_gaps
from tests.gui.event_loop_ticks import tick_recorder
from tests.gui.fakes import FakeFactory, fake_translate_text

PARAGRAPHS = (
    "Good morning, everyone! The weather is very nice.\n\n"
    "Where is the train station? Please speak more slowly.\nThank you very much."
)


def has_han(text: str) -> bool:
    return any("\u4e00" <= ch <= "\u9fff" for ch in text)


def wait_done(qtbot, window: MainWindow, timeout: int = 10_000) -> None:
    qtbot.waitUntil(lambda: not window.translating, timeout=timeout)


def test_source_has_focus_and_translate_button_works(qtbot, make_window, engine_output):
    window = make_window()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.source, timeout=2000)
    window.source.setPlainText(PARAGRAPHS)
    qtbot.mouseClick(window.translate_button, Qt.MouseButton.LeftButton)
    wait_done(qtbot, window)
    result = window.target.toPlainText()
    assert result == engine_output(PARAGRAPHS)
    lines = result.split("\n")
    assert len(lines) == 4 and lines[1] == "" and all(has_han(x) for x in (lines[0], lines[2], lines[3]))
    assert "天气很好" in result, "the tiny model knows this sentence"


def test_ctrl_enter_in_the_source_pane_translates(qtbot, make_window, engine_output):
    window = make_window()
    window.source.setFocus()
    qtbot.keyClicks(window.source, "Thank you very much.")
    qtbot.keyClick(window.source, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    wait_done(qtbot, window)
    assert window.target.toPlainText() == engine_output("Thank you very much.") == "非常感谢。"
    assert window.source.toPlainText() == "Thank you very much.", "Ctrl+Enter must not insert a newline"


def test_streaming_updates_arrive_in_order_and_end_equal_to_the_engine_output(qtbot, make_window, engine_output):
    window = make_window()
    snapshots: list[str] = []
    window.target.textChanged.connect(lambda: snapshots.append(window.target.toPlainText()))
    text = "\n".join([PARAGRAPHS] * 15)
    window.source.setPlainText(text)
    window.translate()
    wait_done(qtbot, window)
    final = window.target.toPlainText()
    assert final == window.last_result.text == engine_output(text)
    grown = [s for s in snapshots if s]
    assert len(grown) > 3, "the translation must appear progressively, not at the end"
    assert all(b.startswith(a) for a, b in pairwise(grown)), "each update extends the last"


def test_status_bar_shows_precision_latency_and_speed_after_a_request(qtbot, make_window):
    window = make_window()
    window.source.setPlainText("Hello world.")
    window.translate()
    wait_done(qtbot, window)
    status = window.status_message()
    for part in ("INT8", "total", "first token", "tokens", "tokens/s"):
        assert part in status, status
    assert window.precision_label.text() == "INT8"


def test_esc_cancels_and_keeps_the_part_already_translated(qtbot, make_window):
    window = make_window(FakeFactory(token_delay=0.01))
    window.source.setPlainText("\n".join(["bridge bridge bridge."] * 200))
    window.translate()
    qtbot.waitUntil(lambda: len(window.target.toPlainText()) >= 5, timeout=5000)
    assert window.cancel_button.isEnabled()
    qtbot.keyClick(window.source, Qt.Key.Key_Escape)
    wait_done(qtbot, window, timeout=2000)
    kept = window.target.toPlainText()
    assert window.last_result.cancelled and kept == window.last_result.text
    assert 5 <= len(kept) < len(fake_translate_text(window.source.toPlainText()))
    assert "Cancelled" in window.status_message() and "of 200 sentences" in window.status_message()
    assert not window.cancel_button.isEnabled()


def test_a_new_request_replaces_the_running_one(qtbot, make_window):
    factory = FakeFactory(token_delay=0.01)
    window = make_window(factory)
    window.source.setPlainText(" ".join(["hello"] * 400))
    window.translate()
    qtbot.waitUntil(lambda: bool(window.target.toPlainText()), timeout=5000)
    window.source.setPlainText("good morning")
    window.translate()
    wait_done(qtbot, window, timeout=3000)
    assert window.target.toPlainText() == "好早上"


def test_ui_stays_responsive_while_a_long_paragraph_translates(qtbot, make_window):
    window = make_window(FakeFactory(token_delay=0.003))
    window.source.setPlainText(" ".join(["language model bridge"] * 150))  # 450 tokens, ~1.4 s of "decoding"
    timer, ticks = tick_recorder(window)
    timer.start()
    window.translate()
    start = time.perf_counter()
    wait_done(qtbot, window)
    elapsed = time.perf_counter() - start
    timer.stop()
    gaps = tick_gaps(ticks)
    assert elapsed > 1.0, "the test needs a translation long enough to observe"
    assert len(ticks) > elapsed / 0.010 * 0.5, f"event loop starved: {len(ticks)} ticks in {elapsed:.2f}s"
    assert max(gaps) < 0.25, f"UI froze for {max(gaps):.3f}s"


def test_huge_paste_stays_responsive(qtbot, make_window):
    factory = FakeFactory()
    window = make_window(factory)
    huge = ("The model is good. Hello world. " * 12 + "\n") * 3000  # ~1.1 MB, 72k words
    clipboard = QGuiApplication.clipboard()
    clipboard.setText(huge)
    t0 = time.perf_counter()
    window.source.paste()
    paste_s = time.perf_counter() - t0
    assert window.source.toPlainText() == huge
    assert paste_s < 5, f"pasting took {paste_s:.1f}s"
    timer, ticks = tick_recorder(window)
    # The objects earlier tests left in this process (thousands of tests' worth) are set aside from the garbage
    # collector for the measurement: their full collections (0.3 s in a whole run) belong to the test runner's
    # heap, not to what an app holding one window has to scan.
    gc.collect()
    gc.freeze()
    try:
        timer.start()
        window.translate()
        wait_done(qtbot, window, timeout=30_000)
        timer.stop()
    finally:
        gc.unfreeze()
    assert window.target.toPlainText() == fake_translate_text(huge)
    gaps = tick_gaps(ticks)
    assert gaps and max(gaps) < 0.5, f"UI froze for {max(gaps):.3f}s while streaming a huge text"


def test_progress_shows_sentences_for_long_inputs(qtbot, make_window):
    window = make_window(FakeFactory(token_delay=0.005))
    window.source.setPlainText("\n".join(["hello world."] * 40))
    window.translate()
    qtbot.waitUntil(lambda: window.progress.isVisible() and window.progress.value() >= 2, timeout=5000)
    assert window.progress.maximum() == 40
    wait_done(qtbot, window)
    assert not window.progress.isVisible()


def test_worker_results_are_painted_on_the_ui_thread(qtbot, make_window):
    window = make_window(FakeFactory(token_delay=0.002))
    writers: set[int] = set()
    # a direct connection: runs in whichever thread changes the document
    window.target.document().contentsChange.connect(lambda *_: writers.add(threading.get_ident()))
    window.source.setPlainText(" ".join(["hello world"] * 50))
    window.translate()
    wait_done(qtbot, window)
    assert window.target.toPlainText() == "你好世界" * 50
    assert writers == {threading.get_ident()}, "worker signals must be queued to the UI thread"


def test_copy_and_clear(qtbot, make_window):
    window = make_window()
    assert not window.copy_button.isEnabled()
    window.source.setPlainText("See you tomorrow.")
    window.translate()
    wait_done(qtbot, window)
    assert window.copy_button.isEnabled()
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(window.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == window.target.toPlainText() == "明天见。"
    # marked as Qiao's own copy, so clipboard watching (zh→en watches any text) does not translate it back
    assert is_qiao_copy(QGuiApplication.clipboard().mimeData())
    qtbot.mouseClick(window.clear_button, Qt.MouseButton.LeftButton)
    assert window.source.toPlainText() == "" and window.target.toPlainText() == ""
    assert not window.copy_button.isEnabled()
    window.source.undo()
    assert window.source.toPlainText() == "See you tomorrow.", "Clear is undoable"


def test_empty_input_says_so_instead_of_translating(qtbot, make_window):
    factory = FakeFactory()
    window = make_window(factory)
    window.source.setPlainText("   \n ")
    window.translate()
    assert "Nothing to translate" in window.status_message()
    assert factory.translator.calls == []


def test_translate_as_you_type_is_off_by_default_and_debounced_when_on(qtbot, make_window, settings):
    factory = FakeFactory()
    window = make_window(factory)
    qtbot.keyClicks(window.source, "hello")
    qtbot.wait(50)
    assert not window.live_check.isChecked()
    assert not window.requests.live_pending and factory.translator.calls == []
    settings.set(Key.LIVE_DELAY_MS, 200)
    window.live_check.setChecked(True)
    assert settings.get(Key.LIVE_TRANSLATE) is True
    window.source.clear()
    qtbot.keyClicks(window.source, "good morning bridge")  # 19 key presses
    qtbot.waitUntil(lambda: window.target.toPlainText() == "好早上桥", timeout=5000)
    assert [c["text"] for c in factory.translator.calls] == ["good morning bridge"], "one request after typing stops"


def test_precision_change_in_settings_applies_without_restart(qtbot, make_window, settings):
    factory = FakeFactory()
    window = make_window(factory)
    dialog = window.open_settings()
    dialog.precision.setCurrentIndex(dialog.precision.findData("fp32"))
    dialog.accept()
    qtbot.waitUntil(lambda: window.model is not None and window.model.precision == "fp32", timeout=5000)
    assert window.precision_label.text() == "FP32" and "Switched to FP32" in window.status_message()
    assert len(factory.built) == 1, "switching must not rebuild the window or reload from scratch"
    window.source.setPlainText("hello")
    window.translate()
    wait_done(qtbot, window)
    assert factory.translator.calls[-1]["precision"] == "fp32" and "FP32" in window.status_message()


def test_precision_change_while_translating_restarts_in_the_new_precision(qtbot, make_window, settings):
    gate = threading.Event()
    factory = FakeFactory(gate=gate)
    window = make_window(factory)
    window.source.setPlainText("hello world")
    window.translate()
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 1, timeout=5000)
    settings.set(Key.PRECISION, "fp32")
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 2, timeout=5000)
    gate.set()
    wait_done(qtbot, window)
    assert window.target.toPlainText() == "你好世界"
    assert [c["precision"] for c in factory.translator.calls] == ["int8", "fp32"]
    assert window.last_result.stats.precision == "fp32"


def test_script_setting_gives_traditional_chinese(qtbot, make_window, settings, engine_output):
    window = make_window()
    settings.set(Key.VARIANT, "hant")
    assert "Traditional" in window.target_pane.heading.text()
    window.source.setPlainText("Where is the train station?")
    window.translate()
    wait_done(qtbot, window)
    assert window.target.toPlainText() == engine_output("Where is the train station?", variant="hant")
    assert "火車站" in window.target.toPlainText()


def test_changing_script_or_quality_retranslates_what_is_shown(qtbot, make_window, settings, engine_output):
    window = make_window()
    window.source.setPlainText("Thank you very much.")
    window.translate()
    wait_done(qtbot, window)
    assert window.target.toPlainText() == engine_output("Thank you very much.")
    settings.set(Key.VARIANT, "hant")
    qtbot.waitUntil(lambda: window.target.toPlainText() == engine_output("Thank you very much.", variant="hant"))
    wait_done(qtbot, window)
    first = window.last_result
    settings.set(Key.BEAMS, 1)
    qtbot.waitUntil(lambda: window.last_result is not first and not window.translating, timeout=5000)
    assert window.last_result.stats.beams == 1
    # an edited source is not re-translated behind the user's back
    window.source.setPlainText("Good morning, everyone!")
    before = window.last_result
    settings.set(Key.VARIANT, "hans")
    qtbot.wait(300)
    assert window.last_result is before and not window.translating


def test_real_precision_switch_reloads_the_other_graphs_and_translates_with_them(
    qtbot, make_window, settings, engine_output
):
    window = make_window()
    assert window.model.precision == "int8" and window.model.available_precisions == ("int8", "fp32")
    settings.set(Key.PRECISION, "fp32")
    qtbot.waitUntil(lambda: window.model.precision == "fp32", timeout=10_000)
    window.source.setPlainText(PARAGRAPHS)
    window.translate()
    wait_done(qtbot, window)
    assert window.last_result.stats.precision == "fp32"
    assert window.target.toPlainText() == engine_output(PARAGRAPHS, precision="fp32")
    assert "FP32" in window.status_message() and window.precision_label.text() == "FP32"


def test_font_size_and_zoom(qtbot, make_window, settings):
    window = make_window()
    settings.set(Key.FONT_SIZE, 20)
    assert window.source.font().pointSize() == 20 and window.target.font().pointSize() == 20
    window.bigger_action.trigger()
    assert settings.get(Key.FONT_SIZE) == 21 and window.target.font().pointSize() == 21


def test_layout_and_window_state_are_remembered(qtbot, make_window, settings):
    window = make_window()
    assert window.splitter.orientation() == Qt.Orientation.Horizontal
    window.stacked_action.trigger()
    assert window.splitter.orientation() == Qt.Orientation.Vertical
    window.splitter.setSizes([100, 400])
    sizes = window.splitter.sizes()
    window.shutdown()
    again = make_window()
    assert again.splitter.orientation() == Qt.Orientation.Vertical
    assert again.splitter.sizes() == sizes


def test_source_text_is_autosaved_and_restored(qtbot, make_window, tmp_path):
    window = make_window()
    qtbot.keyClicks(window.source, "Hello bridge")
    qtbot.waitUntil(lambda: (tmp_path / "state" / "source.txt").exists(), timeout=3000)
    assert (tmp_path / "state" / "source.txt").read_text(encoding="utf-8") == "Hello bridge"
    # a crash: no shutdown, no flush; a new window must still get the text back
    again = make_window()
    assert again.source.toPlainText() == "Hello bridge"


def test_missing_model_window_explains_and_offers_the_folder(qtbot, make_window, tmp_path, monkeypatch):
    import gui.models.model_status as model_status
    from tests.gui.fakes import missing_locator

    opened: list[str] = []
    monkeypatch.setattr(model_status, "open_folder", lambda path: opened.append(path) or True)
    searched = [str(tmp_path / "beside-exe"), str(tmp_path / "data" / "Qiao" / "models" / "opus-mt-en-zh")]
    window = make_window(locator=missing_locator(searched), wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    panel = window.model_panel
    assert panel.isVisible()
    assert panel.title.text() == "No translation model found"
    expected = str(tmp_path / "data" / "Qiao" / "models" / "opus-mt-en-zh")
    assert panel.location.text() == expected
    assert all(s in panel.details.text() for s in searched)
    assert "qiao model build" in panel.developer.text()
    assert not window.translate_button.isEnabled()
    qtbot.mouseClick(panel.open_button, Qt.MouseButton.LeftButton)
    assert opened == [expected]
    qtbot.mouseClick(panel.copy_button, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == expected
    # typing still works and is kept while there is no model
    qtbot.keyClicks(window.source, "hello")
    assert window.source.toPlainText() == "hello"


def test_try_again_loads_a_model_that_has_since_appeared(qtbot, make_window, tmp_path):
    from engine.errors import ModelNotFoundError

    present = {"yes": False}

    def locator(explicit, pair=None):
        if not present["yes"]:
            raise ModelNotFoundError("none", ["/nowhere"])
        return tmp_path / "bundle"

    window = make_window(locator=locator, wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    present["yes"] = True
    qtbot.mouseClick(window.model_panel.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model is not None, timeout=5000)
    assert not window.model_panel.isVisible() and window.translate_button.isEnabled()


def test_corrupt_model_window_lists_the_problems(qtbot, make_window, tmp_path):
    from engine.errors import FileProblem
    from tests.gui.fakes import bundle_error

    broken = str(tmp_path / "bundle")
    issues = [FileProblem("size", "fp32/decoder.onnx", "fp32/decoder.onnx: size 12 != 31415926"), "manifest.json: bad"]
    window = make_window(FakeFactory(fail=bundle_error(broken, issues)), wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    panel = window.model_panel
    assert panel.title.text() == "The translation model failed its check"
    assert panel.location.text() == broken
    assert "The file fp32/decoder.onnx has the wrong size" in panel.details.text()
    assert "Build or download the model again" in panel.details.text()
    assert "31415926" not in panel.details.text() and not panel.raw_details.isVisible(), "raw text only in Details"
    panel.details_button.click()
    assert panel.raw_details.isVisible() and "size 12 != 31415926" in panel.raw_details.text()
    assert panel.folder() == broken


def test_corrupt_settings_file_gives_defaults_and_a_notice(qtbot, make_window, tmp_path):
    from gui.settings import Settings

    path = tmp_path / "config" / "qiao.ini"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x00\xff\xfe\x13garbage\x00")
    window = make_window(settings_obj=Settings(path))
    assert window.notice.isVisible()
    assert "could not be read" in window.notice.label.text()
    assert window.settings.get(Key.PRECISION) == "int8" and window.model.precision == "int8"


def test_every_control_has_an_accessible_name_and_tab_reaches_the_buttons(qtbot, make_window):
    window = make_window()
    window.source.setPlainText("hello")
    window.translate()
    wait_done(qtbot, window)
    for widget in window.findChildren(QWidget):
        if widget.isVisible() and widget.focusPolicy() & Qt.FocusPolicy.TabFocus:
            name = widget.accessibleName() or (widget.text() if isinstance(widget, QPushButton) else "")
            assert name, f"{type(widget).__name__} {widget.objectName()!r} has no accessible name"
    window.source.setFocus()
    seen = []
    for _ in range(12):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        seen.append(QApplication.focusWidget())
    for widget in (window.target, window.translate_button, window.copy_button, window.live_check):
        assert widget in seen, f"{widget.objectName()} not reachable with Tab"


def test_real_missing_model_names_the_folder_given(qtbot, make_window, tmp_path):
    nowhere = tmp_path / "no-model-here"
    window = make_window(model_dir=str(nowhere), wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=10_000)
    assert window.problem.kind == "missing"
    assert str(nowhere) in window.model_panel.details.text()
    assert window.model_panel.isVisible() and not window.translate_button.isEnabled()


def test_real_bundle_with_a_damaged_file_fails_its_manifest_check(qtbot, make_window, tmp_path):
    import shutil

    from conftest import TINY_BUNDLE

    broken = tmp_path / "bundle"
    shutil.copytree(TINY_BUNDLE, broken)
    victim = next((broken / "int8").glob("*.onnx"))
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    window = make_window(model_dir=str(broken), wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=10_000)
    assert window.problem.kind == "invalid"
    assert window.model_panel.title.text() == "The translation model failed its check"
    assert victim.name in window.model_panel.details.text()
    assert window.model_panel.folder() == str(broken)


def test_emptying_the_source_while_typing_translates_leaves_the_target_empty(qtbot, make_window, settings):
    """Typing the source away mid-translation: the cancelled request's partial text must not come back afterwards."""
    factory = FakeFactory(token_delay=0.05)
    window = make_window(factory)
    settings.set(Key.LIVE_DELAY_MS, 200)
    window.live_check.setChecked(True)
    qtbot.keyClicks(window.source, "good morning bridge good morning bridge")
    qtbot.waitUntil(lambda: window.translating and bool(window.target.toPlainText()), timeout=5000)
    window.source.clear()
    qtbot.waitUntil(lambda: not window.translating and not window.requests.live_pending, timeout=5000)
    qtbot.wait(400)  # long enough for the cancelled request's last reports to arrive
    assert window.target.toPlainText() == ""
    assert window.last_result is None
