"""The app icon, from PNGs rendered at every size so high-DPI screens and small menus both get a crisp one."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QIcon

ASSETS = Path(__file__).resolve().parent / "assets"


def app_icon() -> QIcon:
    icon = QIcon()
    for png in sorted(ASSETS.glob("qiao-*.png")):
        icon.addFile(str(png))
    return icon
