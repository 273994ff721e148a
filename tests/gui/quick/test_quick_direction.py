"""The quick popup follows the language of the text it is given, on the real window, worker and engine with both
fixture bundles installed (scratch QIAO_DATA_DIR): Chinese while the window is English → Chinese is translated by the
zh→en model, and the window keeps its direction and its text. Without that model, or for Japanese, the popup says so
instead of translating."""

from __future__ import annotations

import shutil

import pytest

from engine.pipeline.translator import Translator
from gui.app import attach_quick
from gui.desktop.desktop import Desktop
from gui.settings import Key
from gui.worker.scheduler import default_factory, default_locator, default_pair_lister
from tests.conftest import BUNDLE, ZH_EN_BUNDLE

from .fakes import FakeBackend


@pytest.fixture
def popup_on(make_window, settings, qtbot, tmp_path, monkeypatch):
    made = []

    def make(bundles=(BUNDLE, ZH_EN_BUNDLE)):
        data = tmp_path / "qiao-data"
        monkeypatch.setenv("QIAO_DATA_DIR", str(data))
        for bundle in bundles:
            shutil.copytree(bundle, data / "models" / bundle.parent.name)
        settings.set(Key.DIRECTION, "en-zh")
        window = make_window(default_factory, default_locator, pair_lister=default_pair_lister)
        qtbot.waitUntil(lambda: len(window.available_pairs) == len(bundles), timeout=10_000)
        desktop = Desktop(window, settings, use_tray=False)
        quick = attach_quick(window, desktop, backend=FakeBackend())
        qtbot.addWidget(quick.popup)
        made.append(quick)
        return window, quick

    yield make
    for quick in made:
        quick.shutdown()


def test_chinese_in_the_popup_is_translated_by_the_zh_en_model(popup_on, qtbot):
    window, quick = popup_on()
    window.source.setPlainText("Thank you very much.")
    quick.show_text("非常感谢。")
    qtbot.waitUntil(lambda: quick.popup.state == "done", timeout=10_000)
    assert quick.popup.translation == Translator(ZH_EN_BUNDLE).translate("非常感谢。").text
    assert window.direction == "en-zh" and window.model.pair.key == "en-zh", "the window keeps its direction"
    assert window.source.toPlainText() == "Thank you very much." and window.notice.isHidden()
    quick.show_text("Thank you very much.")  # and English again through the window's loaded en→zh model
    qtbot.waitUntil(lambda: quick.popup.state == "done" and quick.popup.source_text.startswith("Thank"), timeout=10_000)
    assert quick.popup.translation == Translator(BUNDLE).translate("Thank you very much.").text


def test_without_the_zh_en_model_the_popup_names_it(popup_on):
    _, quick = popup_on(bundles=(BUNDLE,))
    quick.show_text("非常感谢。")
    assert quick.popup.state == "problem" and quick.current_id is None
    text = quick.popup.result.toPlainText()
    assert "looks Chinese" in text and "Chinese → English" in text and "opus-mt-zh-en" in text


def test_japanese_in_the_popup_is_said_to_be_unsupported(popup_on):
    _, quick = popup_on()
    quick.show_text("これは日本語の文章です。")
    assert quick.popup.state == "problem" and quick.current_id is None
    assert quick.popup.result.toPlainText() == "This text looks Japanese; Qiao translates only English and Chinese."


@pytest.mark.parametrize("text", ["12345", "https://example.org/path?q=1", "I met 王小明 yesterday."])
def test_numbers_links_and_mixed_text_stay_in_the_windows_direction(popup_on, qtbot, text):
    _, quick = popup_on()
    quick.show_text(text)
    qtbot.waitUntil(lambda: quick.popup.state == "done", timeout=10_000)
    assert quick.popup.translation == Translator(BUNDLE).translate(text).text
