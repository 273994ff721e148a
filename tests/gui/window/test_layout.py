"""The window's widgets on their own: WindowLayout on a bare QMainWindow with the settings it reads and writes."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMainWindow

from gui.settings import Key
from gui.window.layout import WindowLayout


def make(qtbot, settings) -> tuple[QMainWindow, WindowLayout]:
    host = QMainWindow()
    qtbot.addWidget(host)
    view = WindowLayout(host, settings)
    view.retranslate()
    host.view = view  # the test holds both
    return host, view


def test_zoom_steps_the_font_size_setting_and_stops_at_its_limits(qtbot, settings):
    _, view = make(qtbot, settings)
    size = settings.get(Key.FONT_SIZE)
    view.zoom(+1)
    assert settings.get(Key.FONT_SIZE) == size + 1
    settings.set(Key.FONT_SIZE, 48)
    view.zoom(+1)  # past the largest size: a beep, the setting unchanged
    assert settings.get(Key.FONT_SIZE) == 48


def test_the_stacked_setting_decides_the_orientation_even_over_a_saved_split(qtbot, settings):
    host, view = make(qtbot, settings)
    view.restore_geometry()
    assert (host.width(), host.height()) == (1000, 620), "the first start's size"
    settings.set(Key.STACKED, True)
    view.apply_orientation()
    assert view.splitter.orientation() == Qt.Orientation.Vertical
    view.save_geometry()
    settings.set(Key.STACKED, False)
    again_host, again = make(qtbot, settings)
    again.restore_geometry()
    assert again.splitter.orientation() == Qt.Orientation.Horizontal
    assert again_host.centralWidget().isAncestorOf(again.splitter)


def test_the_live_box_follows_the_setting_and_sets_it(qtbot, settings):
    _, view = make(qtbot, settings)
    on = settings.get(Key.LIVE_TRANSLATE)
    view.live_check.click()
    assert settings.get(Key.LIVE_TRANSLATE) is (not on)
    settings.set(Key.LIVE_TRANSLATE, on)
    view.show_live(on)
    assert view.live_check.isChecked() is on and settings.get(Key.LIVE_TRANSLATE) is on
    assert view.translate_button.text() == "&Translate" and view.progress.format() == "%v / %m sentences"
