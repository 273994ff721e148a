"""Details a new user notices: mnemonics that clash, the Settings shortcut, the title, the progress text, the status
after Clear, a 480 px window, and notices about invalid settings in words."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import QPoint
from PySide6.QtGui import QFont, QKeySequence
from PySide6.QtWidgets import QAbstractButton, QApplication, QLabel, QMenu, QWidget

from gui.i18n import install_translators
from gui.settings import Settings
from tests.gui.fakes import FakeFactory

MNEMONIC = re.compile(r"(?<!&)&([^&\s])")


def mnemonic(text: str) -> str | None:
    found = MNEMONIC.findall(text.replace("&&", ""))
    return found[0].lower() if found else None


def duplicates(texts: list[str]) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for text in texts:
        key = mnemonic(text)
        if key:
            seen.setdefault(key, []).append(text)
    return {k: v for k, v in seen.items() if len(v) > 1}


def window_scope(window: QWidget) -> list[str]:
    """Every mnemonic Alt+<letter> reaches in the window itself: menu titles, visible buttons, buddy labels."""
    texts = [a.text() for a in window.menuBar().actions()]
    for w in window.findChildren(QWidget):
        if not w.isVisibleTo(window) or isinstance(w.window(), QMenu):
            continue
        if isinstance(w, QAbstractButton) or (isinstance(w, QLabel) and w.buddy() is not None):
            texts.append(w.text())
    return texts


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_no_mnemonic_is_used_twice_in_one_scope(qtbot, make_window, settings, language):
    install_translators(language)  # as gui.app does before the window exists
    window = make_window(FakeFactory())
    scopes = {"window": window_scope(window)}
    for action in window.menuBar().actions():
        menu = action.menu()
        scopes[menu.title()] = [a.text() for a in menu.actions() if not a.isSeparator()]
    dialog = window.open_settings()
    # Each tab is its own scope (a hidden tab's mnemonics do not fire), shared with the tab names and the buttons
    pages = [dialog.tabs.widget(i) for i in range(dialog.tabs.count())]

    def texts_of(widgets) -> list[str]:
        return [
            w.text()
            for w in widgets
            if isinstance(w, QAbstractButton) or (isinstance(w, QLabel) and w.buddy() is not None)
        ]

    common = [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())]
    common += texts_of(w for w in dialog.findChildren(QWidget) if not any(p.isAncestorOf(w) for p in pages))
    for i, page in enumerate(pages):
        scopes[f"settings/{dialog.tabs.tabText(i)}"] = common + texts_of(page.findChildren(QWidget))
    dialog.reject()
    assert sum(1 for t in scopes["window"] if mnemonic(t)) >= 8, scopes["window"]  # the collection really works
    clashes = {scope: d for scope, texts in scopes.items() if (d := duplicates(texts))}
    assert clashes == {}, clashes


def test_the_settings_item_shows_ctrl_comma(qtbot, make_window):
    window = make_window(FakeFactory())
    shown = window.settings_action.shortcut()  # the one a menu displays
    assert shown.toString(QKeySequence.SequenceFormat.PortableText) == "Ctrl+,"
    assert QKeySequence("Ctrl+,") in window.settings_action.shortcuts()


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_title_does_not_repeat_the_application_name(qtbot, make_window, settings, language):
    install_translators(language)  # as gui.app does before the window exists
    window = make_window(FakeFactory())
    assert window.windowTitle() and "Qiao" not in window.windowTitle() and "桥" not in window.windowTitle()


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_progress_text_fits_its_bar(qtbot, make_window, settings, language, qapp):
    install_translators(language)  # as gui.app does before the window exists
    normal = QFont(qapp.font())
    large = QFont(normal)
    large.setPointSize(16)  # a user with a large system font
    qapp.setFont(large)
    try:
        _check_progress_fits(qtbot, make_window)
    finally:
        qapp.setFont(normal)


def _check_progress_fits(qtbot, make_window) -> None:
    window = make_window(FakeFactory(token_delay=0.002))
    window.source.setPlainText("\n".join(["hello world"] * 1200))
    window.translate()
    qtbot.waitUntil(lambda: window.progress.isVisible(), timeout=5000)
    bar = window.progress
    bar.setValue(bar.maximum())
    needed = bar.fontMetrics().horizontalAdvance(bar.text())
    assert bar.maximum() == 1200 and "1200" in bar.text()
    assert needed + bar.fontMetrics().height() <= bar.width(), f"{bar.text()!r} needs {needed} px of {bar.width()}"
    window.cancel()


def test_clear_also_clears_the_status_figures(qtbot, make_window):
    window = make_window(FakeFactory())
    window.source.setPlainText("hello world")
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and "tokens" in window.status_message(), timeout=5000)
    window.clear()
    assert window.status_message() == "" and not window.progress.isVisible()
    assert window.source.toPlainText() == "" and window.target.toPlainText() == ""


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_at_480_px_every_button_fits(qtbot, make_window, settings, language):
    install_translators(language)  # as gui.app does before the window exists
    window = make_window(FakeFactory())
    window.resize(480, 600)
    qtbot.waitUntil(lambda: window.width() == 480, timeout=2000)
    QApplication.processEvents()
    qtbot.wait(50)
    buttons = [w for w in window.button_row.findChildren(QAbstractButton) if w.isVisible()]
    assert len(buttons) == 5
    for b in buttons:
        right = b.mapTo(window, QPoint(b.width(), 0)).x()
        assert b.width() >= b.sizeHint().width(), f"{b.text()!r} squeezed to {b.width()} < {b.sizeHint().width()}"
        assert right <= window.width(), f"{b.text()!r} ends at {right} px, outside the {window.width()} px window"
    window.resize(1000, 600)
    qtbot.waitUntil(lambda: not window.button_row.wrapped(), timeout=2000)


def test_invalid_settings_are_all_reported_by_their_names(qtbot, make_window, tmp_path):
    path = tmp_path / "config" / "qiao.ini"
    path.parent.mkdir(parents=True)
    path.write_text("[engine]\nprecision=fp16\nbeams=9\n[editor]\nfont_size=99\n", encoding="utf-8")
    window = make_window(FakeFactory(), settings_obj=Settings(path))
    text = window.notice.label.text()
    for name in ("“Precision”", "“Quality”", "“Text size”"):
        assert name in text, f"{name} missing from {text!r}"
    assert "engine/" not in text and "editor/" not in text
    assert window.model.precision == "int8"


def test_invalid_setting_notice_is_in_the_interface_language(qtbot, make_window, tmp_path):
    install_translators("zh_CN")
    path = tmp_path / "config" / "qiao.ini"
    path.parent.mkdir(parents=True)
    path.write_text("[editor]\nfont_size=99\n", encoding="utf-8")
    window = make_window(FakeFactory(), settings_obj=Settings(path))
    assert "文字大小" in window.notice.label.text() and "font_size" not in window.notice.label.text()


def _status_fits(window) -> tuple[str, str]:
    """(what the status label draws, the whole message), checked: drawn in full inside the label, the label left of
    the precision label and the model menu, the whole message as tooltip exactly when it is shortened."""
    label = window.view.status_label
    whole, shown = window.status_message(), QLabel.text(label)  # QLabel's own text(): what is drawn
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width(), "cut off: " + shown
    right = label.mapTo(window, label.rect().topRight()).x()
    for other in (window.view.precision_label, window.model_control.model_button):
        assert other.isVisible()
        assert right < other.mapTo(window, other.rect().topLeft()).x(), f"{other.objectName()} covers the status"
    if shown != whole:
        assert shown.endswith("…") and whole.startswith(shown[:-1]) and label.toolTip() == whole
    else:
        assert label.toolTip() == ""
    return shown, whole


@pytest.mark.parametrize("width", [1000, 800])
def test_a_long_status_is_shortened_never_cut_off_and_its_whole_is_the_tooltip(qtbot, make_window, width):
    """The QA saw "…loaded in 858 ms. · The translation from 1" cut off under the precision label and the model
    menu after a restart (Firefox model, 1000 px); at the first start's size and at 800 px the message now ends in
    "…" inside its own room where it is too long, the whole message as tooltip."""
    first = make_window()
    first.source.setPlainText("Good morning, everyone! Thank you very much.")
    first.translate()
    qtbot.waitUntil(lambda: not first.translating and bool(first.target.toPlainText()), timeout=10_000)
    first.shutdown()
    window = make_window()
    qtbot.waitUntil(lambda: "was restored" in window.status_message(), timeout=10_000)
    window.resize(width, 620)
    qtbot.waitUntil(lambda: window.width() == width, timeout=5000)
    label = window.view.status_label
    whole = window.status_message()
    assert "loaded" in whole and whole.endswith("and the settings."), whole
    qtbot.wait(50)  # the status bar's layout settles
    shown, _ = _status_fits(window)
    if width == 800:
        assert shown != whole, "this message is wider than the room left at 800 px"
    window.resize(3000, 620)
    qtbot.waitUntil(lambda: QLabel.text(label) == whole, timeout=5000)
    _status_fits(window)
