"""Copy twice: the same text twice within 0.5 s, by QClipboard.dataChanged and a clock the test moves."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData

from gui.quick.clipboard_text import copy_as_qiao
from gui.quick.copy_twice import CopyTwice

from .fakes import FakeClock


@pytest.fixture
def detector(clipboard):
    clock = FakeClock()
    d = CopyTwice(clipboard, clock=clock)
    d.set_enabled(True)
    fired: list[str] = []
    d.triggered.connect(fired.append)
    return d, clock, fired


def test_same_text_twice_within_half_a_second_fires(detector, clipboard):
    _d, clock, fired = detector
    clipboard.setText("Thank you very much.")
    clock.advance(0.3)
    clipboard.setText("Thank you very much.")
    assert fired == ["Thank you very much."]


def test_exactly_at_the_limit_fires_just_after_does_not(detector, clipboard):
    _d, clock, fired = detector
    clipboard.setText("a b")
    clock.advance(0.5)
    clipboard.setText("a b")
    assert fired == ["a b"]
    clipboard.setText("c d")
    clock.advance(0.51)
    clipboard.setText("c d")
    assert fired == ["a b"]


def test_different_texts_do_not_fire(detector, clipboard):
    _d, clock, fired = detector
    clipboard.setText("one")
    clock.advance(0.1)
    clipboard.setText("two")
    assert fired == []


def test_a_third_copy_starts_a_new_pair(detector, clipboard):
    _d, clock, fired = detector
    for _ in range(3):
        clipboard.setText("x y")
        clock.advance(0.1)
    assert fired == ["x y"]
    clipboard.setText("x y")
    assert fired == ["x y", "x y"]


def test_one_copy_reported_twice_at_the_same_instant_is_one_copy(detector, clipboard):
    d, _clock, fired = detector
    clipboard.setText("dup")
    d._changed()  # the platform's second dataChanged for the same copy, at the same clock reading
    assert fired == []


def test_off_by_default_and_when_disabled(clipboard):
    clock = FakeClock()
    d = CopyTwice(clipboard, clock=clock)
    fired: list[str] = []
    d.triggered.connect(fired.append)
    clipboard.setText("z")
    clock.advance(0.1)
    clipboard.setText("z")
    assert fired == []


def test_qiao_copies_and_secrets_never_count(detector, clipboard):
    _d, clock, fired = detector
    copy_as_qiao(clipboard, "你好")
    clock.advance(0.1)
    copy_as_qiao(clipboard, "你好")
    secret = QMimeData()
    secret.setText("hunter2")
    secret.setData("x-kde-passwordManagerHint", b"secret")
    clipboard.setMimeData(secret)
    clock.advance(0.1)
    again = QMimeData()
    again.setText("hunter2")
    again.setData("x-kde-passwordManagerHint", b"secret")
    clipboard.setMimeData(again)
    assert fired == []
