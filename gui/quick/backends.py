"""The global shortcut's backend for the running platform.

Apart from gui/quick/shortcut.py because each backend imports that module's interface: choosing among them there
made every backend and the interface one import circle.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject
from PySide6.QtGui import QGuiApplication

from gui.quick.shortcut import ShortcutBackend, wayland_hint


def backend_for_platform(parent: QObject | None = None) -> ShortcutBackend:
    """X11 → XGrabKey; Windows → RegisterHotKey; macOS → Carbon hot keys; Wayland → the desktop portal, else
    the unsupported backend that says how to bind `qiao popup` instead."""
    platform = QGuiApplication.platformName()
    if sys.platform == "win32":
        from gui.quick.shortcut_windows import WindowsShortcut

        return WindowsShortcut(parent)
    if sys.platform == "darwin":
        from gui.quick.shortcut_macos import MacShortcut

        return MacShortcut(parent)
    if platform == "xcb":
        from gui.quick.shortcut_x11 import X11Shortcut

        return X11Shortcut(parent=parent)
    if platform.startswith("wayland"):
        from gui.quick.shortcut_portal import PortalShortcut

        return PortalShortcut(parent)
    return ShortcutBackend(wayland_hint(), parent)
