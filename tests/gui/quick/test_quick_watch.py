"""Clipboard watching: new English text only, debounced, pausable, never Qiao's copies, secrets or huge text."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData

from gui.quick.clipboard_text import MAX_CHARS, copy_as_qiao
from gui.quick.clipboard_watch import ClipboardWatcher


@pytest.fixture
def watcher(clipboard):
    w = ClipboardWatcher(clipboard, debounce_ms=20)
    w.set_enabled(True)
    offered: list[str] = []
    skipped: list[str] = []
    w.text_ready.connect(offered.append)
    w.skipped.connect(skipped.append)
    return w, offered, skipped


def settle(qtbot, *lists: list, count: int = 1) -> None:
    """Until the watcher has reported `count` outcomes (offered or skipped) in total; a bare wait without lists."""
    if not lists:
        qtbot.wait(150)  # for "nothing happens": well past the 20 ms debounce
        return
    qtbot.waitUntil(lambda: sum(len(x) for x in lists) >= count, timeout=3000)
    qtbot.wait(40)  # and nothing more arrives


def test_new_english_text_is_offered_once(watcher, clipboard, qtbot):
    _w, offered, skipped = watcher
    clipboard.setText("Thank you very much.")
    settle(qtbot, offered, skipped)
    clipboard.setText("Thank you very much.")
    settle(qtbot, offered, skipped, count=2)
    assert offered == ["Thank you very much."] and skipped == ["unchanged"]


def test_a_burst_of_changes_is_read_once_at_the_end(watcher, clipboard, qtbot):
    _w, offered, skipped = watcher
    for text in ("Hello", "Hello wor", "Hello world"):
        clipboard.setText(text)
    settle(qtbot, offered, skipped)
    assert offered == ["Hello world"]


@pytest.mark.parametrize(
    ("setup", "reason"),
    [
        (lambda c: copy_as_qiao(c, "Copied from Qiao itself"), "copied from Qiao"),
        (lambda c: c.setText("谢谢你"), "not English"),
        (lambda c: c.setText("word " * (MAX_CHARS // 4)), "too long"),
        (lambda c: c.setText("   "), "empty"),
    ],
)
def test_skipped(watcher, clipboard, qtbot, setup, reason):
    _w, offered, skipped = watcher
    setup(clipboard)
    settle(qtbot, offered, skipped)
    assert offered == [] and skipped == [reason]


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("x-kde-passwordManagerHint", b"secret"),
        ('application/x-qt-windows-mime;value="ExcludeClipboardContentFromMonitorProcessing"', b""),
        ('application/x-qt-windows-mime;value="CanIncludeInClipboardHistory"', b"\0\0\0\0"),
        ("org.nspasteboard.ConcealedType", b""),
    ],
)
def test_password_manager_content_is_never_offered(watcher, clipboard, qtbot, fmt, data):
    _w, offered, skipped = watcher
    m = QMimeData()
    m.setText("correct horse battery staple")
    m.setData(fmt, data)
    clipboard.setMimeData(m)
    settle(qtbot, offered, skipped)
    assert offered == [] and skipped == ["password manager"]


def test_non_text_is_skipped(watcher, clipboard, qtbot):
    _w, offered, skipped = watcher
    m = QMimeData()
    m.setData("image/png", b"\x89PNG")
    clipboard.setMimeData(m)
    settle(qtbot, offered, skipped)
    assert offered == [] and skipped == ["not text"]


def test_paused_and_disabled_watchers_read_nothing(watcher, clipboard, qtbot):
    w, offered, skipped = watcher
    w.set_paused(True)
    clipboard.setText("While paused")
    settle(qtbot)
    w.set_paused(False)
    w.set_enabled(False)
    clipboard.setText("While off")
    settle(qtbot)
    assert offered == [] and skipped == []
    w.set_enabled(True)
    clipboard.setText("Back on")
    settle(qtbot, offered, skipped)
    assert offered == ["Back on"]


def test_any_language_when_not_english_only(clipboard, qtbot):
    w = ClipboardWatcher(clipboard, debounce_ms=10, english_only=False)
    w.set_enabled(True)
    offered: list[str] = []
    w.text_ready.connect(offered.append)
    clipboard.setText("谢谢你")
    settle(qtbot, offered)
    assert offered == ["谢谢你"]
