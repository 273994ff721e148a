"""gui.app.attach_quick: the popup controller on the window's real worker (popup channel), reached from the tray
and later `qiao popup` starts through the desktop, following the settings, and saying when its shortcut is taken."""

from __future__ import annotations

import pytest

from gui.app import attach_quick
from gui.desktop.desktop import Desktop
from gui.desktop.single_instance import InstanceRequest
from gui.quick.shortcut import ShortcutResult
from gui.settings import Key
from tests.gui.fakes import FakeFactory, fake_translate_text

from .fakes import FakeBackend


@pytest.fixture
def wired(make_window, settings, qtbot):
    window = make_window(FakeFactory())
    desktop = Desktop(window, settings, use_tray=False)
    backend = FakeBackend()
    quick = attach_quick(window, desktop, backend=backend)
    qtbot.addWidget(quick.popup)
    yield window, desktop, quick, backend
    quick.shutdown()


def test_the_desktop_reaches_the_popup_on_the_popup_channel(wired, qtbot):
    window, desktop, quick, backend = wired
    assert desktop.quick is quick and backend.registered == ["Ctrl+Alt+T"]
    desktop.handle(InstanceRequest("popup", "Thank you very much."))  # a later `qiao popup TEXT`
    qtbot.waitUntil(lambda: quick.popup.isVisible() and bool(quick.popup.translation), timeout=5000)
    # the fake translator's answer reached the popup, and only the popup: the window's pane is untouched
    qtbot.waitUntil(lambda: quick.popup.translation == fake_translate_text("Thank you very much."), timeout=5000)
    assert window.target.toPlainText() == ""


def test_settings_reach_the_controller(wired, settings):
    _window, _desktop, quick, backend = wired
    settings.set(Key.COPY_TWICE, True)
    settings.set(Key.QUICK_SHORTCUT, "Ctrl+Alt+Y")
    assert quick.settings.copy_twice and backend.registered[-1] == "Ctrl+Alt+Y"


def test_a_shortcut_another_application_holds_is_said_in_the_window(make_window, settings, qtbot):
    window = make_window(FakeFactory())
    desktop = Desktop(window, settings, use_tray=False)
    taken = ShortcutResult("conflict", "Another application already uses Ctrl+Alt+T.")
    quick = attach_quick(window, desktop, backend=FakeBackend(taken))
    qtbot.addWidget(quick.popup)
    assert "Another application already uses Ctrl+Alt+T." in window.notice.label.text()
    quick.shutdown()
