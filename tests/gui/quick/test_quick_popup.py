"""The popup: streamed text, copy (marked as Qiao's), open in window, pin, Esc, focus loss, palette, language."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication

from gui.quick.clipboard_text import OWN_COPY_MIME
from gui.quick.popup import SOURCE_CHARS, QuickPopup, elide


@pytest.fixture
def popup(qtbot):
    p = QuickPopup()
    qtbot.addWidget(p)
    return p


def test_window_flags_make_a_frameless_tool_window_on_top(popup):
    flags = popup.windowFlags()
    for flag in (Qt.WindowType.Tool, Qt.WindowType.FramelessWindowHint, Qt.WindowType.WindowStaysOnTopHint):
        assert flags & flag


def test_streams_then_shows_the_final_text(popup):
    popup.begin("Hello world.")
    assert popup.status.text() == "Translating…" and not popup.copy_button.isEnabled()
    popup.append("你好")
    popup.append("世界。")
    assert popup.result.toPlainText() == "你好世界。"
    popup.finish("你好，世界。")
    assert popup.result.toPlainText() == "你好，世界。"
    assert popup.status.text() == "" and popup.copy_button.isEnabled()


def test_a_new_request_replaces_the_old_one(popup):
    popup.begin("first")
    popup.append("一")
    popup.begin("second")
    assert popup.result.toPlainText() == "" and popup.source_label.text() == "second"


def test_late_pieces_after_the_end_are_ignored(popup):
    popup.begin("a")
    popup.finish("好")
    popup.append("extra")
    assert popup.result.toPlainText() == "好"


def test_long_sources_are_elided_to_one_line(popup):
    text = "word " * 200 + "\n\nlast"
    popup.begin(text)
    shown = popup.source_label.text()
    assert len(shown) == SOURCE_CHARS and shown.endswith("…") and "\n" not in shown
    assert elide("short\ntext") == "short text"


def test_copy_puts_the_translation_on_the_clipboard_marked_as_qiao(popup, clipboard):
    clipboard.setText("the user's own clipboard")
    popup.begin("Hello")
    popup.append("你好")
    assert clipboard.text() == "the user's own clipboard", "streaming never touches the clipboard"
    popup.finish("你好")
    popup.copy_button.click()
    assert clipboard.text() == "你好" and clipboard.mimeData().hasFormat(OWN_COPY_MIME)
    assert popup.status.text() == "Copied"


def test_open_in_window_sends_the_source(popup, qtbot):
    popup.begin("Thank you very much.")
    popup.popup_at(QPoint(50, 50))
    with qtbot.waitSignal(popup.open_in_window) as sig:
        popup.window_button.click()
    assert sig.args == ["Thank you very much."]
    assert not popup.isVisible(), "an unpinned popup goes away once the text is in the window"


def test_escape_closes(popup, qtbot):
    popup.begin("x")
    popup.popup_at(QPoint(10, 10))
    assert popup.isVisible()
    with qtbot.waitSignal(popup.closed):
        qtbot.keyClick(popup, Qt.Key.Key_Escape)
    assert not popup.isVisible()


def test_escape_closes_even_when_pinned(popup, qtbot):
    popup.set_pinned(True)
    popup.popup_at(QPoint(10, 10))
    qtbot.keyClick(popup, Qt.Key.Key_Escape)
    assert not popup.isVisible()


def _lose_focus(popup):
    QApplication.sendEvent(popup, QEvent(QEvent.Type.ActivationChange))


def test_unpinned_hides_on_focus_loss_pinned_stays(popup):
    popup.popup_at(QPoint(10, 10))
    popup.set_pinned(True)
    _lose_focus(popup)
    assert popup.isVisible()
    popup.set_pinned(False)
    _lose_focus(popup)
    assert not popup.isVisible()


def test_pinned_popup_stays_where_the_user_left_it(popup):
    popup.popup_at(QPoint(100, 100))
    popup.set_pinned(True)
    popup.move(300, 300)
    popup.popup_at(QPoint(10, 10))
    assert popup.pos() == QPoint(300, 300)


def test_placed_next_to_the_pointer_on_screen(popup):
    popup.popup_at(QPoint(100, 100))
    geo = QGuiApplication.primaryScreen().availableGeometry()
    assert geo.contains(popup.frameGeometry()) and popup.x() > 100 and popup.y() > 100


def test_problem_message_and_a_long_text_can_still_go_to_the_window(popup):
    popup.show_problem("The text is too long for the popup", "x" * 30000)
    assert popup.result.toPlainText().startswith("The text is too long")
    assert popup.window_button.isEnabled() and not popup.copy_button.isEnabled()
    popup.show_problem("Nothing selected")
    assert not popup.window_button.isEnabled()


def test_failure_is_shown(popup):
    popup.begin("x")
    popup.fail("The model is not loaded.")
    assert popup.result.toPlainText() == "The model is not loaded." and popup.status.text() == "Translation failed"


def test_follows_the_application_palette(popup, qapp):
    from gui.theme import apply_theme, is_dark

    popup.popup_at(QPoint(10, 10))
    for mode in ("dark", "light"):
        apply_theme(qapp, mode)
        qapp.processEvents()
        assert is_dark(popup.palette()) is (mode == "dark")
        assert is_dark(popup.result.palette()) is (mode == "dark")


def test_retranslates_on_language_change(popup, qapp):
    from PySide6.QtCore import QTranslator

    class Upper(QTranslator):
        def translate(self, context, source, disambiguation=None, n=-1):
            return source.upper() if context == "QuickPopup" else ""

        def isEmpty(self):
            return False

    t = Upper()
    qapp.installTranslator(t)
    qapp.processEvents()
    try:
        assert popup.copy_button.text() == "&COPY"
        assert popup.window_button.text() == "OPEN IN &WINDOW"
    finally:
        qapp.removeTranslator(t)
        qapp.processEvents()
    assert popup.copy_button.text() == "&Copy"


def test_height_follows_the_text_up_to_a_limit(popup):
    popup.begin("short")
    popup.finish("好。")
    short = popup.height()
    popup.begin("long")
    for _ in range(50):
        popup.append("这是一个很长的翻译，它会换行好几次。")
    grown = popup.height()
    popup.append("更多" * 500)
    assert short < grown <= popup.height()
    spacing = popup.result.fontMetrics().lineSpacing()
    assert popup.result.height() <= 15 * spacing, "past the limit the text scrolls instead"
    popup.begin("again short")
    assert popup.height() == short


def test_a_growing_popup_stays_on_screen(popup):
    geo = QGuiApplication.primaryScreen().availableGeometry()
    popup.begin("x")
    popup.popup_at(QPoint(geo.width() // 2, geo.bottom() - 5))
    for _ in range(40):
        popup.append("一段会让弹窗变高的翻译。")
    assert geo.contains(popup.frameGeometry())
