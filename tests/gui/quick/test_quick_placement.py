"""The popup stays next to the pointer and entirely on the pointer's screen."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, QSize

from gui.quick.placement import OFFSET, place

SCREEN = QRect(0, 0, 1920, 1080)
SIZE = QSize(420, 200)


def inside(pos: QPoint, size: QSize, screen: QRect) -> bool:
    return screen.contains(QRect(pos, size))


def test_below_right_of_the_pointer_when_there_is_room():
    assert place(QPoint(100, 100), SIZE, SCREEN) == QPoint(100 + OFFSET.x(), 100 + OFFSET.y())


def test_flips_left_near_the_right_edge_and_up_near_the_bottom():
    pos = place(QPoint(1900, 1070), SIZE, SCREEN)
    assert pos == QPoint(1900 - OFFSET.x() - 420, 1070 - OFFSET.y() - 200)
    assert inside(pos, SIZE, SCREEN)


@pytest.mark.parametrize(
    "cursor", [QPoint(0, 0), QPoint(1919, 0), QPoint(0, 1079), QPoint(1919, 1079), QPoint(960, 540), QPoint(300, 1050)]
)
def test_always_on_screen(cursor):
    assert inside(place(cursor, SIZE, SCREEN), SIZE, SCREEN)


def test_second_screen_to_the_right_and_a_top_panel():
    right = QRect(1920, 32, 1280, 992)  # a second monitor, its top 32 px taken by a panel
    pos = place(QPoint(2000, 40), SIZE, right)
    assert inside(pos, SIZE, right) and pos.x() >= 1920 and pos.y() >= 32


def test_screen_to_the_left_with_negative_coordinates():
    left = QRect(-1280, 0, 1280, 1024)
    pos = place(QPoint(-5, 500), SIZE, left)
    assert inside(pos, SIZE, left)


def test_a_popup_larger_than_the_screen_keeps_its_top_left_visible():
    small = QRect(0, 0, 300, 150)
    assert place(QPoint(150, 75), SIZE, small) == QPoint(0, 0)
