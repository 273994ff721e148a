"""X11 global shortcut: XGrabKey on the root window through ctypes on libX11 (no new dependency).

The grab uses its own X connection and a QSocketNotifier on its file descriptor, rather than Qt's xcb connection
and a native event filter: key events of a passive grab go to the client that made it, so this works under any Qt
platform plugin with a DISPLAY, and it needs no xcb event parsing. Every combination of NumLock and CapsLock is
grabbed too (X matches modifiers exactly), and a BadAccess from the server — another client holds the keys — is
reported as a conflict.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import time
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, QSocketNotifier

from gui.quick.shortcut import Keys, ShortcutBackend, ShortcutResult, conflict, ok, parse_keys, unsupported

SHIFT, LOCK, CONTROL, MOD1, MOD4 = 1, 2, 4, 8, 64
BAD_ACCESS = 10
KEY_PRESS = 2
GRAB_MODE_ASYNC = 1
_MODS = {"shift": SHIFT, "ctrl": CONTROL, "alt": MOD1, "meta": MOD4}
_KEYSYMS = {"PageUp": "Prior", "PageDown": "Next", "Space": "space"}


class XErrorEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("resourceid", ctypes.c_ulong),
        ("serial", ctypes.c_ulong),
        ("error_code", ctypes.c_ubyte),
        ("request_code", ctypes.c_ubyte),
        ("minor_code", ctypes.c_ubyte),
    ]


class XKeyEvent(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", ctypes.c_ulong),
        ("root", ctypes.c_ulong),
        ("subwindow", ctypes.c_ulong),
        ("time", ctypes.c_ulong),
        ("x", ctypes.c_int),
        ("y", ctypes.c_int),
        ("x_root", ctypes.c_int),
        ("y_root", ctypes.c_int),
        ("state", ctypes.c_uint),
        ("keycode", ctypes.c_uint),
        ("same_screen", ctypes.c_int),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("type", ctypes.c_int), ("xkey", XKeyEvent), ("pad", ctypes.c_long * 24)]


class XModifierKeymap(ctypes.Structure):
    _fields_ = [("max_keypermod", ctypes.c_int), ("modifiermap", ctypes.POINTER(ctypes.c_ubyte))]


ERROR_HANDLER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(XErrorEvent))
_lib: Any = None


def libx11() -> Any:
    """libX11 with the prototypes used here, or None where it is not installed."""
    global _lib
    if _lib is None:
        path = ctypes.util.find_library("X11") or "libX11.so.6"
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            _lib = False
            return None
        vp, ul, ci = ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int
        for name, res, args in (
            ("XOpenDisplay", vp, [ctypes.c_char_p]),
            ("XCloseDisplay", ci, [vp]),
            ("XDefaultRootWindow", ul, [vp]),
            ("XStringToKeysym", ul, [ctypes.c_char_p]),
            ("XKeysymToKeycode", ctypes.c_ubyte, [vp, ul]),
            ("XGrabKey", ci, [vp, ci, ctypes.c_uint, ul, ci, ci, ci]),
            ("XUngrabKey", ci, [vp, ci, ctypes.c_uint, ul]),
            ("XSync", ci, [vp, ci]),
            ("XFlush", ci, [vp]),
            ("XPending", ci, [vp]),
            ("XNextEvent", ci, [vp, ctypes.POINTER(XEvent)]),
            ("XConnectionNumber", ci, [vp]),
            ("XSetErrorHandler", vp, [vp]),
            ("XGetModifierMapping", ctypes.POINTER(XModifierKeymap), [vp]),
            ("XFreeModifiermap", ci, [ctypes.POINTER(XModifierKeymap)]),
        ):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        _lib = lib
    return _lib or None


def numlock_mask(lib: Any, dpy: int) -> int:
    """The modifier bit NumLock sets on this server (Mod2 almost everywhere, but it is configurable)."""
    num = lib.XKeysymToKeycode(dpy, lib.XStringToKeysym(b"Num_Lock"))
    keymap = lib.XGetModifierMapping(dpy)
    if not keymap:
        return 16
    try:
        per = keymap.contents.max_keypermod
        for mod in range(8):
            for i in range(per):
                if num and keymap.contents.modifiermap[mod * per + i] == num:
                    return 1 << mod
    finally:
        lib.XFreeModifiermap(keymap)
    return 16


def open_display(lib: Any, name: str, attempts: int = 3) -> int | None:
    """XOpenDisplay, tried again briefly: a server busy with other clients now and then refuses one connection
    (measured under Xvfb: about 1 in 75 rapid connects), and registering happens once, at start or on a change."""
    for attempt in range(attempts):
        dpy = lib.XOpenDisplay(name.encode() if name else None)
        if dpy:
            return dpy
        if attempt + 1 < attempts:
            time.sleep(0.02)
    return None


class X11Shortcut(ShortcutBackend):
    """One grabbed key combination on one X display (`display` defaults to $DISPLAY)."""

    def __init__(self, display: str | None = None, parent: QObject | None = None) -> None:
        super().__init__(parent=parent)
        self._display_name = display
        self._dpy: int | None = None
        self._grabs: list[tuple[int, int]] = []
        self._keycode = 0
        self._notifier: QSocketNotifier | None = None

    def register(self, sequence: str) -> ShortcutResult:
        self.unregister()
        keys = parse_keys(sequence)
        if isinstance(keys, ShortcutResult):
            return keys
        lib = libx11()
        if lib is None:
            return unsupported(
                QCoreApplication.translate(
                    "QuickShortcut", "libX11 is not installed, so no X11 shortcut can be registered."
                )
            )
        name = self._display_name or os.environ.get("DISPLAY", "")
        dpy = open_display(lib, name)
        if not dpy:
            return unsupported(
                QCoreApplication.translate("QuickShortcut", "Cannot reach the X display “{name}”.").format(name=name)
            )
        result = self._grab(lib, dpy, keys, sequence)
        if not result.ok:
            lib.XCloseDisplay(dpy)
            return result
        self._dpy = dpy
        self.sequence = sequence
        self._notifier = QSocketNotifier(lib.XConnectionNumber(dpy), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._drain)
        self._drain()  # XSync may already have queued events
        return result

    def _grab(self, lib: Any, dpy: int, keys: Keys, sequence: str) -> ShortcutResult:
        keysym = lib.XStringToKeysym(
            _KEYSYMS.get(keys.key, keys.key.lower() if len(keys.key) == 1 else keys.key).encode()
        )
        keycode = lib.XKeysymToKeycode(dpy, keysym) if keysym else 0
        if not keycode:
            return unsupported(
                QCoreApplication.translate("QuickShortcut", "This keyboard has no key for “{sequence}”.").format(
                    sequence=sequence
                )
            )
        mask = 0
        for m in keys.modifiers:
            mask |= _MODS[m]
        num = numlock_mask(lib, dpy)
        root = lib.XDefaultRootWindow(dpy)
        errors: list[int] = []

        def on_error(_dpy: int, event: Any) -> int:
            errors.append(event.contents.error_code)
            return 0

        handler = ERROR_HANDLER(on_error)
        previous = lib.XSetErrorHandler(ctypes.cast(handler, ctypes.c_void_p))
        grabs = [(keycode, mask | extra) for extra in sorted({0, LOCK, num, num | LOCK})]
        try:
            for code, mods in grabs:
                lib.XGrabKey(dpy, code, mods, root, 1, GRAB_MODE_ASYNC, GRAB_MODE_ASYNC)
            lib.XSync(dpy, 0)
        finally:
            lib.XSetErrorHandler(previous)
        if errors:
            for code, mods in grabs:  # free the variants that did succeed
                lib.XUngrabKey(dpy, code, mods, root)
            lib.XSync(dpy, 0)
            if BAD_ACCESS in errors:
                return conflict(
                    QCoreApplication.translate(
                        "QuickShortcut", "{sequence} is already taken by another application."
                    ).format(sequence=sequence)
                )
            return unsupported(
                QCoreApplication.translate("QuickShortcut", "The X server refused {sequence} (error {code}).").format(
                    sequence=sequence, code=errors[0]
                )
            )
        self._grabs, self._keycode, self._root = grabs, keycode, root
        return ok()

    def _drain(self) -> None:
        lib = libx11()
        if self._dpy is None or lib is None:
            return
        event = XEvent()
        fired = False
        while lib.XPending(self._dpy):
            lib.XNextEvent(self._dpy, ctypes.byref(event))
            if event.type == KEY_PRESS and event.xkey.keycode == self._keycode:
                fired = True
        if fired:  # one activation per batch: a held key's auto-repeat does not open the popup ten times
            self.activated.emit()

    def unregister(self) -> None:
        lib = libx11()
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
            self._notifier = None
        if self._dpy is not None and lib is not None:
            for code, mods in self._grabs:
                lib.XUngrabKey(self._dpy, code, mods, self._root)
            lib.XSync(self._dpy, 0)
            lib.XCloseDisplay(self._dpy)
        self._dpy, self._grabs = None, []
        super().unregister()
