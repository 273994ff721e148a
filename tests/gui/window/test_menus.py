"""The window's menus on their own: built on a bare QMainWindow against a stub of the commands they run, with the
settings their checkable entries flip; no worker, no panes."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow

from gui.i18n import install_translators
from gui.settings import Key
from gui.window.menus import MenuCommands, Menus

COMMANDS = ("translate", "cancel", "copy", "clear", "settings", "quit", "about", "swap", "models", "open_document")


class Recorder:
    """Stands in for the window's commands: remembers which ran."""

    def __init__(self) -> None:
        self.ran: list[object] = []

    def commands(self) -> MenuCommands:
        return MenuCommands(
            **{name: (lambda *_checked, n=name: self.ran.append(n)) for name in COMMANDS},
            zoom=lambda step: self.ran.append(("zoom", step)),
        )


@pytest.fixture
def built(qtbot, settings):
    host = QMainWindow()
    qtbot.addWidget(host)
    recorder = Recorder()
    menus = Menus(host, settings, recorder.commands())
    menus.retranslate()
    return host, menus, recorder


def test_each_entry_runs_its_command(built):
    _, menus, recorder = built
    for name in COMMANDS:
        action = getattr(menus, "settings_action" if name == "settings" else f"{name}_action")
        action.trigger()
    menus.bigger_action.trigger()
    menus.smaller_action.trigger()
    assert recorder.ran == [*COMMANDS, ("zoom", 1), ("zoom", -1)]


def test_checkable_entries_set_their_settings_and_show_them(built, settings):
    _, menus, recorder = built
    for action, key in (
        (menus.stacked_action, Key.STACKED),
        (menus.live_action, Key.LIVE_TRANSLATE),
        (menus.underline_action, Key.CONFIDENCE_UNDERLINE),
        (menus.sync_scroll_action, Key.SYNC_SCROLL),
    ):
        before = settings.get(key)
        action.trigger()
        assert settings.get(key) is (not before), key
        settings.set(key, before)
        menus.show_settings()
        assert action.isChecked() is before, key
    assert recorder.ran == [], "a view setting is not a command"


def test_shortcuts_are_on_the_host_window(built):
    host, menus, _ = built
    assert QKeySequence("Ctrl+Return") in menus.translate_action.shortcuts()
    assert menus.swap_action.shortcut() == QKeySequence("Ctrl+Shift+S")
    assert menus.open_document_action.shortcut() == QKeySequence("Ctrl+O")
    assert menus.settings_action.shortcut() == QKeySequence("Ctrl+,"), "the first shortcut is the one menus show"
    assert {menus.translate_action, menus.cancel_action, menus.swap_action} <= set(host.actions())


def test_the_menu_bar_reads_file_edit_view_help_and_tools_once_it_has_an_entry(built, qtbot):
    host, menus, _ = built
    shown = [m.title() for m in (menus.file_menu, menus.edit_menu, menus.view_menu, menus.help_menu)]
    assert shown == ["&File", "&Edit", "&View", "&Help"]
    assert [a.menu() for a in host.menuBar().actions()][3] is menus.tools_menu
    assert not menus.tools_menu.menuAction().isVisible(), "an empty Tools menu is hidden"
    entry = QAction("&Glossary…", host)
    menus.tools_menu.addAction(entry)
    assert menus.tools_menu.menuAction().isVisible()
    menus.tools_menu.removeAction(entry)
    qtbot.waitUntil(lambda: not menus.tools_menu.menuAction().isVisible(), timeout=2000)


def test_retranslated_strings_keep_the_main_windows_translations(built):
    _, menus, _ = built
    install_translators("zh_CN")
    menus.retranslate()
    assert menus.file_menu.title() == "文件(&F)" and menus.translate_action.text() == "翻译(&T)"
    assert "纯文本" in menus.open_document_action.toolTip(), "the formats are worded in Chinese too"
