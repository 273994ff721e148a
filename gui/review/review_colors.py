"""The review marks' colours, from the editor's palette: quiet on a light page and on a dark one."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette

from gui.theme import is_dark


def _blend(a: QColor, b: QColor, t: float) -> QColor:
    """`t` of the way from a to b (opaque: extra selections are drawn over the text's own background)."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def sentence_highlight(palette: QPalette) -> QColor:
    """The aligned sentences' background: a light tint of the selection colour, never as loud as a selection."""
    base = palette.color(QPalette.ColorRole.Base)
    return _blend(base, palette.color(QPalette.ColorRole.Highlight), 0.28 if is_dark(palette) else 0.16)


def word_highlight(palette: QPalette) -> QColor:
    """The aligned words inside the tinted sentences (the word pointed at and the words it was written from): the
    same hue, louder than the sentence's tint and still quieter than a selection."""
    base = palette.color(QPalette.ColorRole.Base)
    return _blend(base, palette.color(QPalette.ColorRole.Highlight), 0.55 if is_dark(palette) else 0.42)


def unsure_underline(palette: QPalette) -> QColor:
    """The wavy line under an unsure word: amber, toned towards the page so it reads as a hint, not an error."""
    base = palette.color(QPalette.ColorRole.Base)
    amber = QColor(0xF0, 0xA0, 0x30) if is_dark(palette) else QColor(0xD0, 0x80, 0x00)
    return _blend(base, amber, 0.85)


def flag_mark(palette: QPalette) -> QColor:
    """A flagged sentence's margin mark (the guards found something): a warm red-orange."""
    return QColor(0xFF, 0x8A, 0x65) if is_dark(palette) else QColor(0xC6, 0x4B, 0x1E)


def _own(palette: QPalette) -> QColor:
    """The user's colour: a green apart from the blue of the alignment tint and the amber of the underline."""
    return QColor(0x6F, 0xCF, 0x97) if is_dark(palette) else QColor(0x2E, 0x8B, 0x57)


def owned_tint(palette: QPalette) -> QColor:
    """The faint background of a sentence that is the user's own, barely off the page."""
    return _blend(palette.color(QPalette.ColorRole.Base), _own(palette), 0.16 if is_dark(palette) else 0.10)


def edit_mark(palette: QPalette) -> QColor:
    """The user's own sentence's margin bar."""
    return _own(palette)


def _stale(palette: QPalette) -> QColor:
    """A kept sentence that no longer matches the settings: amber, apart from the user's green and the flags' red."""
    return QColor(0xFF, 0xC1, 0x4D) if is_dark(palette) else QColor(0xB8, 0x6E, 0x00)


def stale_tint(palette: QPalette) -> QColor:
    """The background of such a sentence: louder than the user's own tint, so it is seen before it is copied."""
    return _blend(palette.color(QPalette.ColorRole.Base), _stale(palette), 0.26 if is_dark(palette) else 0.20)


def stale_mark(palette: QPalette) -> QColor:
    """Its margin mark."""
    return _stale(palette)
