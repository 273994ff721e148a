"""Settings changed together (one Settings OK) redo the translation on screen exactly once, with all of them applied;
the request travels to the engine as one TranslationOptions."""

from __future__ import annotations

import itertools
import threading

import pytest

from engine.options import TranslationOptions
from gui.settings import SPECS, Key
from tests.gui.fakes import FakeFactory, fake_translate_text

TEXT = "the language bridge"  # 这语言桥 in Simplified, 這語言橋 in Traditional
# Each request setting and the value that differs from its default
CHANGES = {
    Key.PRECISION: "fp32",
    Key.VARIANT: "hant",
    Key.BEAMS: 2,
    Key.JOIN_WRAPPED_LINES: False,
    Key.NORMALIZE_PUNCTUATION: False,
}


def translated(qtbot, window, factory, calls_before: int) -> list[dict]:
    """Wait until the window is idle again and no further request arrives; the calls made since `calls_before`."""
    qtbot.waitUntil(lambda: len(factory.translator.calls) > calls_before and not window.translating, timeout=5000)
    qtbot.wait(150)  # a second (wrong) redo would arrive within this
    assert not window.translating
    return factory.translator.calls[calls_before:]


def expected_options(settings) -> TranslationOptions:
    return TranslationOptions(
        beams=settings.get(Key.BEAMS) or None,
        variant=settings.get(Key.VARIANT),
        join_wrapped_lines=settings.get(Key.JOIN_WRAPPED_LINES),
        normalize_punctuation=settings.get(Key.NORMALIZE_PUNCTUATION),
    )


def shown(qtbot, make_window, factory):
    """A window that has translated TEXT once and is idle."""
    window = make_window(factory)
    window.source.setPlainText(TEXT)
    window.translate()
    translated(qtbot, window, factory, 0)
    return window


def apply_in_dialog(window, changes: dict) -> None:
    """Set the values in the Settings dialog and press OK, as a user does."""
    dialog = window.open_settings()
    combos = {Key.PRECISION: dialog.precision, Key.VARIANT: dialog.script, Key.BEAMS: dialog.quality}
    checks = {Key.JOIN_WRAPPED_LINES: dialog.join_lines, Key.NORMALIZE_PUNCTUATION: dialog.normalize}
    for key, value in changes.items():
        if key in combos:
            combos[key].setCurrentIndex(combos[key].findData(value))
        else:
            checks[key].setChecked(value)
    dialog.accept()


def test_precision_and_script_in_one_ok_redo_the_translation_once_with_both(qtbot, make_window, settings):
    factory = FakeFactory()
    window = shown(qtbot, make_window, factory)
    assert fake_translate_text(TEXT, "hant") != window.target.toPlainText(), "the scripts must differ for this test"
    apply_in_dialog(window, {Key.PRECISION: "fp32", Key.VARIANT: "hant"})
    calls = translated(qtbot, window, factory, 1)
    assert len(calls) == 1, f"one redo, not {len(calls)}: {calls}"
    assert calls[0]["precision"] == "fp32" and calls[0]["script"] == "hant"
    assert "Traditional" in window.target_pane.heading.text()
    assert window.target.toPlainText() == fake_translate_text(TEXT, "hant")
    assert window.last_result.stats.precision == "fp32" and window.precision_label.text() == "FP32"


def test_every_combination_of_request_settings_redoes_once_with_all_applied(qtbot, make_window, settings):
    factory = FakeFactory()
    window = shown(qtbot, make_window, factory)
    combos = [c for n in range(1, len(CHANGES) + 1) for c in itertools.combinations(CHANGES, n)]
    for combo in combos:
        # flip each key in the combination away from its current value
        changes = {key: SPECS[key].default if settings.get(key) == CHANGES[key] else CHANGES[key] for key in combo}
        before = len(factory.translator.calls)
        apply_in_dialog(window, changes)
        calls = translated(qtbot, window, factory, before)
        assert len(calls) == 1, f"{combo}: {len(calls)} requests"
        assert calls[0]["options"] == expected_options(settings), combo
        assert calls[0]["precision"] == settings.get(Key.PRECISION), combo
        assert window.target.toPlainText() == fake_translate_text(TEXT, settings.get(Key.VARIANT)), combo


def test_changes_while_translating_restart_it_once_with_all_applied(qtbot, make_window, settings):
    gate = threading.Event()
    factory = FakeFactory(gate=gate)
    window = make_window(factory)
    window.source.setPlainText(TEXT)
    window.translate()
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 1, timeout=5000)
    apply_in_dialog(window, {Key.PRECISION: "fp32", Key.VARIANT: "hant", Key.BEAMS: 2})
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 2, timeout=5000)
    gate.set()
    calls = translated(qtbot, window, factory, 1)
    assert len(calls) == 1
    assert (calls[0]["precision"], calls[0]["script"], calls[0]["beams"]) == ("fp32", "hant", 2)
    assert window.target.toPlainText() == fake_translate_text(TEXT, "hant")


def test_a_setting_that_does_not_change_the_request_does_not_retranslate(qtbot, make_window, settings):
    factory = FakeFactory()
    window = shown(qtbot, make_window, factory)
    apply_in_dialog(window, {})  # OK with font size, theme, … as they were
    settings.set(Key.FONT_SIZE, 18)
    qtbot.wait(200)
    assert len(factory.translator.calls) == 1


@pytest.mark.parametrize("key", [Key.JOIN_WRAPPED_LINES, Key.NORMALIZE_PUNCTUATION])
def test_new_text_options_default_on_and_are_saved_by_the_dialog(qtbot, settings, key):
    from gui.preferences.settings_dialog import SettingsDialog

    assert settings.get(key) is True
    dialog = SettingsDialog(settings)
    qtbot.addWidget(dialog)
    box = dialog.join_lines if key is Key.JOIN_WRAPPED_LINES else dialog.normalize
    assert box.isChecked() and box.accessibleName()
    box.setChecked(False)
    dialog.accept()
    assert settings.get(key) is False
