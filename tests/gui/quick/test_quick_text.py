"""What the popup reads: selection before clipboard, text only, not huge, never a password manager's secret."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QMimeData
from PySide6.QtGui import QClipboard

from gui.quick.clipboard_text import (
    MAX_CHARS,
    OWN_COPY_MIME,
    check_text,
    copy_as_qiao,
    is_concealed,
    is_qiao_copy,
    looks_english,
    read_for_popup,
)


def mime(text: str | None = None) -> QMimeData:
    m = QMimeData()
    if text is not None:
        m.setText(text)
    return m


def with_format(text: str, fmt: str, data: bytes) -> QMimeData:
    m = QMimeData()
    m.setText(text)
    m.setData(fmt, data)
    return m


class Board:
    """A QClipboard's reading side, with a selection (X11/Wayland) or without (Windows/macOS)."""

    def __init__(self, clipboard: QMimeData | None, selection: QMimeData | None = None, has_selection=True):
        self.modes = {QClipboard.Mode.Clipboard: clipboard, QClipboard.Mode.Selection: selection}
        self.has_selection = has_selection

    def supportsSelection(self) -> bool:
        return self.has_selection

    def mimeData(self, mode=QClipboard.Mode.Clipboard):
        return self.modes[mode]


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("x-kde-passwordManagerHint", b"secret"),
        ('application/x-qt-windows-mime;value="ExcludeClipboardContentFromMonitorProcessing"', b"\x01"),
        ('application/x-qt-windows-mime;value="CanIncludeInClipboardHistory"', b"\x00\x00\x00\x00"),
        ("org.nspasteboard.ConcealedType", b""),
        ("org.nspasteboard.TransientType", b""),
    ],
)
def test_password_manager_hints_conceal_the_content(qapp, fmt, data):
    assert is_concealed(with_format("hunter2", fmt, data))


@pytest.mark.parametrize(
    ("fmt", "data"),
    [
        ("x-kde-passwordManagerHint", b"public"),
        ('application/x-qt-windows-mime;value="CanIncludeInClipboardHistory"', b"\x01\x00\x00\x00"),
        ("text/html", b"<b>hi</b>"),
    ],
)
def test_other_formats_do_not(qapp, fmt, data):
    assert not is_concealed(with_format("hello world", fmt, data))


def test_qiao_copies_are_marked(clipboard):
    copy_as_qiao(clipboard, "你好")
    data = clipboard.mimeData()
    assert data.text() == "你好" and data.hasFormat(OWN_COPY_MIME) and is_qiao_copy(data)
    clipboard.setText("someone else's")
    assert not is_qiao_copy(clipboard.mimeData())


@pytest.mark.parametrize(
    ("text", "english"),
    [
        ("Thank you very much.", True),
        ("It costs 5 €", True),
        ("谢谢你", False),
        ("12345 678", False),
        ("中文里有一个 word", False),
        ("", False),
    ],
)
def test_english_looking_text(text, english):
    assert looks_english(text) is english


def test_check_text_rules(qapp):
    assert check_text("  Hello world. \n").text == "Hello world."
    assert check_text("   ").problem.startswith("Nothing selected")
    assert check_text(None, has_other_data=True).problem.startswith("The clipboard holds no text")
    huge = check_text("a" * (MAX_CHARS + 1))
    assert huge.text is None and "20,001" in huge.problem and "20,000" in huge.problem
    assert check_text("a" * MAX_CHARS).text is not None


def test_primary_selection_wins_when_it_has_text(qapp):
    grab = read_for_popup(Board(mime("from the clipboard"), mime("from the selection")))
    assert (grab.text, grab.source) == ("from the selection", "selection")


@pytest.mark.parametrize("selection", [None, QMimeData(), "  "])
def test_empty_selection_falls_back_to_the_clipboard(qapp, selection):
    sel = mime(selection) if isinstance(selection, str) else selection
    grab = read_for_popup(Board(mime("from the clipboard"), sel))
    assert (grab.text, grab.source) == ("from the clipboard", "clipboard")


def test_no_selection_on_this_platform_reads_the_clipboard(qapp):
    grab = read_for_popup(Board(mime("copied"), mime("ignored"), has_selection=False))
    assert grab.text == "copied"


def test_a_concealed_selection_is_skipped_and_a_concealed_clipboard_refused(qapp):
    secret = with_format("hunter2", "x-kde-passwordManagerHint", b"secret")
    assert read_for_popup(Board(mime("plain"), secret)).text == "plain"
    grab = read_for_popup(Board(secret, None))
    assert grab.text is None and "password" in grab.problem


def test_an_image_on_the_clipboard_is_not_text(qapp):
    image = QMimeData()
    image.setData("image/png", b"\x89PNG....")
    grab = read_for_popup(Board(image, None))
    assert grab.text is None and "no text" in grab.problem


def test_a_huge_selection_is_refused_not_cut(qapp):
    grab = read_for_popup(Board(None, mime("word " * 5000)))
    assert grab.text is None and "too long" in grab.problem
