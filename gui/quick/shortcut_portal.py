"""Wayland: applications cannot grab keys; the XDG desktop portal's org.freedesktop.portal.GlobalShortcuts is the
sanctioned way. QtDBus ships with PySide6-Essentials, but from Python it cannot send BindShortcuts' `a(sa{sv})`
argument (a list of structs needs a C++-registered metatype; libdbus aborts the process when Qt for Python
tries), so this backend only asks whether the portal is there, to word its answer, and reports unsupported with the
way that works everywhere: bind `qiao popup` as a custom shortcut in GNOME/KDE settings.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QObject

from gui.quick.shortcut import ShortcutBackend, ShortcutResult, parse_keys, unsupported, wayland_hint

PORTAL = "org.freedesktop.portal.Desktop"
PORTAL_PATH = "/org/freedesktop/portal/desktop"
INTERFACE = "org.freedesktop.portal.GlobalShortcuts"
PROBE_TIMEOUT_MS = 300  # the GUI never waits longer than this for the session bus


def portal_version() -> int | None:
    """GlobalShortcuts' version on the session bus's portal, or None (no bus, no portal, no such interface)."""
    try:
        from PySide6.QtDBus import QDBus, QDBusConnection, QDBusMessage
    except ImportError:
        return None
    bus = QDBusConnection.sessionBus()
    if not bus.isConnected():
        return None
    msg = QDBusMessage.createMethodCall(PORTAL, PORTAL_PATH, "org.freedesktop.DBus.Properties", "Get")
    msg.setArguments([INTERFACE, "version"])
    reply = bus.call(msg, QDBus.CallMode.Block, PROBE_TIMEOUT_MS)
    if reply.type() != QDBusMessage.MessageType.ReplyMessage or not reply.arguments():
        return None
    value = reply.arguments()[0]
    value = getattr(value, "variant", lambda: value)()
    return value if isinstance(value, int) else None


class PortalShortcut(ShortcutBackend):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent=parent)

    def register(self, sequence: str) -> ShortcutResult:
        keys = parse_keys(sequence)
        if isinstance(keys, ShortcutResult):
            return keys
        if portal_version() is None:
            return unsupported(wayland_hint())
        return unsupported(
            QCoreApplication.translate(
                "QuickShortcut",
                "The desktop offers global shortcuts through its portal, but Qiao cannot use them yet: bind "
                "`qiao popup` as a custom shortcut in GNOME/KDE settings.",
            )
        )
