"""Global shortcut: one interface, one backend per platform.

`register(sequence)` answers with a `ShortcutResult` (ok, conflict with the reason, unsupported with the reason,
invalid); `activated` fires when the user presses the keys anywhere on the desktop; `unregister()` frees them.
gui.quick.backends.backend_for_platform() picks the backend for the running Qt platform; the backends import this
module, never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal
from PySide6.QtGui import QKeySequence

DEFAULT_SHORTCUT = "Ctrl+Alt+T"


@dataclass(frozen=True)
class ShortcutResult:
    status: str  # "ok" | "conflict" | "unsupported" | "invalid"
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def ok() -> ShortcutResult:
    return ShortcutResult("ok")


def conflict(reason: str) -> ShortcutResult:
    return ShortcutResult("conflict", reason)


def unsupported(reason: str) -> ShortcutResult:
    return ShortcutResult("unsupported", reason)


def invalid(reason: str) -> ShortcutResult:
    return ShortcutResult("invalid", reason)


@dataclass(frozen=True)
class Keys:
    """A parsed shortcut: modifier names ("ctrl", "alt", "shift", "meta") and the key's name ("T", "5", "F5",
    "Space"), the form every backend maps to its own codes."""

    modifiers: frozenset[str]
    key: str


_NAMED = {
    Qt.Key.Key_Space: "Space",
    Qt.Key.Key_Return: "Return",
    Qt.Key.Key_Enter: "Return",
    Qt.Key.Key_Tab: "Tab",
    Qt.Key.Key_Insert: "Insert",
    Qt.Key.Key_Delete: "Delete",
    Qt.Key.Key_Home: "Home",
    Qt.Key.Key_End: "End",
    Qt.Key.Key_PageUp: "PageUp",
    Qt.Key.Key_PageDown: "PageDown",
    Qt.Key.Key_Left: "Left",
    Qt.Key.Key_Right: "Right",
    Qt.Key.Key_Up: "Up",
    Qt.Key.Key_Down: "Down",
    Qt.Key.Key_Escape: "Escape",
}


def parse_keys(sequence: str) -> Keys | ShortcutResult:
    """ "Ctrl+Alt+T" → Keys; a ShortcutResult ("invalid") for anything a global shortcut cannot be."""
    seq = QKeySequence(sequence or "")
    if seq.count() != 1 or seq[0].key() == Qt.Key.Key_unknown:
        return invalid(
            QCoreApplication.translate(
                "QuickShortcut", "“{sequence}” is not a single shortcut such as Ctrl+Alt+T."
            ).format(sequence=sequence)
        )
    combo = seq[0]
    key, mods = combo.key(), combo.keyboardModifiers()
    names = set()
    for flag, name in (
        (Qt.KeyboardModifier.ControlModifier, "ctrl"),
        (Qt.KeyboardModifier.AltModifier, "alt"),
        (Qt.KeyboardModifier.ShiftModifier, "shift"),
        (Qt.KeyboardModifier.MetaModifier, "meta"),
    ):
        if mods & flag:
            names.add(name)
    if Qt.Key.Key_A <= key <= Qt.Key.Key_Z or Qt.Key.Key_0 <= key <= Qt.Key.Key_9:
        name = chr(key.value)
    elif Qt.Key.Key_F1 <= key <= Qt.Key.Key_F24:
        name = f"F{key.value - Qt.Key.Key_F1.value + 1}"
    elif key in _NAMED:
        name = _NAMED[key]
    else:
        return invalid(
            QCoreApplication.translate("QuickShortcut", "“{sequence}” uses a key a global shortcut cannot use.").format(
                sequence=sequence
            )
        )
    if not names - {"shift"} and not name.startswith("F"):
        return invalid(
            QCoreApplication.translate(
                "QuickShortcut", "“{sequence}” needs Ctrl, Alt or Meta, or it would take a key used for typing."
            ).format(sequence=sequence)
        )
    return Keys(frozenset(names), name)


class ShortcutBackend(QObject):
    """The interface; this base class is the "unsupported" backend, with its reason.

    `register` answers at once; a backend that must ask someone else (the Wayland portal) answers "pending" and
    delivers the final ShortcutResult later through `result_ready` (the others never emit it)."""

    activated = Signal()
    result_ready = Signal(object)

    def __init__(self, reason: str = "", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._reason = reason
        self.sequence: str | None = None

    def register(self, sequence: str) -> ShortcutResult:
        keys = parse_keys(sequence)
        if isinstance(keys, ShortcutResult):
            return keys
        return unsupported(self._reason or wayland_hint())

    def unregister(self) -> None:
        self.sequence = None


def wayland_hint() -> str:
    return QCoreApplication.translate(
        "QuickShortcut",
        "This desktop does not let applications grab keys: bind `qiao popup` as a custom shortcut in GNOME/KDE "
        "settings.",
    )
