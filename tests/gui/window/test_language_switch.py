"""The real window, the real worker and engine on both fixture bundles (en→zh and zh→en installed in a scratch
QIAO_DATA_DIR): Chinese pasted into the English box switches the direction and is translated by the zh→en model;
one undo (Ctrl+Z or the notice's "Undo") restores the direction and the text. Without the zh→en model the notice
names it; Japanese is said to be unsupported; numbers, a link or English with a Chinese name change nothing."""

from __future__ import annotations

import shutil

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QInputMethodEvent
from PySide6.QtWidgets import QApplication

from engine.pipeline.translator import Translator
from gui.settings import Key
from gui.worker.scheduler import default_factory, default_locator, default_pair_lister
from tests.conftest import BUNDLE, ZH_EN_BUNDLE


@pytest.fixture
def oracle():
    """What each fixture bundle itself gives (the window must show exactly that)."""
    cache: dict[str, Translator] = {}

    def translate(pair: str, text: str) -> str:
        if pair not in cache:
            cache[pair] = Translator(BUNDLE if pair == "en-zh" else ZH_EN_BUNDLE)
        return cache[pair].translate(text).text

    return translate


@pytest.fixture
def real_window(qtbot, make_window, tmp_path, monkeypatch, settings):
    def make(bundles=(BUNDLE, ZH_EN_BUNDLE), direction="en-zh"):
        data = tmp_path / "qiao-data"
        monkeypatch.setenv("QIAO_DATA_DIR", str(data))
        for bundle in bundles:
            shutil.copytree(bundle, data / "models" / bundle.parent.name)
        settings.set(Key.DIRECTION, direction)
        settings.set(Key.LIVE_TRANSLATE, False)  # only the switch translates: nothing else may hide a mistake
        window = make_window(default_factory, default_locator, pair_lister=default_pair_lister)
        # the controller and the window each get model_ready as their own queued event: wait for the window's too
        qtbot.waitUntil(lambda: len(window.available_pairs) == len(bundles), timeout=10_000)
        return window

    return make


def paste(window, text: str) -> None:
    QApplication.clipboard().setText(text)
    window.source.setFocus()
    window.source.paste()
    QApplication.clipboard().clear()


def type_chinese(window, text: str) -> None:
    """As an input method commits it (QTest cannot press keys for Han characters)."""
    window.source.setFocus()
    event = QInputMethodEvent()
    event.setCommitString(text)
    QApplication.sendEvent(window.source, event)


def settled(qtbot, window, pair: str) -> None:
    qtbot.waitUntil(lambda: window.model is not None and window.model.pair.key == pair, timeout=10_000)
    qtbot.waitUntil(lambda: not window.translating and window.last_result is not None, timeout=10_000)


def translate_now(qtbot, window, pair: str) -> None:
    window.translate()
    settled(qtbot, window, pair)


def test_chinese_pasted_into_the_english_box_switches_and_ctrl_z_restores(qtbot, real_window, settings, oracle):
    window = real_window()
    assert window.direction == "en-zh" and window.available_pairs == ("en-zh", "zh-en")
    window.source.setPlainText("Thank you very much.")
    translate_now(qtbot, window, "en-zh")
    assert window.target.toPlainText() == oracle("en-zh", "Thank you very much.")

    window.source.selectAll()
    paste(window, "你好，你最近怎么样？")
    assert settings.get(Key.DIRECTION) == "zh-en", "switched at the paste"
    assert window.source_pane.heading.text() == "Chi&nese"
    settled(qtbot, window, "zh-en")
    assert window.source.toPlainText() == "你好，你最近怎么样？", "the pasted text stays the source"
    assert window.target.toPlainText() == oracle("zh-en", "你好，你最近怎么样？")
    assert any("switched to Chinese → English" in m for m in window.notice.messages())
    assert window.language.can_undo

    qtbot.keyClick(window.source, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert settings.get(Key.DIRECTION) == "en-zh"
    assert window.source.toPlainText() == "Thank you very much.", "the text from before the paste"
    settled(qtbot, window, "en-zh")
    assert window.target.toPlainText() == oracle("en-zh", "Thank you very much.")
    assert not window.language.can_undo and window.notice.isHidden()


def test_the_notices_undo_button_restores_too(qtbot, real_window, settings):
    window = real_window()
    paste(window, "非常感谢。")
    settled(qtbot, window, "zh-en")
    assert window.notice.action_button.text() == "Undo"
    window.notice.action_button.click()
    assert settings.get(Key.DIRECTION) == "en-zh" and window.source.toPlainText() == ""
    qtbot.waitUntil(lambda: window.model is not None and window.model.pair.key == "en-zh", timeout=10_000)


def test_an_edit_after_the_switch_gives_ctrl_z_back_to_the_editor(qtbot, real_window, settings):
    window = real_window()
    paste(window, "非常感谢。")
    settled(qtbot, window, "zh-en")
    window.source.moveCursor(window.source.textCursor().MoveOperation.End)
    qtbot.keyClicks(window.source, "x")
    assert not window.language.can_undo
    qtbot.keyClick(window.source, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert window.source.toPlainText() != "非常感谢。x", "the editor's own undo ran"
    assert settings.get(Key.DIRECTION) == "zh-en", "and the direction stayed"


def test_english_pasted_into_the_chinese_box_switches_to_en_zh(qtbot, real_window, settings, oracle):
    window = real_window(direction="zh-en")
    paste(window, "See you tomorrow.")
    assert settings.get(Key.DIRECTION) == "en-zh"
    settled(qtbot, window, "en-zh")
    assert window.target.toPlainText() == oracle("en-zh", "See you tomorrow.")


@pytest.mark.parametrize(
    "text",
    ["12345", "https://example.org/path?q=1", "I met 王小明 yesterday at the station.", "Apple 发布了新款 iPhone"],
)
def test_numbers_a_link_and_mixed_text_change_nothing(qtbot, real_window, settings, text):
    window = real_window()
    paste(window, text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and window.last_result is not None, timeout=10_000)
    assert settings.get(Key.DIRECTION) == "en-zh" and window.model.pair.key == "en-zh"
    assert window.notice.isHidden() and not window.language.can_undo


def test_typing_one_han_character_switches_when_typing_pauses(qtbot, real_window, settings):
    window = real_window()
    type_chinese(window, "好")
    assert window.source.toPlainText() == "好"
    assert settings.get(Key.DIRECTION) == "en-zh", "one character: judged when typing pauses"
    qtbot.waitUntil(lambda: settings.get(Key.DIRECTION) == "zh-en", timeout=3000)


def test_ctrl_enter_judges_at_once(qtbot, real_window, settings):
    window = real_window()
    type_chinese(window, "好")
    window.translate()
    assert settings.get(Key.DIRECTION) == "zh-en"
    settled(qtbot, window, "zh-en")


def test_without_the_zh_en_model_the_notice_names_it(qtbot, real_window, settings):
    window = real_window(bundles=(BUNDLE,))
    paste(window, "非常感谢。")
    assert settings.get(Key.DIRECTION) == "en-zh" and not window.language.can_undo
    [message] = window.notice.messages()
    assert "looks Chinese" in message and "Chinese → English" in message and "opus-mt-zh-en" in message
    assert window.notice.action_button.text() == "Models…"


def test_japanese_is_said_to_be_unsupported(qtbot, real_window, settings):
    window = real_window()
    paste(window, "これは日本語の文章です。")
    assert settings.get(Key.DIRECTION) == "en-zh"
    assert window.notice.messages() == ["This text looks Japanese; Qiao translates only English and Chinese."]
