"""Dark mode: an unchecked check box (and radio button) has an outline one can see against the window and the box."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QRadioButton, QStyle, QStyleOptionButton

from gui.theme import apply_theme, is_dark


def _lightness_range(widget, element: QStyle.SubElement) -> tuple[int, int]:
    """The darkest and lightest pixel lightness on the indicator's edge, as the widget paints itself."""
    option = QStyleOptionButton()
    option.initFrom(widget)
    rect = widget.style().subElementRect(element, option, widget)
    image = widget.grab().toImage()
    scale = image.devicePixelRatio()
    edge = [
        QColor(image.pixel(round(x * scale), round(y * scale))).lightness()
        for x in range(rect.left(), rect.right() + 1)
        for y in (rect.top(), rect.top() + 1, rect.bottom() - 1, rect.bottom())
    ]
    return min(edge), max(edge)


@pytest.mark.parametrize(
    ("widget_class", "element"),
    [(QCheckBox, QStyle.SubElement.SE_CheckBoxIndicator), (QRadioButton, QStyle.SubElement.SE_RadioButtonIndicator)],
)
def test_an_unchecked_indicator_is_outlined_in_dark_mode(qapp, qtbot, widget_class, element):
    apply_theme(qapp, "dark")
    assert is_dark(qapp.palette())
    widget = widget_class("Keep a history")
    qtbot.addWidget(widget)
    widget.show()
    assert not widget.isChecked()
    window = qapp.palette().window().color().lightness()
    darkest, lightest = _lightness_range(widget, element)
    # Fusion alone outlines it in the window colour made darker (lightest edge pixel about 45 on a window of 45)
    assert lightest - window >= 80, f"edge lightness {darkest}..{lightest} on a window of {window}"


def test_light_mode_is_left_as_fusion_draws_it(qapp, qtbot):
    apply_theme(qapp, "light")
    box = QCheckBox("Keep a history")
    qtbot.addWidget(box)
    box.show()
    darkest, _ = _lightness_range(box, QStyle.SubElement.SE_CheckBoxIndicator)
    assert darkest < qapp.palette().window().color().lightness() - 40, "a dark outline on a light page"
