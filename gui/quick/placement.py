"""Where the popup goes: just below-right of the mouse, flipped or clamped so it stays on the mouse's screen."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, QSize
from PySide6.QtGui import QGuiApplication

OFFSET = QPoint(14, 18)  # clear of the pointer, so the popup never covers the text under it


def place(cursor: QPoint, size: QSize, available: QRect) -> QPoint:
    """Top-left for a popup of `size` near `cursor`, inside `available` (the screen minus panels)."""
    x = cursor.x() + OFFSET.x()
    y = cursor.y() + OFFSET.y()
    if x + size.width() > available.right() + 1:
        x = cursor.x() - OFFSET.x() - size.width()  # flip to the left of the pointer
    if y + size.height() > available.bottom() + 1:
        y = cursor.y() - OFFSET.y() - size.height()  # flip above the pointer
    x = max(available.left(), min(x, available.right() + 1 - size.width()))
    y = max(available.top(), min(y, available.bottom() + 1 - size.height()))
    return QPoint(x, y)


def available_at(cursor: QPoint) -> QRect:
    """The available geometry of the screen under `cursor` (multi-screen), or the primary screen's."""
    screen = QGuiApplication.screenAt(cursor) or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1024, 768)
