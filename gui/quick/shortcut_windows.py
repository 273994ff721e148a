"""Windows global shortcut: user32 RegisterHotKey through ctypes; WM_HOTKEY arrives in the GUI thread's message
queue and is picked out by a QAbstractNativeEventFilter. ERROR_HOTKEY_ALREADY_REGISTERED is a conflict."""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from PySide6.QtCore import QAbstractNativeEventFilter, QByteArray, QCoreApplication, QObject

from gui.quick.shortcut import Keys, ShortcutBackend, ShortcutResult, conflict, ok, parse_keys, unsupported

MOD_ALT, MOD_CONTROL, MOD_SHIFT, MOD_WIN, MOD_NOREPEAT = 0x1, 0x2, 0x4, 0x8, 0x4000
WM_HOTKEY = 0x0312
ERROR_HOTKEY_ALREADY_REGISTERED = 1409
HOTKEY_ID = 0x5141  # "QA"; ids below 0xC000 are the application's own
_MODS = {"alt": MOD_ALT, "ctrl": MOD_CONTROL, "shift": MOD_SHIFT, "meta": MOD_WIN}
_VK = {
    "Space": 0x20,
    "Return": 0x0D,
    "Tab": 0x09,
    "Escape": 0x1B,
    "Insert": 0x2D,
    "Delete": 0x2E,
    "Home": 0x24,
    "End": 0x23,
    "PageUp": 0x21,
    "PageDown": 0x22,
    "Left": 0x25,
    "Up": 0x26,
    "Right": 0x27,
    "Down": 0x28,
}


def win_codes(keys: Keys) -> tuple[int, int]:
    """(fsModifiers, virtual-key code) for RegisterHotKey; MOD_NOREPEAT so a held key fires once."""
    mods = MOD_NOREPEAT
    for name in keys.modifiers:
        mods |= _MODS[name]
    if len(keys.key) == 1:
        vk = ord(keys.key.upper())  # VK_A..VK_Z and VK_0..VK_9 are their ASCII codes
    elif keys.key.startswith("F"):
        vk = 0x70 + int(keys.key[1:]) - 1  # VK_F1 = 0x70 … VK_F24 = 0x87
    else:
        vk = _VK[keys.key]
    return mods, vk


class _HotKeyFilter(QAbstractNativeEventFilter):
    def __init__(self, owner: WindowsShortcut) -> None:
        super().__init__()
        self.owner = owner

    def nativeEventFilter(self, event_type: QByteArray | bytes, message: int) -> tuple[bool, int]:
        if bytes(event_type) == b"windows_generic_MSG":
            from ctypes import wintypes

            msg = wintypes.MSG.from_address(int(message))
            if msg.message == WM_HOTKEY and msg.wParam == HOTKEY_ID:
                self.owner.activated.emit()
                return True, 0
        return False, 0


class WindowsShortcut(ShortcutBackend):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent=parent)
        self._filter: _HotKeyFilter | None = None
        self._registered = False

    def register(self, sequence: str) -> ShortcutResult:
        self.unregister()
        keys = parse_keys(sequence)
        if isinstance(keys, ShortcutResult):
            return keys
        if sys.platform != "win32":
            return unsupported("RegisterHotKey exists only on Windows.")
        user32: Any = ctypes.WinDLL("user32", use_last_error=True)  # type: ignore[attr-defined]
        mods, vk = win_codes(keys)
        if not user32.RegisterHotKey(None, HOTKEY_ID, mods, vk):
            err = ctypes.get_last_error()  # type: ignore[attr-defined]
            if err == ERROR_HOTKEY_ALREADY_REGISTERED:
                return conflict(
                    QCoreApplication.translate(
                        "QuickShortcut", "{sequence} is already taken by another application."
                    ).format(sequence=sequence)
                )
            return unsupported(
                QCoreApplication.translate("QuickShortcut", "Windows refused {sequence} (error {code}).").format(
                    sequence=sequence, code=err
                )
            )
        self._registered = True
        self.sequence = sequence
        self._filter = _HotKeyFilter(self)
        app = QCoreApplication.instance()
        if app is not None:
            app.installNativeEventFilter(self._filter)
        return ok()

    def unregister(self) -> None:
        if self._registered and sys.platform == "win32":
            ctypes.WinDLL("user32").UnregisterHotKey(None, HOTKEY_ID)  # type: ignore[attr-defined]
        self._registered = False
        app = QCoreApplication.instance()
        if self._filter is not None and app is not None:
            app.removeNativeEventFilter(self._filter)
        self._filter = None
        super().unregister()
