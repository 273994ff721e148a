"""What the quick popup may read from the clipboard or the selection, and what it must leave alone.

Rules shared by the shortcut (read on demand) and by clipboard watching / copy twice (read on change): text only,
not huge, never content a password manager marked as secret, never Qiao's own copies.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QMimeData
from PySide6.QtGui import QClipboard

MAX_CHARS = 20_000
OWN_COPY_MIME = "application/x-qiao-copy"  # on every copy Qiao makes, so watching never translates Qiao's own output

# Formats password managers put next to a secret. Qt names Windows' registered formats
# `application/x-qt-windows-mime;value="Name"` and macOS pasteboard types by their UTI, so a substring match on the
# format name covers every platform's spelling.
_KDE_HINT = "x-kde-passwordManagerHint"
_ALWAYS_SECRET = (
    "ExcludeClipboardContentFromMonitorProcessing",
    "org.nspasteboard.ConcealedType",
    "org.nspasteboard.TransientType",
)
_WIN_HISTORY = "CanIncludeInClipboardHistory"


def is_concealed(mime: QMimeData | None) -> bool:
    """Whether a password manager (KeePassXC, 1Password, Bitwarden, KDE Wallet…) marked this content as secret."""
    if mime is None:
        return False
    for fmt in mime.formats():
        if _KDE_HINT in fmt:
            if bytes(mime.data(fmt).data()).strip(b"\0 \n").lower() == b"secret":
                return True
        elif any(name in fmt for name in _ALWAYS_SECRET):
            return True
        elif _WIN_HISTORY in fmt:
            data = bytes(mime.data(fmt).data())
            if not data or not any(data):  # a DWORD 0: "keep out of clipboard history"
                return True
    return False


def is_qiao_copy(mime: QMimeData | None) -> bool:
    return mime is not None and mime.hasFormat(OWN_COPY_MIME)


def copy_as_qiao(clipboard: QClipboard, text: str) -> None:
    """Put `text` on the clipboard, marked as Qiao's own so clipboard watching and copy twice skip it."""
    mime = QMimeData()
    mime.setText(text)
    mime.setData(OWN_COPY_MIME, b"1")
    clipboard.setMimeData(mime, QClipboard.Mode.Clipboard)


_LATIN = re.compile(r"[A-Za-z]")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")


def looks_english(text: str) -> bool:
    """Latin letters, and more of them than CJK characters: what en→zh clipboard watching translates."""
    latin = len(_LATIN.findall(text))
    return latin >= 2 and latin > 2 * len(_CJK.findall(text))


@dataclass(frozen=True)
class Grab:
    """Text the popup can translate, or the reason it cannot (already in the UI language)."""

    text: str | None
    problem: str | None = None
    source: str = "clipboard"  # "selection" | "clipboard"


def check_text(text: str | None, *, has_other_data: bool = False) -> Grab:
    """Empty / non-text / huge → a problem the popup shows instead of translating."""
    if text is None or not text.strip():
        if has_other_data:
            return Grab(
                None, QCoreApplication.translate("QuickPopup", "The clipboard holds no text (an image or files?).")
            )
        return Grab(
            None,
            QCoreApplication.translate("QuickPopup", "Nothing selected or copied: select some text, then try again."),
        )
    if len(text) > MAX_CHARS:
        return Grab(
            None,
            QCoreApplication.translate(
                "QuickPopup", "The text is too long for the popup ({count:,} characters; at most {limit:,})."
            ).format(count=len(text), limit=MAX_CHARS),
        )
    return Grab(text.strip())


def read_for_popup(clipboard: QClipboard) -> Grab:
    """The primary selection where the platform has one (X11, Wayland) and it holds text, else the clipboard."""
    if clipboard.supportsSelection():
        sel = clipboard.mimeData(QClipboard.Mode.Selection)
        if sel is not None and sel.hasText() and sel.text().strip() and not is_concealed(sel):
            grab = check_text(sel.text())
            return Grab(grab.text, grab.problem, "selection")
    mime = clipboard.mimeData(QClipboard.Mode.Clipboard)
    if is_concealed(mime):
        return Grab(None, QCoreApplication.translate("QuickPopup", "The clipboard holds a password; not translated."))
    text = mime.text() if mime is not None and mime.hasText() else None
    return check_text(text, has_other_data=mime is not None and bool(mime.formats()))
