"""English and Simplified Chinese interface: locale choice, live switching, and translation files kept in sync."""

from __future__ import annotations

import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QLocale

from gui.i18n import I18N_DIR, install_translators, resolve_language
from gui.i18n.update import lrelease, lupdate
from gui.settings import Key

TS = I18N_DIR / "qiao_zh_CN.ts"


def messages(ts: Path) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    out = {}
    for ctx in ET.parse(ts).getroot().iter("context"):
        name = ctx.findtext("name")
        for m in ctx.iter("message"):
            tr = m.find("translation")
            forms = tr.findall("numerusform")  # a %n message: one form per plural (Chinese has one)
            text = "|".join(f.text or "" for f in forms) if forms else tr.text
            out[(name, m.findtext("source"))] = (text, tr.get("type"))
    return out


@pytest.mark.parametrize(
    ("setting", "locale", "expected"),
    [
        ("system", "zh_CN", "zh_CN"),
        ("system", "zh_TW", "zh_CN"),
        ("system", "en_US", "en"),
        ("system", "de_DE", "en"),
        ("en", "zh_CN", "en"),
        ("zh_CN", "en_GB", "zh_CN"),
    ],
)
def test_language_follows_the_system_locale_unless_overridden(setting, locale, expected):
    assert resolve_language(setting, QLocale(locale)) == expected


def test_chinese_translation_loads_and_covers_qt_buttons(qapp):
    assert install_translators("zh_CN") == "zh_CN"
    assert QCoreApplication.translate("MainWindow", "&Translate") == "翻译(&T)"
    assert QCoreApplication.translate("QPlatformTheme", "Cancel") == "取消", "Qt's own strings in Chinese too"
    assert install_translators("en") == "en"
    assert QCoreApplication.translate("MainWindow", "&Translate") == "&Translate"


def test_switching_language_retranslates_the_open_window(qtbot, make_window, settings):
    window = make_window()
    window.source.setPlainText("hello world")
    window.translate()
    qtbot.waitUntil(lambda: not window.translating, timeout=5000)
    settings.set(Key.UI_LANGUAGE, "zh_CN")
    qtbot.waitUntil(lambda: window.windowTitle() == "英译中", timeout=2000)
    assert window.translate_button.text() == "翻译(&T)"
    assert window.file_menu.title() == "文件(&F)"
    assert "总耗时" in window.status_message() and "每秒" in window.status_message()
    assert window.source_pane.info.text() == "2 个单词"
    assert window.target_pane.heading.text() == "中文（简体）", "the panes' own strings are translated too"
    settings.set(Key.UI_LANGUAGE, "en")
    qtbot.waitUntil(lambda: window.windowTitle() == "English to Chinese", timeout=2000)


def test_every_message_is_translated():
    unfinished = [src for src, (text, kind) in messages(TS).items() if not text or kind in ("unfinished", "vanished")]
    assert unfinished == []


def test_translation_files_are_in_sync_with_the_source(tmp_path):
    ts = tmp_path / TS.name
    shutil.copy(TS, ts)
    lupdate(ts)
    assert set(messages(ts)) == set(messages(TS)), "run `python -m gui.i18n.update` and translate the new strings"
    qm = tmp_path / "qiao_zh_CN.qm"
    lrelease(TS, qm)
    assert qm.read_bytes() == TS.with_suffix(".qm").read_bytes(), "the committed .qm is stale: run the update"


def test_placeholders_survive_translation():
    for (ctx, src), (text, _) in messages(TS).items():
        for field in (
            "{n}",
            "{p}",
            "{t}",
            "{m}",
            "{path}",
            "{key}",
            "{error}",
            "{cmd}",
            "{done}",
            "{total}",
            "%v",
            "%m",
            "{when}",
            "{language}",
            "{variant}",
            "{source}",
            "{target}",
            "{pair}",
            "{name}",
            "{where}",
            "{problem}",
            "{patterns}",
            "{progress}",
            "{rate}",
        ):
            assert (field in src) == (field in (text or "")), f"{ctx}: {src!r} -> {text!r} ({field})"


def test_chinese_text_puts_shortcuts_and_notes_in_full_width_parentheses():
    """After Chinese words a parenthesis is full-width, as in 翻译（Ctrl+Enter）; three tooltips had ASCII ones
    (复制译文 (Ctrl+Shift+C), 交换语言和文本 (Ctrl+Shift+S), 关闭 (Esc)). File dialog filters keep Qt's own
    "name (*.ext)" syntax, which needs ASCII parentheses around the patterns, and mnemonics their "(&S)"."""
    ascii_after_chinese = re.compile(r"[\u4e00-\u9fff。，：；]\s?\((?!\*|\{patterns\}|&)")
    wrong = [
        (ctx, text)
        for (ctx, _src), (translation, _) in messages(TS).items()
        for text in (translation or "").split("|")
        if ascii_after_chinese.search(text)
    ]
    assert wrong == []
