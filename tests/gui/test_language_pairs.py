"""The window follows the bundle's language pair: wording, fonts, counts, the variants setting, and the swap."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from gui.fonts import installed_cjk_families
from gui.models.models_dialog import ModelsDialog
from gui.preferences.settings_dialog import SettingsDialog
from gui.settings import Key
from gui.worker.scheduler import ModelInfo
from tests.gui.fakes import EN_ZH, ZH_EN, FakeModel, FakeStore, PairFactory, PairLocator, _deltas, fake_translate_text


@pytest.fixture
def pair_window(make_window, tmp_path, settings):
    """A window on fake bundles `<tmp>/bundles/<pair>` for the pairs installed."""

    def make(installed=("en-zh", "zh-en"), direction="en-zh", factory=None, store=None, **kwargs):
        settings.set(Key.DIRECTION, direction)
        locator = PairLocator(tmp_path / "bundles", installed)
        window = make_window(factory or PairFactory(), locator, pair_lister=locator.pairs, model_store=store, **kwargs)
        return window, locator

    return make


def test_en_zh_headings_placeholders_and_title(pair_window):
    window, _ = pair_window()
    assert window.source_pane.heading.text() == "E&nglish"
    assert window.target_pane.heading.text() == "Chinese (Simplified)"
    assert window.source.placeholderText() == "Paste or type English text here, then press Ctrl+Enter."
    assert window.target.placeholderText() == "The Chinese translation appears here as it is written."
    assert window.source.accessibleName() == "English source text"
    assert window.target.accessibleName() == "Chinese translation"
    assert window.windowTitle() == "English to Chinese"


def test_zh_en_headings_placeholders_and_title(qtbot, pair_window, settings):
    window, _ = pair_window(direction="zh-en")
    assert window.model.pair == ZH_EN
    assert window.source_pane.heading.text() == "Chi&nese"
    assert window.target_pane.heading.text() == "English", "no variant: no script in the heading"
    assert window.source.placeholderText() == "Paste or type Chinese text here, then press Ctrl+Enter."
    assert window.target.accessibleName() == "English translation"
    assert window.windowTitle() == "Chinese to English"
    settings.set(Key.UI_LANGUAGE, "zh_CN")
    qtbot.waitUntil(lambda: window.windowTitle() == "中译英", timeout=2000)
    assert window.source_pane.heading.text() == "中文(&N)" and window.target_pane.heading.text() == "英语"


def test_the_cjk_font_is_on_whichever_pane_is_chinese(pair_window):
    cjk = installed_cjk_families("hans")
    window, _ = pair_window(direction="zh-en")
    source, target = window.source.font().families(), window.target.font().families()
    if cjk:
        assert source[: len(cjk)] == cjk and target[: len(cjk)] != cjk
    assert window.source.font().pointSize() == window.target.font().pointSize()


def test_a_chinese_source_is_counted_in_characters(qtbot, pair_window):
    window, _ = pair_window(direction="zh-en")
    window.source.setPlainText("你好 世界。")
    qtbot.waitUntil(lambda: window.source_pane.info.text() == "5 characters", timeout=2000)


def test_chinese_in_the_english_box_is_counted_in_characters(qtbot, pair_window):
    """Chinese pasted into the English box (kept there when no zh→en model is installed) is not "1 word"; English
    with a Chinese name in it is still counted in words."""
    window, _ = pair_window(installed=("en-zh",), direction="en-zh")
    window.source.setPlainText("非常感谢。明天见。")
    qtbot.waitUntil(lambda: window.source_pane.info.text() == "9 characters", timeout=2000)
    assert window.model.pair.source.code == "en"  # nothing to switch to: the text stays in the English box
    window.source.setPlainText("Thank you, 王小明.")
    qtbot.waitUntil(lambda: window.source_pane.info.text() == "3 words", timeout=2000)


def test_the_worker_asks_the_locator_for_the_chosen_direction(pair_window):
    window, locator = pair_window(direction="zh-en")
    assert locator.asked == ["zh-en"]
    assert window.model.pairs == ("en-zh", "zh-en")


def test_settings_dialog_hides_the_variants_for_a_pair_without_them(qtbot, settings):
    info = ModelInfo("/b", "zh-en", "CC-BY-4.0", "", "int8", ("int8",), 4, 0.1, pair=ZH_EN)
    dialog = SettingsDialog(settings, info)
    qtbot.addWidget(dialog)
    dialog.show()
    assert not dialog.script.isVisible() and not dialog.normalize.isVisible()
    assert Key.VARIANT not in dialog.values(), "the stored choice is kept for the other direction"
    settings.set(Key.VARIANT, "hant")
    dialog.accept()
    assert settings.get(Key.VARIANT) == "hant"


def test_settings_dialog_offers_the_pairs_variants(qtbot, settings):
    info = ModelInfo("/b", "en-zh", "CC-BY-4.0", "", "int8", ("int8",), 4, 0.1, pair=EN_ZH)
    dialog = SettingsDialog(settings, info)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.script.isVisible()
    assert [dialog.script.itemText(i) for i in range(dialog.script.count())] == [
        "Simplified (简体)",
        "Traditional (繁體)",
    ]


def test_swap_moves_the_texts_switches_direction_reloads_and_translates(qtbot, pair_window, settings):
    window, locator = pair_window()
    window.source.setPlainText("hello world")
    window.translate()
    qtbot.waitUntil(lambda: window.last_result is not None, timeout=5000)
    chinese = fake_translate_text("hello world")
    assert window.target.toPlainText() == chinese
    assert window.swap_action.isEnabled()
    window.swap()
    assert window.source.toPlainText() == chinese, "the translation becomes the source"
    assert settings.get(Key.DIRECTION) == "zh-en"
    assert window.source_pane.heading.text() == "Chi&nese", "the headings follow at once"
    qtbot.waitUntil(lambda: window.model is not None and window.model.pair == ZH_EN, timeout=5000)
    qtbot.waitUntil(lambda: not window.translating, timeout=5000)
    assert locator.asked == ["en-zh", "zh-en"]
    assert window.target.toPlainText() == "hello world ", "translated back by the zh→en bundle"
    window.source.undo()
    assert window.source.toPlainText() == "hello world", "the swap is one undoable edit"


def test_ctrl_shift_s_swaps(qtbot, pair_window, settings):
    window, _ = pair_window()
    window.activateWindow()
    window.source.setFocus()
    qtbot.keyClick(window.source, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    assert settings.get(Key.DIRECTION) == "zh-en"
    qtbot.waitUntil(lambda: window.model is not None and window.model.pair == ZH_EN, timeout=5000)
    assert "Ctrl+Shift+S" in window.swap_button.toolTip() and window.swap_button.text() == "⇄"


def test_swap_is_disabled_and_says_why_without_a_reverse_bundle(qtbot, pair_window, settings):
    window, locator = pair_window(installed=("en-zh",))
    assert not window.swap_action.isEnabled() and not window.swap_button.isEnabled()
    assert "No Chinese → English model is installed" in window.swap_button.toolTip()
    qtbot.keyClick(window.source, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier)
    window.swap()
    assert settings.get(Key.DIRECTION) == "en-zh" and locator.asked == ["en-zh"]


def test_swap_is_persisted(qtbot, pair_window, settings):
    window, _ = pair_window()
    window.swap()
    qtbot.waitUntil(lambda: window.model is not None and window.model.pair == ZH_EN, timeout=5000)
    window.shutdown()
    from gui.settings import Settings

    assert Settings(settings.path).get(Key.DIRECTION) == "zh-en"


def test_a_swap_mid_translation_drops_the_old_requests_progress(qtbot, pair_window):
    factory = PairFactory(token_delay=0.01)
    window, _ = pair_window(factory=factory)
    window.source.setPlainText(" ".join(["hello world"] * 40))
    window.translate()
    old_id = window.requests.current_id
    qtbot.waitUntil(lambda: bool(window.target.toPlainText()), timeout=5000)
    seen: list[int] = []
    window.requests.progress.connect(lambda rid, *rest: seen.append(rid))
    window.swap()
    new_id = window.requests.current_id
    assert new_id != old_id
    qtbot.waitUntil(lambda: window.model is not None and window.model.pair == ZH_EN, timeout=5000)
    qtbot.waitUntil(lambda: not window.translating, timeout=10_000)
    assert set(seen) <= {new_id}, "nothing of the old direction's request reached the window"
    back = "".join(_deltas(window.source.toPlainText(), "hans", "int8", reverse=True))
    assert back and window.target.toPlainText() == back, "only the new direction's translation is shown"
    assert "你好" not in window.target.toPlainText()


def test_the_models_dialog_refreshes_the_pairs_and_enables_the_swap(qtbot, pair_window, tmp_path):
    store = FakeStore([FakeModel(tmp_path / "bundles" / "en-zh", "opus-mt-en-zh", EN_ZH)])
    window, locator = pair_window(installed=("en-zh",), store=store)
    assert not window.swap_action.isEnabled()
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 1, timeout=5000)
    locator.installed = ("en-zh", "zh-en")
    dialog.import_from("/downloads/zh-en.tar.gz")
    qtbot.waitUntil(window.swap_action.isEnabled, timeout=5000)
    assert window.available_pairs == ("en-zh", "zh-en")
    dialog.close()


def test_removing_the_loaded_bundle_says_so_and_looks_for_another(qtbot, pair_window, tmp_path):
    loaded = FakeModel(tmp_path / "bundles" / "en-zh", "opus-mt-en-zh", EN_ZH)
    window, locator = pair_window(installed=("en-zh",), store=FakeStore([loaded]))
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 1, timeout=5000)
    locator.installed = ()
    dialog.confirm_remove = lambda model: True
    dialog.installed.selectRow(0)
    dialog.remove_selected()
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    assert "The model in use was removed" in window.notice.label.text()
    assert window.problem.kind == "missing" and window.model_panel.isVisible()
    assert locator.asked == ["en-zh", "en-zh"]
    dialog.close()


def test_explicit_model_folder_offers_no_swap(pair_window, tmp_path):
    window, _ = pair_window(model_dir=str(tmp_path / "bundles" / "en-zh"))
    assert not window.swap_action.isEnabled() and "--model" in window.swap_button.toolTip()


def test_a_missing_bundle_for_the_direction_still_offers_the_swap_back(qtbot, pair_window):
    window, _ = pair_window(installed=("en-zh",), direction="zh-en", wait_ready=False)
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    assert window.problem.pair_key == "zh-en" and window.source_pane.heading.text() == "Chi&nese"
    assert "none was found for Chinese → English" in window.model_panel.body.text()
    assert window.model_panel.models_button.isVisibleTo(window)
    assert window.swap_action.isEnabled(), "the en→zh bundle is there: swapping back is the way out"
    window.swap()
    qtbot.waitUntil(lambda: window.model is not None, timeout=5000)
    assert window.model.pair == EN_ZH and not window.model_panel.isVisible()


def test_real_engine_window_still_reads_its_pair_from_the_manifest(make_window):
    window = make_window()  # the committed tiny en→zh fixture, through the default locator
    assert window.model.pair is not None and window.model.pair.key == "en-zh"
    assert window.target_pane.heading.text() == "Chinese (Simplified)"
    assert Path(window.model.bundle_dir).name == "bundle"


def test_get_a_model_opens_the_models_dialog(qtbot, pair_window):
    window, _ = pair_window(installed=(), wait_ready=False, store=FakeStore([]))
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    window.model_panel.models_button.click()
    dialogs = window.findChildren(ModelsDialog)
    assert len(dialogs) == 1 and dialogs[0].isVisible()
    qtbot.waitUntil(lambda: "No model is installed" in dialogs[0].message.text(), timeout=5000)
    dialogs[0].close()


def test_a_model_imported_for_the_missing_direction_is_loaded(qtbot, pair_window):
    window, locator = pair_window(installed=(), wait_ready=False, store=FakeStore([]))
    qtbot.waitUntil(lambda: window.problem is not None, timeout=5000)
    dialog = window.open_models()
    qtbot.waitUntil(lambda: not dialog._job, timeout=5000)
    locator.installed = ("en-zh",)
    dialog.import_from("/downloads/en-zh.zip")
    qtbot.waitUntil(lambda: window.model is not None, timeout=5000)
    assert window.model.pair == EN_ZH and not window.model_panel.isVisible()
    dialog.close()


def test_a_precision_switch_keeps_the_pairs_the_models_dialog_reported(qtbot, pair_window, settings, tmp_path):
    window, _ = pair_window(installed=("en-zh",))
    window.model_control.models_changed([FakeModel(tmp_path / "zh-en", "opus-mt-zh-en", ZH_EN)])
    assert window.swap_action.isEnabled()
    settings.set(Key.PRECISION, "fp32")
    qtbot.waitUntil(lambda: window.model.precision == "fp32", timeout=5000)
    assert window.available_pairs == ("zh-en",) and window.swap_action.isEnabled()
