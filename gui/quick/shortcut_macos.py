"""macOS global shortcut: Carbon's RegisterEventHotKey through ctypes.

Hot keys registered this way need no Accessibility (or Input Monitoring) permission: the system delivers only
the registered combination to the app, it does not let the app read other keys. (Reading the selection of
another app would need Accessibility; Qiao reads the clipboard there instead.) Qt writes ⌘ as "Ctrl" on macOS,
so Ctrl+Alt+T means ⌘⌥T, as in Qt's own shortcuts; "Meta" is the Control key.
"""

from __future__ import annotations

import ctypes
import sys
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject

from gui.quick.shortcut import Keys, ShortcutBackend, ShortcutResult, conflict, ok, parse_keys, unsupported

CMD, SHIFT, OPTION, CONTROL = 1 << 8, 1 << 9, 1 << 11, 1 << 12
EVENT_HOT_KEY_EXISTS = -9878
K_EVENT_CLASS_KEYBOARD = int.from_bytes(b"keyb", "big")
K_EVENT_HOT_KEY_PRESSED = 5
SIGNATURE = int.from_bytes(b"Qiao", "big")
_MODS = {"ctrl": CMD, "shift": SHIFT, "alt": OPTION, "meta": CONTROL}
# Virtual key codes of the ANSI layout (Carbon's kVK_* constants): hot keys name physical keys.
_ANSI = dict(zip("ASDFHGZXCV", range(10), strict=True)) | {
    "B": 11, "Q": 12, "W": 13, "E": 14, "R": 15, "Y": 16, "T": 17, "1": 18, "2": 19, "3": 20, "4": 21, "6": 22,
    "5": 23, "9": 25, "7": 26, "8": 28, "0": 29, "O": 31, "U": 32, "I": 34, "P": 35, "L": 37, "J": 38, "K": 40,
    "N": 45, "M": 46,
}  # fmt: skip
_NAMED = {
    "Return": 36, "Tab": 48, "Space": 49, "Delete": 117, "Escape": 53, "Home": 115, "End": 119, "PageUp": 116,
    "PageDown": 121, "Left": 123, "Right": 124, "Down": 125, "Up": 126,
    "F1": 122, "F2": 120, "F3": 99, "F4": 118, "F5": 96, "F6": 97, "F7": 98, "F8": 100, "F9": 101, "F10": 109,
    "F11": 103, "F12": 111, "F13": 105, "F14": 107, "F15": 113, "F16": 106, "F17": 64, "F18": 79, "F19": 80,
    "F20": 90,
}  # fmt: skip


def mac_codes(keys: Keys) -> tuple[int, int] | None:
    """(Carbon modifier mask, virtual key code), or None for a key Carbon has no code for."""
    code = _ANSI.get(keys.key.upper()) if len(keys.key) == 1 else _NAMED.get(keys.key)
    if code is None:
        return None
    mods = 0
    for name in keys.modifiers:
        mods |= _MODS[name]
    return mods, code


class EventTypeSpec(ctypes.Structure):
    _fields_ = [("eventClass", ctypes.c_uint32), ("eventKind", ctypes.c_uint32)]


class EventHotKeyID(ctypes.Structure):
    _fields_ = [("signature", ctypes.c_uint32), ("id", ctypes.c_uint32)]


HANDLER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class MacShortcut(ShortcutBackend):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent=parent)
        self._carbon: Any = None
        self._handler_ref = ctypes.c_void_p()
        self._hotkey_ref = ctypes.c_void_p()
        self._callback: Any = None

    def _install(self) -> Any:
        carbon = ctypes.CDLL("/System/Library/Frameworks/Carbon.framework/Carbon")
        carbon.GetApplicationEventTarget.restype = ctypes.c_void_p
        carbon.InstallEventHandler.argtypes = [
            ctypes.c_void_p, HANDLER, ctypes.c_ulong, ctypes.POINTER(EventTypeSpec), ctypes.c_void_p,
            ctypes.POINTER(ctypes.c_void_p),
        ]  # fmt: skip
        carbon.RegisterEventHotKey.argtypes = [
            ctypes.c_uint32, ctypes.c_uint32, EventHotKeyID, ctypes.c_void_p, ctypes.c_uint32,
            ctypes.POINTER(ctypes.c_void_p),
        ]  # fmt: skip
        carbon.UnregisterEventHotKey.argtypes = [ctypes.c_void_p]
        self._callback = HANDLER(self._pressed)
        spec = EventTypeSpec(K_EVENT_CLASS_KEYBOARD, K_EVENT_HOT_KEY_PRESSED)
        target = carbon.GetApplicationEventTarget()
        carbon.InstallEventHandler(target, self._callback, 1, ctypes.byref(spec), None, ctypes.byref(self._handler_ref))
        return carbon

    def _pressed(self, _call: int, _event: int, _data: int) -> int:
        self.activated.emit()
        return 0

    def register(self, sequence: str) -> ShortcutResult:
        self.unregister()
        keys = parse_keys(sequence)
        if isinstance(keys, ShortcutResult):
            return keys
        if sys.platform != "darwin":
            return unsupported("Carbon hot keys exist only on macOS.")
        codes = mac_codes(keys)
        if codes is None:
            return unsupported(
                QCoreApplication.translate("QuickShortcut", "This keyboard has no key for “{sequence}”.").format(
                    sequence=sequence
                )
            )
        if self._carbon is None:
            self._carbon = self._install()
        mods, code = codes
        status = self._carbon.RegisterEventHotKey(
            code, mods, EventHotKeyID(SIGNATURE, 1), self._carbon.GetApplicationEventTarget(), 0,
            ctypes.byref(self._hotkey_ref),
        )  # fmt: skip
        if status == EVENT_HOT_KEY_EXISTS:
            return conflict(
                QCoreApplication.translate(
                    "QuickShortcut", "{sequence} is already taken by another application."
                ).format(sequence=sequence)
            )
        if status != 0:
            return unsupported(
                QCoreApplication.translate("QuickShortcut", "macOS refused {sequence} (error {code}).").format(
                    sequence=sequence, code=status
                )
            )
        self.sequence = sequence
        return ok()

    def unregister(self) -> None:
        if self._carbon is not None and self._hotkey_ref.value:
            self._carbon.UnregisterEventHotKey(self._hotkey_ref)
            self._hotkey_ref = ctypes.c_void_p()
        super().unregister()
