"""Issue 14's settings: typed, validated, off by default; the Settings dialog's Desktop tab stores them."""

from __future__ import annotations

import importlib.util

import pytest
from PySide6.QtGui import QKeySequence

from gui.preferences.settings_dialog import SettingsDialog
from gui.settings import DEFAULT_API_PORT, SPECS, Key

OFF_BY_DEFAULT = (
    Key.CLOSE_TO_TRAY,
    Key.AUTOSTART,
    Key.COPY_TWICE,
    Key.CLIPBOARD_WATCH,
    Key.CLIPBOARD_WATCH_PAUSED,
    Key.API_ENABLED,
)


def test_everything_that_listens_or_starts_by_itself_is_off_by_default(settings):
    for key in OFF_BY_DEFAULT:
        assert settings.get(key) is False, key
    assert settings.get(Key.QUICK_SHORTCUT) == "Ctrl+Alt+T"
    assert settings.get(Key.API_PORT) == DEFAULT_API_PORT and settings.get(Key.API_KEY_FILE) == ""


@pytest.mark.parametrize(
    ("key", "bad"),
    [
        (Key.QUICK_SHORTCUT, "T"),  # no modifier: it would swallow the letter everywhere
        (Key.QUICK_SHORTCUT, "Ctrl+Alt+"),
        (Key.QUICK_SHORTCUT, "Ctrl+Alt+T; rm -rf"),
        (Key.API_PORT, 80),  # privileged
        (Key.API_PORT, 70000),
        (Key.API_ENABLED, "maybe"),
    ],
)
def test_invalid_values_are_refused(settings, key, bad):
    with pytest.raises(ValueError):
        settings.set(key, bad)


@pytest.mark.parametrize("good", ["Ctrl+Alt+T", "Meta+Shift+F5", "Ctrl+Space", "Alt+Shift+Ctrl+Q"])
def test_shortcuts_as_qt_writes_them_are_accepted(settings, good):
    settings.set(Key.QUICK_SHORTCUT, good)
    assert settings.get(Key.QUICK_SHORTCUT) == good


def test_a_hand_edited_bad_port_falls_back_and_is_reported(tmp_path):
    from gui.settings import Settings

    ini = tmp_path / "q.ini"
    ini.write_text("[api]\nport=22\n", encoding="utf-8")
    s = Settings(ini)
    assert s.get(Key.API_PORT) == DEFAULT_API_PORT
    assert any("API port" in n for n in s.take_notices())


@pytest.mark.skipif(importlib.util.find_spec("engine.api") is None, reason="engine.api not in this tree")
def test_the_default_port_is_the_apis():
    from engine.api import guard

    assert DEFAULT_API_PORT == guard.DEFAULT_PORT


def test_the_desktop_tab_stores_its_settings(settings, qtbot):
    dialog = SettingsDialog(settings, has_tray=True)
    qtbot.addWidget(dialog)
    page = dialog.desktop
    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())] == ["&General", "Re&view", "Des&ktop"]
    assert not page.api_port.isEnabled(), "the API's fields wait for the API to be switched on"
    page.close_to_tray.setChecked(True)
    page.autostart.setChecked(True)
    page.copy_twice.setChecked(True)
    page.clipboard_watch.setChecked(True)
    page.api_enabled.setChecked(True)
    assert page.api_port.isEnabled()
    page.api_port.setValue(6001)
    assert page.api_url.text() == "Address: http://127.0.0.1:6001"
    page.api_key_file.setText("  /home/u/.qiao-key  ")
    page.shortcut.setKeySequence(QKeySequence("Ctrl+Shift+Y"))
    dialog.accept()
    assert [settings.get(k) for k in OFF_BY_DEFAULT[:-2]] == [True, True, True, True]
    assert settings.get(Key.API_ENABLED) and settings.get(Key.API_PORT) == 6001
    assert settings.get(Key.API_KEY_FILE) == "/home/u/.qiao-key"
    assert settings.get(Key.QUICK_SHORTCUT) == "Ctrl+Shift+Y"


def test_a_shortcut_without_modifier_is_not_kept_and_the_page_says_why(settings, qtbot):
    dialog = SettingsDialog(settings, has_tray=True)
    qtbot.addWidget(dialog)
    dialog.desktop.shortcut.setKeySequence(QKeySequence("F7"))
    assert "not kept" in dialog.desktop.shortcut_hint.text()
    dialog.accept()
    assert settings.get(Key.QUICK_SHORTCUT) == SPECS[Key.QUICK_SHORTCUT].default


def test_close_to_tray_is_disabled_where_there_is_no_tray(settings, qtbot):
    dialog = SettingsDialog(settings, has_tray=False)
    qtbot.addWidget(dialog)
    assert not dialog.desktop.close_to_tray.isEnabled()
    assert dialog.desktop.close_to_tray.toolTip()
