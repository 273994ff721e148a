"""Settings and About dialogs."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QDialogButtonBox

from gui.preferences.settings_dialog import SettingsDialog
from gui.settings import SPECS, Key
from gui.window.about_dialog import AboutDialog, versions
from gui.worker.scheduler import ModelInfo
from tests.gui.fakes import EN_ZH, EN_ZH_HANS_ONLY

INFO = ModelInfo(
    bundle_dir="/models/opus-mt-en-zh",
    model_id="Helsinki-NLP/opus-mt-en-zh",
    license="CC-BY-4.0",
    attribution="OPUS-MT, University of Helsinki, CC-BY-4.0",
    precision="int8",
    available_precisions=("int8", "fp32"),
    default_beams=4,
    load_seconds=0.5,
    pair=EN_ZH,
)


def test_settings_dialog_shows_stored_values_and_ok_saves_them(qtbot, settings):
    settings.set(Key.PRECISION, "fp32")
    settings.set(Key.THREADS, 2)
    dialog = SettingsDialog(settings, INFO)
    qtbot.addWidget(dialog)
    assert dialog.precision.currentData() == "fp32" and dialog.threads.value() == 2
    assert dialog.threads.specialValueText() == "Automatic"
    assert dialog.quality.itemText(dialog.quality.findData(0)) == "Model default (4 beams)"
    assert not dialog.live_delay.isEnabled(), "delay only matters with translate-as-you-type"
    dialog.script.setCurrentIndex(dialog.script.findData("hant"))
    dialog.quality.setCurrentIndex(dialog.quality.findData(1))
    dialog.live.setChecked(True)
    assert dialog.live_delay.isEnabled()
    dialog.font_size.setValue(18)
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    changed: list = []
    settings.changed.connect(changed.append)
    dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    assert settings.get(Key.VARIANT) == "hant" and settings.get(Key.BEAMS) == 1
    assert settings.get(Key.LIVE_TRANSLATE) is True and settings.get(Key.FONT_SIZE) == 18
    assert settings.get(Key.PRECISION) == "fp32", "untouched values stay"
    assert set(changed) == {Key.VARIANT, Key.BEAMS, Key.LIVE_TRANSLATE, Key.FONT_SIZE, Key.THEME}


def test_options_the_loaded_model_lacks_are_disabled(qtbot, settings):
    from dataclasses import replace

    dialog = SettingsDialog(settings, replace(INFO, available_precisions=("int8",), pair=EN_ZH_HANS_ONLY))
    qtbot.addWidget(dialog)
    items = dialog.precision.model()
    assert items.item(dialog.precision.findData("int8")).isEnabled()
    assert not items.item(dialog.precision.findData("fp32")).isEnabled()
    # Traditional stays choosable (the setting serves every model), and the dialog says this one cannot write it
    assert dialog.script.findData("hans") >= 0 and dialog.script.findData("hant") >= 0
    assert not dialog.form.isRowVisible(dialog.script_note), "Simplified is chosen: nothing to say"
    dialog.script.setCurrentIndex(dialog.script.findData("hant"))
    assert dialog.form.isRowVisible(dialog.script_note)
    assert dialog.script_note.text() == "opus-mt-en-zh writes Simplified only: its translations are in Simplified."


def test_cancel_stores_nothing_and_restore_defaults_fills_the_form(qtbot, settings):
    settings.set(Key.PRECISION, "fp32")
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    dialog.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults).click()
    assert dialog.values() == {k: SPECS[k].default for k in dialog.values()}
    dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
    assert settings.get(Key.PRECISION) == "fp32"


def test_every_settings_control_has_a_label_or_name(qtbot, settings):
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    for w in (
        dialog.precision,
        dialog.script,
        dialog.quality,
        dialog.threads,
        dialog.live,
        dialog.live_delay,
        dialog.font_size,
        dialog.language,
        dialog.theme,
    ):
        assert w.accessibleName()


def test_about_shows_model_licence_attribution_and_versions(qtbot):
    dialog = AboutDialog(INFO)
    qtbot.addWidget(dialog)
    assert dialog.fields["model"].text() == "Helsinki-NLP/opus-mt-en-zh (INT8, loaded)"
    assert dialog.fields["license"].text() == "CC-BY-4.0"
    assert dialog.fields["languages"].text() == "English → Chinese", "the pair, from the manifest"
    assert "University of Helsinki" in dialog.fields["attribution"].text()
    assert dialog.fields["folder"].text() == "/models/opus-mt-en-zh"
    names = dict(versions())
    assert names["ONNX Runtime"] != "?" and names["Qt"].startswith(dialog.fields["Qt"].text()[:3])


def test_about_without_a_model_still_credits_opus_mt(qtbot):
    dialog = AboutDialog(None)
    qtbot.addWidget(dialog)
    assert "opus-mt-en-zh" in dialog.fields["model"].text() and "not loaded" in dialog.fields["model"].text()
    assert dialog.fields["license"].text() == "CC-BY-4.0"
    assert "opus-mt-en-zh" in dialog.fields["attribution"].text()


def test_a_greedy_model_default_is_named_greedy_not_one_beams(qtbot, settings):
    """Firefox models decode greedily by default (default_beams 1): the Quality list said "Model default (1 beams)"."""
    dialog = SettingsDialog(settings, replace(INFO, default_beams=1))
    qtbot.addWidget(dialog)
    labels = [dialog.quality.itemText(i) for i in range(dialog.quality.count())]
    assert dialog.quality.itemText(dialog.quality.findData(0)) == "Model default (greedy)", labels
    assert not any("1 beams" in label for label in labels)
