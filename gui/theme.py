"""Light/dark: follow the OS by default; an explicit choice uses Qt's colour-scheme request where the platform
honours it (Windows 11, macOS, recent GNOME/KDE) and a Fusion palette where it does not (bare X11, Xvfb).

Fusion draws a check box's or radio button's outline from the window colour made darker: on a dark palette that is
near-black on a near-black box, and an unchecked box is all but invisible. `VisibleIndicators` draws a light outline
over Fusion's own whenever the palette is dark.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

_original: dict[str, object] = {}


def _dark_palette() -> QPalette:
    p = QPalette()
    window, base, text = QColor(0x2B, 0x2D, 0x31), QColor(0x1F, 0x20, 0x23), QColor(0xE8, 0xE8, 0xE8)
    p.setColor(QPalette.ColorRole.Window, window)
    p.setColor(QPalette.ColorRole.WindowText, text)
    p.setColor(QPalette.ColorRole.Base, base)
    p.setColor(QPalette.ColorRole.AlternateBase, window)
    p.setColor(QPalette.ColorRole.ToolTipBase, QColor(0x3A, 0x3C, 0x41))
    p.setColor(QPalette.ColorRole.ToolTipText, text)
    p.setColor(QPalette.ColorRole.PlaceholderText, QColor(0x8E, 0x90, 0x96))
    p.setColor(QPalette.ColorRole.Text, text)
    p.setColor(QPalette.ColorRole.Button, QColor(0x37, 0x39, 0x3E))
    p.setColor(QPalette.ColorRole.ButtonText, text)
    p.setColor(QPalette.ColorRole.BrightText, QColor(0xFF, 0x6B, 0x6B))
    p.setColor(QPalette.ColorRole.Light, QColor(0x48, 0x4A, 0x50))
    p.setColor(QPalette.ColorRole.Midlight, QColor(0x3E, 0x40, 0x45))
    p.setColor(QPalette.ColorRole.Mid, QColor(0x30, 0x32, 0x36))
    p.setColor(QPalette.ColorRole.Dark, QColor(0x18, 0x19, 0x1B))
    p.setColor(QPalette.ColorRole.Shadow, QColor(0x0E, 0x0E, 0x10))
    p.setColor(QPalette.ColorRole.Highlight, QColor(0x3D, 0x8B, 0xFD))
    p.setColor(QPalette.ColorRole.HighlightedText, QColor(0xFF, 0xFF, 0xFF))
    p.setColor(QPalette.ColorRole.Link, QColor(0x6C, 0xB4, 0xFF))
    p.setColor(QPalette.ColorRole.LinkVisited, QColor(0xB3, 0x9D, 0xFF))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.WindowText, QPalette.ColorRole.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor(0x80, 0x82, 0x88))
    return p


_BOXES = (QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck)


def indicator_outline(palette: QPalette) -> QColor:
    """The outline of a check box or radio button on a dark palette: the placeholder grey, about 4:1 against the
    box (WCAG's 3:1 for the parts of a control one must see)."""
    return palette.color(QPalette.ColorRole.PlaceholderText)


class VisibleIndicators(QProxyStyle):
    """Fusion, with check boxes and radio buttons outlined so that an unchecked one shows on a dark palette."""

    def drawPrimitive(
        self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter, widget: QWidget | None = None
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        radio = element == QStyle.PrimitiveElement.PE_IndicatorRadioButton
        if not (radio or element in _BOXES) or not is_dark(option.palette):
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(indicator_outline(option.palette), 1.0))
        rect = QRectF(option.rect).adjusted(0.5, 0.5, -0.5, -0.5)
        if radio:
            painter.drawEllipse(rect)
        else:
            painter.drawRoundedRect(rect, 1.5, 1.5)
        painter.restore()


def is_dark(palette: QPalette | None = None) -> bool:
    """Whether the current palette reads as dark (window darker than its text)."""
    pal = palette or QGuiApplication.palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < pal.color(QPalette.ColorRole.WindowText).lightness()


def apply_theme(app: QApplication, mode: str) -> None:
    """`mode` is "system", "light" or "dark"; safe to call again when the setting changes."""
    if not _original:
        _original["style"] = app.style().name()
        _original["palette"] = QPalette(app.palette())
    hints = app.styleHints()
    if mode == "system":
        hints.unsetColorScheme()
        if app.style().name() != _original["style"]:
            app.setStyle(str(_original["style"]))
        app.setPalette(_original["palette"])  # type: ignore[arg-type]
        return
    want_dark = mode == "dark"
    hints.setColorScheme(Qt.ColorScheme.Dark if want_dark else Qt.ColorScheme.Light)
    QApplication.processEvents()
    if is_dark(app.palette()) == want_dark:
        return
    # The platform ignored the request: draw it ourselves with Fusion, which follows the palette everywhere (with
    # outlined check boxes, for the dark palette).
    if not isinstance(app.style(), VisibleIndicators):
        style = VisibleIndicators(QStyleFactory.create("Fusion"))
        _original["proxy"] = style  # Python keeps its wrapper alive while the application uses it
        app.setStyle(style)
    app.setPalette(_dark_palette() if want_dark else app.style().standardPalette())
