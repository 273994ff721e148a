"""Traditional Chinese asked of a model that writes Simplified only (issue 29: a feature that cannot apply says so),
on the real window, worker and engine: the tiny Firefox-family en→zh bundle (tests/conftest.py, no script token:
it writes Simplified only, as Firefox's) and the tiny opus-mt fixture (>>cmn_Hans<< / >>cmn_Hant<<) installed in one
profile's models folder, the Firefox one chosen for en→zh. The window says the mismatch once per model and script,
with "Use opus-mt-en-zh" (or "Models…" when no installed model writes it); Preferences keeps the script row and
says what the model writes; what is recorded is the script actually written; the model menu and the Models dialog
say which scripts each model writes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from engine.options import TranslationOptions
from engine.pipeline.translator import Translator
from gui.app import attach_records
from gui.models.models_dialog import ModelsDialog
from gui.review.edit_memory import KeptContext
from gui.review.review_editor import MARK_STALE
from gui.settings import Key, Settings
from gui.window.main_window import MainWindow
from tests.gui.conftest import TINY_BUNDLE
from tests.gui.real_windows import real_windows

TEXT = "Thank you very much."
FIREFOX, OPUS = "firefox-enzh", "opus-mt-en-zh"


@pytest.fixture
def install(tmp_path, monkeypatch, bergamot_bundle_dir):
    """install(*names): the bundles copied into this test's per-user models folder; nothing from the checkout."""
    monkeypatch.delenv("QIAO_DATA_DIR", raising=False)
    monkeypatch.setattr("engine.store.locate.SOURCE_ROOT", tmp_path / "no-checkout")
    sources = {FIREFOX: bergamot_bundle_dir, OPUS: TINY_BUNDLE}

    def install_(*names: str) -> dict[str, Path]:
        made = {}
        for name in names:
            made[name] = tmp_path / "data" / "Qiao" / "models" / name
            shutil.copytree(sources[name], made[name])
        return made

    return install_


@pytest.fixture
def open_window(qtbot, tmp_path):
    """The window as gui.app builds it, with Traditional chosen and the Firefox model chosen for en→zh."""
    with real_windows(qtbot, tmp_path) as open_real:

        def open_(variant: str = "hant", model: str = FIREFOX) -> MainWindow:
            settings = Settings(tmp_path / "config" / "qiao.ini")
            settings.set(Key.LIVE_TRANSLATE, False)
            settings.set(Key.DIRECTION, "en-zh")
            settings.set(Key.VARIANT, variant)
            settings.set(Key.MODEL_EN_ZH, model)
            settings.sync()
            w = open_real(settings)
            qtbot.waitUntil(lambda: w.model_control.loaded_model() is not None, timeout=10_000)
            return w

        yield open_


def loaded_name(window) -> str:
    return Path(window.model.bundle_dir).name


def translate(qtbot, window, text: str = TEXT) -> str:
    window.source.setPlainText(text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and window.last_result is not None, timeout=20_000)
    return window.target.toPlainText()


def edit_second_sentence(window) -> None:
    """Type a character into the second translated sentence, as a user edits it (QTest cannot type CJK)."""
    cursor = window.target.textCursor()
    cursor.setPosition(window.target_pane.sentence_range(1)[0] + 1)
    window.target.setTextCursor(cursor)
    window.target.textCursor().insertText("真")


def choose_and_retranslate(qtbot, window, name: str) -> None:
    """Choose model `name` from the indicator and wait until it has translated the text again."""
    before = window.last_result
    window.model_control.choose_model(next(m for m in window.model_control.models if m.name == name))
    qtbot.waitUntil(
        lambda: window.last_result is not before and not window.translating and loaded_name(window) == name,
        timeout=20_000,
    )


def test_traditional_with_a_simplified_only_model_is_said_once_with_use_the_model_that_writes_it(
    qtbot, install, open_window
):
    models = install(FIREFOX, OPUS)
    window = open_window()
    assert loaded_name(window) == FIREFOX
    notice = window.notice
    qtbot.waitUntil(lambda: notice.isVisible(), timeout=5000)
    said = notice.label.text()
    assert "Chinese script is set to Traditional" in said and f"{FIREFOX} writes Simplified only" in said
    assert "this translation is in Simplified" in said and f"{OPUS} writes Traditional" in said
    assert notice.action_button.text() == f"Use {OPUS}" and notice.action_button.isVisible()

    translate(qtbot, window)
    assert window.requests.made.options.variant == "hans", "the request records the script the model writes"
    assert window.target_pane.heading.text() == "Chinese (Simplified)", "the heading says what is shown"

    qtbot.mouseClick(notice.action_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.model is not None and loaded_name(window) == OPUS, timeout=20_000)
    assert window.settings.get(Key.MODEL_EN_ZH) == OPUS, "chosen as the model indicator chooses: remembered"
    got = translate(qtbot, window)
    assert window.requests.made.options.variant == "hant"
    assert window.target_pane.heading.text() == "Chinese (Traditional)"
    expected = Translator(models[OPUS], precision="int8").translate(TEXT, TranslationOptions(variant="hant")).text
    assert got == expected and got


def test_the_notice_is_said_once_per_model_and_script(qtbot, install, open_window):
    install(FIREFOX, OPUS)
    first = open_window()
    qtbot.waitUntil(lambda: first.notice.isVisible(), timeout=5000)
    assert first.settings.get(Key.SCRIPT_NOTICES) == f"{FIREFOX}/hant"
    first.shutdown()
    again = open_window()
    qtbot.wait(200)
    assert again.model_control.loaded_model() is not None and again.notice.isHidden(), "said once, not each start"
    assert open_window(variant="hans").notice.isHidden(), "Simplified is what it writes: nothing to say"


def test_without_a_model_that_writes_it_the_notice_opens_the_models_dialog_with_a_hint(qtbot, install, open_window):
    install(FIREFOX)
    window = open_window()
    qtbot.waitUntil(lambda: window.notice.isVisible(), timeout=5000)
    said = window.notice.label.text()
    assert f"{FIREFOX} writes Simplified only" in said and "No installed English → Chinese model writes" in said
    assert window.notice.action_button.text() == "Models…"
    window.notice.action_button.click()
    dialogs = window.findChildren(ModelsDialog)
    assert len(dialogs) == 1
    assert (
        "download a model for English → Chinese that writes Traditional, such as opus-mt-en-zh"
        in dialogs[0].message.text()
    )
    dialogs[0].close_tasks()


def test_preferences_keep_the_script_row_and_say_what_the_model_cannot_write(qtbot, install, open_window):
    install(FIREFOX, OPUS)
    window = open_window()
    dialog = window.open_settings()
    form = dialog.form
    assert form.isRowVisible(dialog.script), "Chinese is the target: the script row stays"
    assert [dialog.script.itemData(i) for i in range(dialog.script.count())] == ["hans", "hant"]
    assert dialog.script.currentData() == "hant"
    assert form.isRowVisible(dialog.script_note)
    assert dialog.script_note.text() == f"{FIREFOX} writes Simplified only: its translations are in Simplified."
    dialog.script.setCurrentIndex(dialog.script.findData("hans"))
    assert not form.isRowVisible(dialog.script_note), "Simplified is what it writes"
    dialog.script.setCurrentIndex(dialog.script.findData("hant"))
    dialog.accept()
    assert window.settings.get(Key.VARIANT) == "hant", "the choice is kept (for a model that writes it)"

    window.model_control.choose_model(next(m for m in window.model_control.models if m.name == OPUS))
    qtbot.waitUntil(lambda: window.model is not None and loaded_name(window) == OPUS, timeout=20_000)
    dialog = window.open_settings()
    assert dialog.form.isRowVisible(dialog.script) and not dialog.form.isRowVisible(dialog.script_note)
    dialog.reject()


def test_history_records_the_script_actually_written(qtbot, install, open_window):
    install(FIREFOX, OPUS)
    window = open_window()
    attach_records(window)
    got = translate(qtbot, window)
    recorder, panel = window.history_recorder, window.history_panel
    recorder.wait()
    qtbot.keyClick(window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: [e.source for e in panel.entries()] == [TEXT], timeout=5000)
    [entry] = panel.entries()
    assert (entry.output, entry.variant) == (got, "hans"), "Simplified output is not labelled Traditional"


def test_the_model_menu_and_the_models_dialog_say_which_scripts_each_model_writes(qtbot, install, open_window):
    install(FIREFOX, OPUS)
    window = open_window()
    control = window.model_control
    qtbot.waitUntil(lambda: len(control.direction_models()) == 2, timeout=5000)
    control.fill_model_menu()
    texts = {a.text().split(" — ")[0]: a.text() for a in control.model_menu.actions() if a.isCheckable()}
    assert "Simplified only" in texts[FIREFOX] and "Simplified, Traditional" in texts[OPUS]
    assert "Writes: Simplified only" in control.model_button.toolTip()

    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2 and not dialog._job, timeout=10_000)
    rows = {dialog.installed.item(r, ModelsDialog.NAME_COLUMN).text(): r for r in range(2)}
    scripts = ModelsDialog.SCRIPTS_COLUMN
    assert dialog.installed.item(rows[FIREFOX], scripts).text() == "Simplified only"
    assert dialog.installed.item(rows[OPUS], scripts).text() == "Simplified, Traditional"
    dialog.close_tasks()


def test_an_edit_made_with_the_simplified_only_model_is_known_to_be_simplified(qtbot, install, open_window):
    """Traditional chosen, Firefox's model writes Simplified: the user's edit is kept as Simplified, so once a model
    that writes Traditional translates again, the kept sentence is marked as still in Simplified (it used to be
    recorded without a script and sat unmarked inside the Traditional translation)."""
    install(FIREFOX, OPUS)
    window = open_window()
    translate(qtbot, window, "Thank you very much. I like green tea.")
    edit_second_sentence(window)
    assert window.target_pane.edits.made_with("I like green tea.") == KeptContext("en-zh", "hans")

    choose_and_retranslate(qtbot, window, OPUS)
    assert window.requests.made.options.variant == "hant"
    pane = window.target_pane
    qtbot.waitUntil(lambda: list(pane.stale()) == [1], timeout=5000)
    [mark] = [m for m, _, _ in window.target.visible_marks() if m.kind == MARK_STALE]
    assert mark.tooltip == (
        "Kept from a model that wrote Simplified; the model in use writes Traditional, as your script setting asks."
    ), "the user did not switch scripts: the model they kept it from could not write Traditional"


def test_a_traditional_edit_brought_back_by_the_simplified_only_model_blames_the_model(qtbot, install, open_window):
    """Traditional chosen, the edit made with opus-mt (Traditional); then Firefox's en→zh is chosen: the kept sentence
    is marked as Traditional inside Simplified because the model in use cannot write Traditional, not as if the user
    had switched to Simplified (they did not)."""
    install(FIREFOX, OPUS)
    window = open_window(model=OPUS)
    assert loaded_name(window) == OPUS
    translate(qtbot, window, "Thank you very much. I like green tea.")
    assert window.requests.made.options.variant == "hant"
    edit_second_sentence(window)
    assert window.target_pane.edits.made_with("I like green tea.") == KeptContext("en-zh", "hant")

    choose_and_retranslate(qtbot, window, FIREFOX)
    assert window.requests.made.options.variant == "hans" and window.settings.get(Key.VARIANT) == "hant"
    pane = window.target_pane
    qtbot.waitUntil(lambda: list(pane.stale()) == [1], timeout=5000)
    [mark] = [m for m, _, _ in window.target.visible_marks() if m.kind == MARK_STALE]
    assert mark.tooltip == (
        "Kept in Traditional; the model in use cannot write Traditional, so the translation around it is in Simplified."
    )
    assert "switched" not in pane.stale()[1]


@pytest.mark.parametrize(
    ("variant", "model", "said"), [("hant", FIREFOX, True), ("hans", FIREFOX, False), ("hant", OPUS, False)]
)
def test_the_quick_popup_says_briefly_that_the_model_writes_simplified_only(
    qtbot, install, open_window, variant, model, said
):
    """The window says it in its notice bar; the popup (shortcut, copy twice, `qiao popup`) showed the Simplified
    translation without a word. Now a line under it names the model and what it writes, only where it applies."""
    from gui.app import attach_desktop, attach_quick
    from gui.desktop.single_instance import InstanceRequest
    from tests.gui.quick.fakes import FakeBackend

    install(FIREFOX, OPUS)
    window = open_window(variant, model)
    assert loaded_name(window) == model
    desktop = attach_desktop(window, use_tray=False)
    quick = attach_quick(window, desktop, backend=FakeBackend())
    qtbot.addWidget(quick.popup)
    popup = quick.popup
    try:
        desktop.handle(InstanceRequest("popup", TEXT))
        qtbot.waitUntil(lambda: popup.state == "done" and bool(popup.translation), timeout=20_000)
        assert popup.isVisible()
        shown = [label.text() for label in popup.findChildren(QLabel) if label.isVisible()]
        if said:
            assert f"{FIREFOX} writes Simplified only, not Traditional." in shown, shown
            note = popup.note
            bottom = note.mapTo(popup, note.rect().bottomLeft()).y()
            assert bottom <= popup.status.mapTo(popup, popup.status.rect().topLeft()).y() <= popup.height()
            desktop.handle(InstanceRequest("popup", "Good morning."))  # the next request starts without it
            assert not note.isVisible()
        else:
            assert not any("Simplified" in text for text in shown), shown
    finally:
        quick.shutdown()
