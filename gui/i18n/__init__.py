"""Interface language: English (the source strings) or Simplified Chinese (`qiao_zh_CN.qm`).

`system` follows the OS locale: any Chinese locale gets the Chinese interface. Qt's own strings (standard
buttons, context menus) come from Qt's bundled `qtbase_*.qm`. Switching at run time is supported: widgets get a
`LanguageChange` event and re-read their texts.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator

I18N_DIR = Path(__file__).resolve().parent
LANGUAGES = ("en", "zh_CN")
_installed: list[QTranslator] = []


def resolve_language(setting: str, locale: QLocale | None = None) -> str:
    """The interface language for a setting of "system", "en" or "zh_CN"."""
    if setting in LANGUAGES:
        return setting
    loc = locale or QLocale.system()
    for name in loc.uiLanguages() or [loc.name()]:
        if name.lower().replace("_", "-").split("-")[0] == "zh":
            return "zh_CN"
        if name.lower().startswith("en"):
            return "en"
    return "en"


def install_translators(setting: str, locale: QLocale | None = None) -> str:
    """Replace the app's translators for `setting`; returns the language now in effect."""
    app = QCoreApplication.instance()
    assert app is not None, "create the QApplication first"
    for tr in _installed:
        app.removeTranslator(tr)
    _installed.clear()
    language = resolve_language(setting, locale)
    if language == "en":
        return language
    ours = QTranslator(app)
    if ours.load(str(I18N_DIR / f"qiao_{language}.qm")):
        app.installTranslator(ours)
        _installed.append(ours)
    qt = QTranslator(app)
    if qt.load(f"qtbase_{language}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
        app.installTranslator(qt)
        _installed.append(qt)
    return language
