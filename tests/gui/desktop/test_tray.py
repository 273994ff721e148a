"""The tray icon and the desktop integration around the window: the menu and its bindings, close-to-tray with its
one-time notice, requests from later starts, autostart and the local API following their settings."""

from __future__ import annotations

import os

import pytest

from gui.desktop.api_host import NOT_BUILT, ApiHost
from gui.desktop.desktop import Desktop
from gui.desktop.single_instance import InstanceRequest
from gui.desktop.tray import TrayIcon
from gui.i18n import install_translators
from gui.icons import app_icon
from gui.settings import Key
from tests.gui.fakes import FakeFactory, fake_translate_text


@pytest.fixture(autouse=True)
def quit_on_last_window(qapp):
    """A Desktop with a tray makes the app outlive its window (process-wide): put it back for the next tests."""
    yield
    qapp.setQuitOnLastWindowClosed(True)


@pytest.fixture
def window(make_window):
    return make_window(FakeFactory())


def actions(tray: TrayIcon) -> list[str]:
    return [a.objectName() for a in tray.menu.actions() if not a.isSeparator()]


def test_the_menu_offers_show_hide_quick_translate_pause_and_quit(window, settings, qtbot):
    tray = TrayIcon(settings, window, app_icon())
    assert actions(tray) == ["trayShow", "trayQuick", "trayPause", "trayQuit"]
    tray.refresh()
    assert tray.show_action.text() == "&Hide window"
    window.hide()
    tray.refresh()
    assert tray.show_action.text() == "&Show window"
    with qtbot.waitSignal(tray.quick_translate, timeout=1000):
        tray.quick_action.trigger()
    with qtbot.waitSignal(tray.quit_requested, timeout=1000):
        tray.quit_action.trigger()
    with qtbot.waitSignal(tray.toggle_window, timeout=1000):
        tray.show_action.trigger()


def test_pause_is_bound_to_its_setting_and_offered_only_while_watching(window, settings):
    tray = TrayIcon(settings, window, app_icon())
    assert not tray.pause_action.isVisible(), "no clipboard watching: nothing to pause"
    settings.set(Key.CLIPBOARD_WATCH, True)
    assert tray.pause_action.isVisible() and not tray.pause_action.isChecked()
    tray.pause_action.trigger()
    assert settings.get(Key.CLIPBOARD_WATCH_PAUSED) is True
    settings.set(Key.CLIPBOARD_WATCH_PAUSED, False)  # e.g. from the popup: the menu follows
    assert not tray.pause_action.isChecked()


def test_the_menu_follows_the_interface_language(window, settings, qtbot):
    tray = TrayIcon(settings, window, app_icon())
    install_translators("zh_CN")
    qtbot.waitUntil(lambda: tray.quit_action.text() != "&Quit Qiao", timeout=2000)
    assert "退出" in tray.quit_action.text() and "快速翻译" in tray.quick_action.text()


def test_closing_hides_to_the_tray_when_asked_and_says_so_once(window, settings, qtbot, monkeypatch):
    desktop = Desktop(window, settings, use_tray=True)
    messages: list[tuple[str, str]] = []
    monkeypatch.setattr(desktop.tray, "show_message", lambda title, text: messages.append((title, text)))
    window.close()
    assert not window.isVisible() and window._closed, "off by default: closing closes"
    assert messages == []


def test_close_to_tray_keeps_qiao_running(make_window, settings, qtbot, monkeypatch):
    window = make_window(FakeFactory())
    settings.set(Key.CLOSE_TO_TRAY, True)
    desktop = Desktop(window, settings, use_tray=True)
    messages: list[tuple[str, str]] = []
    monkeypatch.setattr(desktop.tray, "show_message", lambda title, text: messages.append((title, text)))
    window.close()
    assert not window.isVisible() and not window._closed and window.engine.thread.isRunning()
    assert len(messages) == 1 and "tray" in messages[0][1]
    assert settings.get(Key.TRAY_NOTICE_SHOWN)
    desktop.toggle_window()
    assert window.isVisible()
    window.close()
    assert len(messages) == 1, "the notice is shown the first time only"
    quits: list = []
    monkeypatch.setattr(
        "gui.desktop.desktop.QTimer.singleShot", lambda ms, fn: quits.append(fn)
    )  # not inside the test run
    desktop.quit()
    assert quits, "with a tray Qt would not quit by itself: the desktop ends the app"
    assert window._closed and not window.engine.thread.isRunning(), "Quit closes for real, close-to-tray or not"


def test_without_a_tray_close_to_tray_does_nothing(make_window, settings):
    window = make_window(FakeFactory())
    settings.set(Key.CLOSE_TO_TRAY, True)
    desktop = Desktop(window, settings, use_tray=False)
    assert desktop.tray is None
    window.close()
    assert window._closed


class FakeQuick:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def trigger(self) -> None:
        self.calls.append(("trigger",))

    def show_text(self, text: str) -> None:
        self.calls.append(("show_text", text))


def test_requests_from_later_starts(window, settings, qtbot):
    desktop = Desktop(window, settings, use_tray=False)
    window.hide()
    desktop.handle(InstanceRequest("show"))
    assert window.isVisible()
    desktop.handle(InstanceRequest("translate", "hello world"))
    qtbot.waitUntil(lambda: window.target.toPlainText() == fake_translate_text("hello world"), timeout=3000)
    assert window.source.toPlainText() == "hello world"
    quick = FakeQuick()
    desktop.quick = quick
    desktop.handle(InstanceRequest("popup"))
    desktop.handle(InstanceRequest("popup", "good morning"))
    assert quick.calls == [("trigger",), ("show_text", "good morning")]


def test_a_popup_request_without_the_popup_module_translates_in_the_window(window, settings, qtbot):
    desktop = Desktop(window, settings, use_tray=False)
    desktop.handle(InstanceRequest("popup", "good morning"))
    qtbot.waitUntil(lambda: window.target.toPlainText() == "好早上", timeout=3000)


class FakeEntry:
    def __init__(self, fail: bool = False) -> None:
        self.enabled = False
        self.fail = fail
        self.commands: list[list[str]] = []

    def enable(self, command) -> None:
        if self.fail:
            raise PermissionError(13, "Permission denied", "/home/u/.config/autostart/qiao.desktop")
        self.enabled = True
        self.commands.append(list(command))

    def disable(self) -> None:
        self.enabled = False

    def is_enabled(self) -> bool:
        return self.enabled


def test_autostart_follows_its_setting_and_says_when_it_cannot(window, settings):
    entry = FakeEntry()
    desktop = Desktop(window, settings, use_tray=False, autostart_entry=entry)
    desktop.start()
    assert not entry.enabled, "off by default"
    settings.set(Key.AUTOSTART, True)
    assert entry.enabled and entry.commands[-1][-1] == "--background"
    settings.set(Key.AUTOSTART, False)
    assert not entry.enabled
    broken = Desktop(window, settings, use_tray=False, autostart_entry=FakeEntry(fail=True))
    settings.set(Key.AUTOSTART, True)
    assert any("start-with-the-system" in m and "Permission denied" in m for m in window.notice.messages())
    del broken


class FakeServer:
    def __init__(self, log: list, service, port: int, key: str | None, fail: str = "") -> None:
        self.log, self.port, self.fail = log, port, fail
        log.append(("made", port, key))

    def start(self):
        if self.fail:
            raise OSError(98, self.fail)
        self.log.append(("start", self.port))
        return ("127.0.0.1", self.port)

    def stop(self, timeout: float = 10) -> None:
        self.log.append(("stop", self.port))


def test_the_local_api_follows_its_settings(window, settings):
    log: list = []
    services: list = []

    def service():
        services.append(object())
        return services[-1]

    host = ApiHost(settings, service, lambda svc, port, key: FakeServer(log, svc, port, key))
    desktop = Desktop(window, settings, use_tray=False, api=host)
    desktop.start()
    assert log == [], "off by default: nothing listens"
    settings.set(Key.API_ENABLED, True)
    assert log == [("made", 5454, None), ("start", 5454)] and host.address == ("127.0.0.1", 5454)
    settings.set(Key.API_PORT, 6000)
    assert log[-3:] == [("stop", 5454), ("made", 6000, None), ("start", 6000)]
    settings.set(Key.API_ENABLED, False)
    assert log[-1] == ("stop", 6000) and host.server is None
    desktop.shutdown()


def test_an_api_that_cannot_start_is_said_in_the_window(window, settings):
    host = ApiHost(settings, object, lambda svc, port, key: FakeServer([], svc, port, key, fail="Address in use"))
    Desktop(window, settings, use_tray=False, api=host)
    settings.set(Key.API_ENABLED, True)
    assert host.server is None and "Address in use" in host.problem
    assert any("local translation API did not start" in m for m in window.notice.messages())


def test_without_engine_api_the_setting_says_so(window, settings):
    def missing(svc, port, key):
        raise ImportError("No module named 'engine.api'")

    host = ApiHost(settings, object, missing)
    Desktop(window, settings, use_tray=False, api=host)
    settings.set(Key.API_ENABLED, True)
    assert host.problem == NOT_BUILT and host.server is None
    assert "The local translation API is not part of this build of Qiao." in window.notice.messages()


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX's")
def test_a_key_file_other_users_can_read_is_used_and_said_in_the_window(window, settings, tmp_path):
    """The real key reader (engine.api.keys, shared with `qiao serve`): its warning reaches the notice bar. It
    went to stderr before (issue 28: read_key lived in engine/cli/serve.py and called the CLI's say())."""
    key_file = tmp_path / "key"
    key_file.write_text("k-3f9a2c\n", encoding="utf-8")
    key_file.chmod(0o644)
    log: list = []
    host = ApiHost(settings, object, lambda svc, port, key: FakeServer(log, svc, port, key))
    Desktop(window, settings, use_tray=False, api=host)
    settings.set(Key.API_KEY_FILE, str(key_file))
    settings.set(Key.API_ENABLED, True)
    assert log[-2:] == [("made", 5454, "k-3f9a2c"), ("start", 5454)] and host.problem == ""
    assert f"chmod 600 {key_file}" in host.warning
    assert any("key file is not private" in m and str(key_file) in m for m in window.notice.messages())
    window.notice.dismiss()
    key_file.chmod(0o600)
    settings.set(Key.API_PORT, 6000)  # a restart reads the file again
    assert host.warning == "" and not any("not private" in m for m in window.notice.messages())
