"""Shortcut parsing, each backend's key codes, and the X11 backend for real against Xvfb with openbox."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from PySide6.QtCore import QObject

from gui.quick import shortcut_macos, shortcut_windows
from gui.quick.backends import backend_for_platform
from gui.quick.shortcut import Keys, ShortcutBackend, ShortcutResult, parse_keys
from gui.quick.shortcut_x11 import X11Shortcut, libx11


@pytest.mark.parametrize(
    ("sequence", "keys"),
    [
        ("Ctrl+Alt+T", Keys(frozenset({"ctrl", "alt"}), "T")),
        ("ctrl+shift+5", Keys(frozenset({"ctrl", "shift"}), "5")),
        ("Meta+Space", Keys(frozenset({"meta"}), "Space")),
        ("F9", Keys(frozenset(), "F9")),
        ("Alt+PgUp", Keys(frozenset({"alt"}), "PageUp")),
    ],
)
def test_parse(qapp, sequence, keys):
    assert parse_keys(sequence) == keys


@pytest.mark.parametrize("sequence", ["", "T", "Shift+T", "Ctrl+T, Ctrl+U", "Ctrl+Alt+Nonsense", "Ctrl+ä"])
def test_invalid(qapp, sequence):
    result = parse_keys(sequence)
    assert isinstance(result, ShortcutResult) and result.status == "invalid" and result.reason


def test_windows_codes(qapp):
    mods, vk = shortcut_windows.win_codes(parse_keys("Ctrl+Alt+T"))
    assert vk == ord("T")
    assert mods == shortcut_windows.MOD_CONTROL | shortcut_windows.MOD_ALT | shortcut_windows.MOD_NOREPEAT
    assert shortcut_windows.win_codes(parse_keys("Meta+F12"))[1] == 0x7B
    assert shortcut_windows.win_codes(parse_keys("Ctrl+Alt+Space"))[1] == 0x20


def test_macos_codes(qapp):
    mods, code = shortcut_macos.mac_codes(parse_keys("Ctrl+Alt+T"))
    assert code == 17 and mods == shortcut_macos.CMD | shortcut_macos.OPTION  # ⌘⌥T, as Qt writes it
    assert shortcut_macos.mac_codes(parse_keys("Meta+Shift+A")) == (shortcut_macos.CONTROL | shortcut_macos.SHIFT, 0)
    assert shortcut_macos.mac_codes(parse_keys("Alt+F5"))[1] == 96


def test_other_platforms_answer_unsupported_not_crash(qapp):
    if os.name != "nt":
        assert shortcut_windows.WindowsShortcut().register("Ctrl+Alt+T").status == "unsupported"
    assert shortcut_macos.MacShortcut().register("Ctrl+Alt+T").status in {"unsupported", "ok", "conflict"}


def test_without_a_backend_the_answer_says_how_to_bind_qiao_popup(qapp):
    result = ShortcutBackend().register("Ctrl+Alt+T")
    assert result.status == "unsupported" and "qiao popup" in result.reason and "GNOME/KDE" in result.reason


def test_offscreen_platform_gets_the_unsupported_backend(qapp):
    backend = backend_for_platform()
    assert type(backend) is ShortcutBackend
    assert isinstance(backend, QObject)


def test_x11_without_a_display_is_unsupported(qapp):
    if libx11() is None:
        pytest.skip("no libX11")
    result = X11Shortcut(display=":9999").register("Ctrl+Alt+T")
    assert result.status == "unsupported" and ":9999" in result.reason


needs_x = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("xdotool")) or libx11() is None,
    reason="needs Xvfb, xdotool and libX11",
)


@needs_x
def test_x11_shortcut_fires_on_the_keys_and_a_second_client_gets_a_conflict(qtbot, xserver):
    env = {**os.environ, "DISPLAY": xserver}
    first = X11Shortcut(display=xserver)
    assert first.register("Ctrl+Alt+T").ok
    try:
        with qtbot.waitSignal(first.activated, timeout=5000):
            subprocess.run(["xdotool", "key", "ctrl+alt+t"], env=env, check=True)
        second = X11Shortcut(display=xserver)  # its own connection: another X client
        result = second.register("Ctrl+Alt+T")
        assert result.status == "conflict" and "Ctrl+Alt+T" in result.reason
        assert second.register("Ctrl+Alt+Y").ok, "other keys are still free"
        second.unregister()
    finally:
        first.unregister()
    after = X11Shortcut(display=xserver)
    assert after.register("Ctrl+Alt+T").ok, "unregister gave the keys back"
    after.unregister()


@needs_x
def test_x11_shortcut_works_with_numlock_and_capslock_on(qtbot, xserver):
    env = {**os.environ, "DISPLAY": xserver}
    grab = X11Shortcut(display=xserver)
    assert grab.register("Ctrl+Alt+T").ok
    try:
        for lock in ("Num_Lock", "Caps_Lock"):
            subprocess.run(["xdotool", "key", lock], env=env, check=True)
            try:
                with qtbot.waitSignal(grab.activated, timeout=5000):
                    subprocess.run(["xdotool", "key", "ctrl+alt+t"], env=env, check=True)
            finally:
                subprocess.run(["xdotool", "key", lock], env=env, check=True)
    finally:
        grab.unregister()


@needs_x
def test_x11_other_keys_do_not_fire(qtbot, xserver):
    env = {**os.environ, "DISPLAY": xserver}
    grab = X11Shortcut(display=xserver)
    assert grab.register("Ctrl+Alt+T").ok
    fired: list[int] = []
    grab.activated.connect(lambda: fired.append(1))
    try:
        subprocess.run(["xdotool", "key", "ctrl+alt+y", "ctrl+t", "alt+t"], env=env, check=True)
        qtbot.wait(300)
        assert fired == []
    finally:
        grab.unregister()


def test_wayland_portal_backend_rejects_invalid_keys_before_the_bus(qapp):
    from gui.quick import shortcut_portal

    assert shortcut_portal.PortalShortcut().register("T").status == "invalid"  # the rest: test_shortcut_portal.py
