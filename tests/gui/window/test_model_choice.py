"""Choosing among several models of one direction, on the real window, worker and engine: two en→zh bundles made from
the committed fixture are installed in a scratch per-user models folder (`opus-mt-en-zh`, with opus-mt's published
COMET 82.44, and `tiny-better`, COMET 90.00 with a measured speed). The best one loads without a choice; the model
indicator and the Models dialog choose the other, which loads at once on the worker and is remembered per direction
(in the settings file the engine's store reads too); an opus-mt-only user is offered the better model once."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from engine.store.choice import read_choices
from gui.models.models_dialog import ModelsDialog
from gui.settings import Key, Settings
from gui.worker.scheduler import default_factory, default_locator, default_pair_lister
from tests.engine.model_helpers import catalogue_entry, write_catalogue, zip_bundle
from tests.engine.store.direction_models import model_copy
from tests.gui.models.test_models_dialog_engine import server

__all__ = ["server"]  # the 127.0.0.1 catalogue server fixture, shared with the Models dialog's engine tests


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Install copies of the fixture into a scratch models folder; nothing from the checkout is found."""
    data = tmp_path / "qiao-data"
    monkeypatch.setenv("QIAO_DATA_DIR", str(data))
    monkeypatch.setattr("engine.store.locate.SOURCE_ROOT", tmp_path / "no-checkout")
    models = data / "models"

    def install(*names: str) -> dict[str, Path]:
        made = {}
        for name in names:
            if name == "opus-mt-en-zh":
                made[name] = model_copy(models / name, "Helsinki-NLP/opus-mt-en-zh")
            else:
                made[name] = model_copy(models / name, f"qiao/{name}", score=90.0, speed=321.0)
        return made

    return install


@pytest.fixture
def real_window(qtbot, make_window, settings):
    def make(settings_obj: Settings | None = None, model_dir: str | None = None):
        (settings_obj or settings).set(Key.LIVE_TRANSLATE, False)
        if model_dir is not None:
            window = make_window(model_dir=model_dir, settings_obj=settings_obj)
        else:
            window = make_window(
                default_factory, default_locator, pair_lister=default_pair_lister, settings_obj=settings_obj
            )
        control = window.model_control
        qtbot.waitUntil(lambda: bool(control.models) and control.model_button.isVisible(), timeout=10_000)
        return window

    return make


def loaded(window) -> Path:
    return Path(window.model.bundle_dir).resolve()


def translate(qtbot, window, text: str = "Thank you very much.") -> None:
    window.source.setPlainText(text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and window.last_result is not None, timeout=10_000)


def menu_actions(window) -> dict[str, object]:
    control = window.model_control
    control.fill_model_menu()
    return {a.text().split(" — ")[0]: a for a in control.model_menu.actions() if a.isCheckable()}


def test_the_best_installed_model_loads_and_the_indicator_shows_quality_size_speed_licence(real_window, installed):
    models = installed("opus-mt-en-zh", "tiny-better")
    window = real_window()
    assert loaded(window) == models["tiny-better"].resolve(), "no choice: the best published quality"
    button = window.model_control.model_button
    assert button.text() == "tiny-better" and button.parentWidget() is window.statusBar()
    tip = button.toolTip()
    assert "COMET-22 90.00 on FLORES devtest" in tip and "321 tokens/s" in tip and "CC-BY-4.0" in tip
    assert "2.0 MB" in tip
    actions = menu_actions(window)
    assert list(actions) == ["tiny-better", "opus-mt-en-zh"], "best first"
    assert actions["tiny-better"].isChecked() and not actions["opus-mt-en-zh"].isChecked()
    assert "COMET-22 82.44" in actions["opus-mt-en-zh"].text() and "CC-BY-4.0" in actions["opus-mt-en-zh"].text()
    assert window.notice.isHidden(), "a model better than any Qiao knows of is installed: nothing to offer"


def test_choosing_in_the_indicator_loads_the_model_at_once_and_it_is_remembered(
    qtbot, real_window, installed, make_window, settings, tmp_path
):
    models = installed("opus-mt-en-zh", "tiny-better")
    window = real_window()
    translate(qtbot, window)
    before, first = window.target.toPlainText(), window.last_result
    worker_thread = window.engine.thread
    menu_actions(window)["opus-mt-en-zh"].trigger()
    qtbot.waitUntil(
        lambda: window.model is not None and loaded(window) == models["opus-mt-en-zh"].resolve(), timeout=10_000
    )
    qtbot.waitUntil(lambda: not window.translating and window.last_result is not first, timeout=10_000)
    assert window.target.toPlainText() == before, "the shown text translated again by the chosen model"
    assert window.engine.thread is worker_thread and worker_thread.isRunning(), "loaded on the same worker thread"
    qtbot.waitUntil(lambda: window.model_control.model_button.text() == "opus-mt-en-zh", timeout=5000)
    assert settings.get(Key.MODEL_EN_ZH) == "opus-mt-en-zh"
    assert read_choices() == {"en-zh": "opus-mt-en-zh"}, "saved where the CLI reads it"
    window.shutdown()
    again = real_window(Settings(tmp_path / "config" / "qiao.ini"))
    assert loaded(again) == models["opus-mt-en-zh"].resolve(), "the choice outlives the window"


def test_the_models_dialog_chooses_the_model_a_direction_uses(qtbot, real_window, installed):
    models = installed("opus-mt-en-zh", "tiny-better")
    window = real_window()
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2 and not dialog._job, timeout=10_000)
    rows = {dialog.installed.item(r, 1).text(): r for r in range(2)}
    use = ModelsDialog.USE_COLUMN
    assert dialog.installed.item(rows["tiny-better"], use).text() == "In use"
    assert dialog.installed.item(rows["opus-mt-en-zh"], ModelsDialog.QUALITY_COLUMN).text() == "COMET-22 82.44"
    assert dialog.installed.item(rows["tiny-better"], ModelsDialog.SPEED_COLUMN).text() == "321 tokens/s"
    dialog.installed.selectRow(rows["tiny-better"])
    assert not dialog.use_button.isEnabled(), "already in use"
    dialog.installed.selectRow(rows["opus-mt-en-zh"])
    assert dialog.use_button.isEnabled()
    qtbot.mouseClick(dialog.use_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(
        lambda: window.model is not None and loaded(window) == models["opus-mt-en-zh"].resolve(), timeout=10_000
    )
    dialog._fill_installed()
    assert dialog.installed.item(rows["opus-mt-en-zh"], use).text() == "In use"
    assert dialog.installed.item(rows["tiny-better"], use).text() == ""
    assert read_choices() == {"en-zh": "opus-mt-en-zh"}
    dialog.reject()


def test_an_opus_mt_user_is_offered_the_better_model_once(qtbot, real_window, installed, tmp_path):
    installed("opus-mt-en-zh")
    window = real_window()
    qtbot.waitUntil(lambda: window.notice.isVisible(), timeout=5000)
    (message,) = window.notice.messages()
    assert "A better English → Chinese model is available: Firefox base-memory" in message
    assert "COMET-22 86.31" in message and "COMET-22 82.44 for opus-mt-en-zh" in message
    assert "not offered again" in message, "closing it declines, and the notice says so"
    assert window.notice.action_button.text() == "Download English → Chinese model"
    window.notice.dismiss()  # declined
    assert window.settings.get(Key.MODELS_OFFERED) == "firefox-translations-enzh-base-memory"
    window.settings.sync()
    window.shutdown()
    again = real_window(Settings(tmp_path / "config" / "qiao.ini"))
    qtbot.wait(200)
    assert again.notice.messages() == [], "offered once per model"
    assert again.settings.get(Key.MODEL_EN_ZH) == "", "declining chose nothing"


def test_accepting_the_offer_downloads_the_better_model_off_the_ui_thread_and_switches_to_it(
    qtbot, real_window, installed, server, tmp_path, monkeypatch
):
    """The offer's button used to open the Models dialog with a hint ("Check for models, then Download"): three more
    steps, and the downloaded model was not used until the next start. Now one click reads the catalogue, downloads
    the offered model on the dialog's task thread, and chooses it for its direction."""
    models = installed("opus-mt-en-zh")
    name = "firefox-translations-enzh-base-memory"
    built = model_copy(tmp_path / "build" / name, f"mozilla/{name}")
    archive = zip_bundle(tmp_path / f"{name}.zip", bundle=built, top=name)
    url = server.add(f"/{name}.zip", archive.read_bytes())
    entries = [
        catalogue_entry(
            archive, url, id=name, name="Firefox base-memory", model_id=f"mozilla/{name}", license="MPL-2.0"
        )
    ]
    catalogue = write_catalogue(tmp_path / "catalogue.json", entries)
    monkeypatch.setenv("QIAO_CATALOGUE_URL", server.add("/catalogue.json", catalogue.read_bytes()))
    window = real_window()
    assert loaded(window) == models["opus-mt-en-zh"].resolve()
    qtbot.waitUntil(lambda: window.notice.isVisible(), timeout=5000)
    window.notice.action_button.click()
    (dialog,) = [d for d in window.findChildren(ModelsDialog) if d.isVisible()]
    assert dialog.engine.thread is not window.thread()
    qtbot.waitUntil(lambda: window.model is not None and loaded(window).name == name, timeout=30_000)
    assert (Path(window.model.bundle_dir).parent / name / "manifest.json").is_file()
    assert window.settings.get(Key.MODEL_EN_ZH) == name and read_choices() == {"en-zh": name}, "chosen and saved"
    assert "Downloaded and checked" in dialog.message.text()
    assert not any("A better" in m for m in window.notice.messages()), "the accepted offer is gone"
    qtbot.waitUntil(lambda: window.model_control.model_button.text() == name, timeout=5000)
    dialog.reject()


def test_the_offer_names_what_went_wrong_when_the_server_does_not_list_the_model(
    qtbot, real_window, installed, server, tmp_path, monkeypatch
):
    models = installed("opus-mt-en-zh")
    catalogue = write_catalogue(tmp_path / "catalogue.json", [])
    monkeypatch.setenv("QIAO_CATALOGUE_URL", server.add("/catalogue.json", catalogue.read_bytes()))
    window = real_window()
    qtbot.waitUntil(lambda: window.notice.isVisible(), timeout=5000)
    window.notice.action_button.click()
    (dialog,) = [d for d in window.findChildren(ModelsDialog) if d.isVisible()]
    qtbot.waitUntil(lambda: "does not list" in dialog.message.text(), timeout=10_000)
    assert "firefox-translations-enzh-base-memory" in dialog.message.text() and not dialog._job
    assert loaded(window) == models["opus-mt-en-zh"].resolve() and window.settings.get(Key.MODEL_EN_ZH) == ""
    dialog.reject()


def test_started_with_one_model_there_is_nothing_to_choose_or_offer(qtbot, real_window, installed):
    models = installed("opus-mt-en-zh", "tiny-better")
    window = real_window(model_dir=str(models["opus-mt-en-zh"]))
    assert loaded(window) == models["opus-mt-en-zh"].resolve()
    actions = menu_actions(window)
    assert actions and not any(a.isEnabled() for a in actions.values())
    assert "--model" in window.model_control.model_button.toolTip()
    qtbot.wait(200)
    assert window.notice.messages() == []


def test_replacing_the_model_in_use_loads_the_new_one_and_says_so(qtbot, real_window, installed, tmp_path):
    """Importing the model in use again (Models → Import, "Replace it?" → Yes) replaces its folder on disk; the
    window used to go on with the old model, whose files were gone, with no reload and no word."""
    models = installed("opus-mt-en-zh")
    incoming = model_copy(tmp_path / "incoming" / "opus-mt-en-zh", "Helsinki-NLP/opus-mt-en-zh")
    window = real_window()
    translate(qtbot, window)
    before, old = window.target.toPlainText(), window.model
    old_manifest = models["opus-mt-en-zh"] / "manifest.json"
    inode = old_manifest.stat().st_ino
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 1 and not dialog._job, timeout=10_000)
    asked: list[object] = []
    dialog.confirm_replace = lambda what: asked.append(what) or True  # "Replace it?" → Yes
    dialog.import_from(incoming)
    qtbot.waitUntil(lambda: "Imported" in dialog.message.text(), timeout=30_000)
    assert asked == ["opus-mt-en-zh"] and old_manifest.stat().st_ino != inode, "the folder was replaced"
    qtbot.waitUntil(lambda: window.model is not None and window.model is not old, timeout=10_000)
    assert loaded(window) == models["opus-mt-en-zh"].resolve(), "the same model, loaded again from its new files"
    assert any("was replaced" in m and "opus-mt-en-zh" in m for m in window.notice.messages()), window.notice.messages()
    first = window.last_result
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and window.last_result is not first, timeout=10_000)
    assert window.target.toPlainText() == before, "the reloaded model translates"
    dialog.reject()


def test_replacing_a_model_no_direction_uses_loads_nothing(qtbot, real_window, installed, tmp_path):
    models = installed("opus-mt-en-zh", "tiny-better")
    incoming = model_copy(tmp_path / "incoming" / "opus-mt-en-zh", "Helsinki-NLP/opus-mt-en-zh")
    window = real_window()
    assert loaded(window) == models["tiny-better"].resolve()
    old = window.model
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2 and not dialog._job, timeout=10_000)
    dialog.confirm_replace = lambda what: True
    dialog.import_from(incoming)
    qtbot.waitUntil(lambda: "Imported" in dialog.message.text(), timeout=30_000)
    qtbot.waitUntil(lambda: not dialog._job, timeout=10_000)
    assert window.model is old and not window.model_control.loading, "the model in use was not touched"
    assert not any("was replaced" in m for m in window.notice.messages())
    dialog.reject()


def test_removing_the_chosen_model_falls_back_to_the_best_says_which_and_forgets_the_choice(
    qtbot, real_window, installed, tmp_path
):
    models = installed("opus-mt-en-zh", "tiny-better")
    window = real_window()
    window.model_control.choose_model(next(m for m in window.model_control.models if m.name == "opus-mt-en-zh"))
    qtbot.waitUntil(
        lambda: window.model is not None and loaded(window) == models["opus-mt-en-zh"].resolve(), timeout=10_000
    )
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2 and not dialog._job, timeout=10_000)
    rows = {dialog.installed.item(r, 1).text(): r for r in range(2)}
    dialog.installed.selectRow(rows["opus-mt-en-zh"])
    dialog.confirm_remove = lambda model: True
    dialog.remove_selected()
    qtbot.waitUntil(
        lambda: window.model is not None and loaded(window) == models["tiny-better"].resolve(), timeout=10_000
    )
    qtbot.waitUntil(lambda: window.model_control.model_button.text() == "tiny-better", timeout=5000)
    assert any("was removed" in m for m in window.notice.messages()), window.notice.messages()
    assert window.settings.get(Key.MODEL_EN_ZH) == "" and read_choices() == {}, (
        "the choice named a model that is gone: forgotten, so a later import of that name does not switch silently"
    )
    dialog.reject()


@pytest.mark.parametrize("chosen", [False, True])
def test_a_better_model_installed_is_used_at_once_and_said_unless_the_user_chose_one(
    qtbot, real_window, installed, tmp_path, chosen
):
    """Without a choice the best installed model translates a direction, so one installed from the Models dialog took
    over at the next start, while the dialog and the indicator still named the old one, with no word. Now it is used
    at once, and the window says so; a user who chose opus-mt keeps it."""
    models = installed("opus-mt-en-zh")
    settings = Settings(tmp_path / "config" / "qiao.ini")
    if chosen:
        settings.set(Key.MODEL_EN_ZH, "opus-mt-en-zh")
    window = real_window(settings)
    assert loaded(window) == models["opus-mt-en-zh"].resolve()
    incoming = model_copy(tmp_path / "incoming" / "tiny-better", "qiao/tiny-better", score=90.0)
    dialog = window.open_models()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 1 and not dialog._job, timeout=10_000)
    dialog.import_from(incoming)
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2 and not dialog._job, timeout=30_000)
    if chosen:
        qtbot.wait(300)
        assert loaded(window) == models["opus-mt-en-zh"].resolve(), "the user's choice is kept"
        assert not any("tiny-better" in m for m in window.notice.messages())
    else:
        qtbot.waitUntil(lambda: window.model is not None and loaded(window).name == "tiny-better", timeout=10_000)
        assert any("tiny-better" in m and "English → Chinese" in m for m in window.notice.messages()), (
            window.notice.messages()
        )
        assert window.settings.get(Key.MODEL_EN_ZH) == "", "still no choice: the best is used"
    dialog.reject()


@pytest.mark.parametrize("how", ["moved", "damaged"])
def test_a_chosen_model_gone_or_damaged_is_said_once_with_the_one_used_instead(
    qtbot, real_window, installed, tmp_path, how
):
    """With en-zh chosen as opus-mt-en-zh, moving that folder out of the models folder (or damaging its manifest)
    made the window quietly use the other en→zh model. Now a notice names both, once per start."""
    import shutil

    models = installed("opus-mt-en-zh", "tiny-better")
    settings = Settings(tmp_path / "config" / "qiao.ini")
    settings.set(Key.MODEL_EN_ZH, "opus-mt-en-zh")
    settings.sync()
    if how == "moved":
        shutil.move(str(models["opus-mt-en-zh"]), str(tmp_path / "moved-away"))
    else:
        (models["opus-mt-en-zh"] / "manifest.json").write_text("{ damaged", encoding="utf-8")
    window = real_window(settings)
    assert loaded(window) == models["tiny-better"].resolve()
    said = [m for m in window.notice.messages() if "opus-mt-en-zh" in m and "tiny-better" in m]
    assert len(said) == 1, window.notice.messages()
    assert "English → Chinese" in said[0]
    assert ("not installed any more" in said[0]) == (how == "moved") and ("damaged" in said[0]) == (how == "damaged")
    assert window.notice.action_button.text() == "Models…"
    window.notice.dismiss()
    translate(qtbot, window)
    window.model_control.refresh_models()
    qtbot.wait(300)
    assert not window.notice.messages(), "said once per start, not at every listing or translation"
    assert settings.get(Key.MODEL_EN_ZH) == "opus-mt-en-zh", "the choice is kept: the model may come back"
    window.shutdown()


def test_a_chosen_model_in_use_says_nothing(qtbot, real_window, installed, tmp_path):
    installed("opus-mt-en-zh", "tiny-better")
    settings = Settings(tmp_path / "config" / "qiao.ini")
    settings.set(Key.MODEL_EN_ZH, "opus-mt-en-zh")
    settings.sync()
    window = real_window(settings)
    assert loaded(window).name == "opus-mt-en-zh"
    assert not any("opus-mt-en-zh" in m for m in window.notice.messages()), window.notice.messages()
    window.shutdown()
