"""Fonts for the two text panes, with an explicit CJK fallback list.

Han characters are shared by Chinese, Japanese and Korean but drawn differently; leaving the choice to the OS can
pick a Japanese face for Chinese text. So the pane whose language is written in Han (the target of en→zh, the
source of zh→en) asks for a Simplified (or Traditional) Chinese face first:
Windows' Microsoft YaHei / JhengHei, macOS' PingFang, and on Linux Noto Sans CJK (Debian/Ubuntu `fonts-noto-cjk`),
Source Han Sans, WenQuanYi; any family not installed is skipped and fontconfig's own fallback does the rest.
"""

from __future__ import annotations

from PySide6.QtGui import QFont, QFontDatabase

CJK_FAMILIES = {
    "hans": [
        "Microsoft YaHei UI",
        "Microsoft YaHei",
        "PingFang SC",
        "Hiragino Sans GB",
        "Noto Sans CJK SC",
        "Noto Sans SC",
        "Source Han Sans SC",
        "Source Han Sans CN",
        "WenQuanYi Micro Hei",
        "WenQuanYi Zen Hei",
        "Droid Sans Fallback",
        "SimSun",
    ],
    "hant": [
        "Microsoft JhengHei UI",
        "Microsoft JhengHei",
        "PingFang TC",
        "Noto Sans CJK TC",
        "Noto Sans TC",
        "Source Han Sans TC",
        "Source Han Sans TW",
        "WenQuanYi Micro Hei",
        "WenQuanYi Zen Hei",
        "Droid Sans Fallback",
        "MingLiU",
    ],
}


def installed_cjk_families(script: str) -> list[str]:
    """The preferred CJK families for `script` ("hans" | "hant") that this system actually has."""
    available = set(QFontDatabase.families())
    return [f for f in CJK_FAMILIES.get(script, CJK_FAMILIES["hans"]) if f in available]


def pane_font(script: str, variant: str | None, point_size: int) -> QFont:
    """The system UI font at the user's size; for a Han-script pane (whichever side is Chinese) the Chinese faces
    of `variant` ("hans" | "hant"; Simplified when the pane has no variant, as a zh→en source) come first."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)
    if script == "han":
        families = installed_cjk_families(variant or "hans")
        font.setFamilies([*families, *font.families()])
    font.setPointSize(point_size)
    return font
