"""The Models dialog on a fake store: the table, import, remove, verify, and downloads (only when asked)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QScreen

from engine.languages import default_pair
from gui.models.models_dialog import ARCHIVE_SUFFIXES, ModelsDialog
from tests.gui.fakes import EN_ZH, ZH_EN, FakeEntry, FakeModel, FakeStore

EN_ZH_MODEL = FakeModel(Path("/models/en-zh"), "opus-mt-en-zh", EN_ZH)
PROGRAM_MODEL = FakeModel(
    Path("/opt/qiao/models/en-zh"), "opus-mt-en-zh (built in)", EN_ZH, location="program", removable=False
)
ZH_EN_ENTRY = FakeEntry("opus-mt-zh-en", "opus-mt-zh-en", "zh", "en")


@pytest.fixture
def open_dialog(qtbot):
    dialogs: list[ModelsDialog] = []

    def make(store: FakeStore) -> ModelsDialog:
        dialog = ModelsDialog(store)
        qtbot.addWidget(dialog)
        dialogs.append(dialog)
        dialog.show()
        qtbot.waitUntil(lambda: not dialog._job and dialog.installed.rowCount() == len(store.models), timeout=5000)
        return dialog

    yield make
    for d in dialogs:
        d.close_tasks()
        assert not d.engine.thread.isRunning()


def cells(dialog: ModelsDialog, row: int = 0) -> list[str]:
    return [dialog.installed.item(row, c).text() for c in range(dialog.installed.columnCount())]


def wait_idle(qtbot, dialog: ModelsDialog) -> None:
    qtbot.waitUntil(lambda: not dialog._job, timeout=5000)


def test_installed_bundles_are_listed_with_pair_size_precisions_licence_location_and_status(open_dialog):
    dialog = open_dialog(FakeStore([EN_ZH_MODEL, PROGRAM_MODEL]))
    assert cells(dialog) == [
        "English → Chinese",
        "opus-mt-en-zh",
        "Simplified, Traditional",
        "Marian (opus-mt)",
        "Not published",
        "Not measured",
        "12.3 MB",
        "INT8, FP32",
        "CC-BY-4.0",
        "Your models folder",
        "Not checked",
        "In use",
    ]
    location, use = ModelsDialog.LOCATION_COLUMN, ModelsDialog.USE_COLUMN
    assert cells(dialog, 1)[location] == "Beside the program" and cells(dialog, 1)[use] == "", "one in use a direction"


def test_the_catalogue_is_fetched_only_when_the_user_asks(qtbot, open_dialog):
    store = FakeStore([EN_ZH_MODEL], [ZH_EN_ENTRY])
    dialog = open_dialog(store)
    qtbot.wait(50)
    assert "load_catalogue" not in store.calls and dialog.catalogue.rowCount() == 0
    qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.catalogue.rowCount() == 1, timeout=5000)
    assert store.calls.count("load_catalogue") == 1
    assert dialog.catalogue.item(0, 0).text() == "Chinese → English" and dialog.catalogue.item(0, 5).text() == "4.0 MB"


def test_import_success_adds_the_bundle_and_reports_the_new_list(qtbot, open_dialog):
    dialog = open_dialog(FakeStore([EN_ZH_MODEL]))
    seen: list = []
    dialog.models_changed.connect(seen.append)
    dialog.ask_import_path = lambda folder: "/downloads/zh-en.tar.gz"
    dialog.import_archive_action.trigger()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2, timeout=5000)
    wait_idle(qtbot, dialog)
    assert "Imported opus-mt-zh-en" in dialog.message.text()
    assert cells(dialog, 1)[0] == "Chinese → English"
    assert seen and {m.pair.key for m in seen[-1]} == {"en-zh", "zh-en"}


def test_a_failed_import_leaves_the_table_unchanged_and_says_why(qtbot, open_dialog):
    store = FakeStore([EN_ZH_MODEL], import_error=ValueError("manifest.json: model.sha256 does not match"))
    dialog = open_dialog(store)
    before = cells(dialog)
    dialog.import_from("/downloads/broken.zip")
    wait_idle(qtbot, dialog)
    qtbot.waitUntil(lambda: "nothing was changed" in dialog.message.text(), timeout=5000)
    assert "sha256 does not match" in dialog.message.text()
    assert dialog.installed.rowCount() == 1 and cells(dialog) == before


def test_the_archive_filter_lists_every_supported_archive():
    assert set(ARCHIVE_SUFFIXES) == {"*.zip", "*.tar", "*.tar.gz", "*.tgz", "*.tar.xz", "*.tar.bz2"}


def test_remove_asks_first_and_a_declined_confirmation_removes_nothing(qtbot, open_dialog):
    store = FakeStore([EN_ZH_MODEL])
    dialog = open_dialog(store)
    removed: list = []
    dialog.removed.connect(removed.append)
    dialog.installed.selectRow(0)
    asked: list = []
    dialog.confirm_remove = lambda model: asked.append(model) or False
    dialog.remove_button.click()
    qtbot.wait(50)
    assert asked == [EN_ZH_MODEL] and "remove_bundle" not in store.calls and dialog.installed.rowCount() == 1
    dialog.confirm_remove = lambda model: True
    dialog.remove_button.click()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 0, timeout=5000)
    assert removed == [str(EN_ZH_MODEL.path)]


def test_a_bundle_that_is_not_removable_says_why(open_dialog):
    dialog = open_dialog(FakeStore([PROGRAM_MODEL]))
    dialog.installed.selectRow(0)
    assert not dialog.remove_button.isEnabled()
    assert "Beside the program" in dialog.remove_button.toolTip()


def test_verify_marks_the_bundle_verified_or_names_the_damage(qtbot, open_dialog):
    store = FakeStore([EN_ZH_MODEL])
    dialog = open_dialog(store)
    dialog.installed.selectRow(0)
    dialog.verify_button.click()
    qtbot.waitUntil(lambda: cells(dialog)[ModelsDialog.STATUS_COLUMN] == "Verified", timeout=5000)
    store.damaged[str(EN_ZH_MODEL.path)] = ["model.int8.onnx: sha256 mismatch"]
    wait_idle(qtbot, dialog)
    dialog.verify_button.click()
    qtbot.waitUntil(lambda: cells(dialog)[ModelsDialog.STATUS_COLUMN].startswith("Damaged"), timeout=5000)
    assert "model.int8.onnx" in cells(dialog)[ModelsDialog.STATUS_COLUMN]


def test_download_shows_progress_and_cancel_changes_nothing(qtbot, open_dialog):
    gate = threading.Event()
    store = FakeStore([EN_ZH_MODEL], [ZH_EN_ENTRY], gate=gate, chunks=4)
    dialog = open_dialog(store)
    dialog.check_catalogue()
    qtbot.waitUntil(lambda: dialog.catalogue.rowCount() == 1, timeout=5000)
    wait_idle(qtbot, dialog)
    dialog.catalogue.selectRow(0)
    dialog.download_button.click()
    assert dialog.progress.isVisible() and dialog.cancel_button.isEnabled()
    assert not dialog.download_button.isEnabled(), "one operation at a time"
    qtbot.mouseClick(dialog.cancel_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, dialog)
    assert dialog.message.text() == "Cancelled; nothing was changed."
    assert dialog.installed.rowCount() == 1 and not dialog.progress.isVisible()


def test_download_progress_names_the_megabytes_and_ends_with_the_new_bundle(qtbot, open_dialog):
    store = FakeStore([EN_ZH_MODEL], [ZH_EN_ENTRY], chunks=2)
    dialog = open_dialog(store)
    formats: list[str] = []
    set_format = dialog.progress.setFormat
    dialog.progress.setFormat = lambda text: formats.append(text) or set_format(text)
    dialog.entries = [ZH_EN_ENTRY]
    dialog._fill_catalogue()
    dialog.catalogue.selectRow(0)
    dialog.download_selected()
    qtbot.waitUntil(lambda: dialog.installed.rowCount() == 2, timeout=5000)
    wait_idle(qtbot, dialog)
    assert any("4.0 of 4.0 MB" in f for f in formats), formats
    assert "Downloaded and checked opus-mt-zh-en" in dialog.message.text()
    assert dialog.catalogue.item(0, ModelsDialog.CATALOGUE_STATE_COLUMN).text() == "Installed"


def test_offline_the_dialog_says_so_and_nothing_else_changes(qtbot, open_dialog):
    store = FakeStore([EN_ZH_MODEL], [ZH_EN_ENTRY], offline=True)
    dialog = open_dialog(store)
    dialog.check_catalogue()
    wait_idle(qtbot, dialog)
    assert dialog.message.text() == ("Qiao could not reach the model server. You may be offline; nothing was changed.")
    assert dialog.catalogue.rowCount() == 0 and dialog.installed.rowCount() == 1


def test_download_speed_is_measured_from_the_first_report(open_dialog, monkeypatch):
    import gui.models.models_dialog as models_dialog

    dialog = open_dialog(FakeStore([EN_ZH_MODEL]))
    now = [100.0]
    monkeypatch.setattr(models_dialog.time, "monotonic", lambda: now[0])
    dialog._job = "download"
    dialog._progress("download", 40_000_000, 80_000_000)  # a resumed download: half was already there
    assert dialog.progress.format() == "40.0 of 80.0 MB"
    now[0] += 2.0
    dialog._progress("download", 50_000_000, 80_000_000)
    assert dialog.progress.format() == "50.0 of 80.0 MB · 5.0 MB/s"
    assert dialog.progress.value() * 80 // dialog.progress.maximum() == 50


def _firefox_model(name: str) -> FakeModel:
    """An installed en→zh Firefox Translations (Bergamot-family) model called `name`."""
    return FakeModel(
        Path(f"/models/{name}"),
        name,
        default_pair("en", "zh"),
        model_id=f"mozilla/{name}",
        license="MPL-2.0",
        family="bergamot",
    )


def test_the_installed_table_fits_a_1220_px_dialog_without_scrolling_sideways(qtbot, open_dialog):
    """Twelve columns with a long Firefox name, a program location and a problem: the long cells are elided (their
    full text in the tooltip), every column stays on screen, no horizontal scroll bar."""
    firefox = _firefox_model("firefox-translations-enzh-base-memory")
    broken = FakeModel(
        Path("/opt/qiao/models/broken"),
        "opus-mt-zh-en (built in)",
        None,
        location="program",
        removable=False,
        problem="manifest.json: graphs.decoder.inputs[10]: expected a name the family knows, found something else",
    )
    dialog = open_dialog(FakeStore([firefox, EN_ZH_MODEL, PROGRAM_MODEL, broken]))
    dialog.resize(1220, 700)
    qtbot.waitUntil(lambda: dialog.width() == 1220)
    table = dialog.installed
    header = table.horizontalHeader()
    widths = [header.sectionSize(c) for c in range(table.columnCount())]
    assert table.horizontalScrollBar().maximum() == 0, widths
    assert sum(widths) <= table.viewport().width() and min(widths) >= 40, widths
    assert cells(dialog)[ModelsDialog.SCRIPTS_COLUMN] == "Simplified only"
    assert "firefox-translations-enzh-base-memory" in table.item(0, ModelsDialog.NAME_COLUMN).toolTip()
    status = table.item(3, ModelsDialog.STATUS_COLUMN)
    assert status.text() == broken.problem and status.toolTip() == broken.problem, "elided on screen, whole here"


def test_the_dialog_opens_wide_enough_to_show_which_model_is_in_use(qtbot, open_dialog, monkeypatch):
    """As File → Models… opens it, unresized, on a 1600 × 1000 desktop, with a Firefox model beside opus-mt: every
    column is on screen, "In use" included (it opened at its 760 px minimum, "In use" and "Status" behind a
    horizontal scroll bar); on a screen narrower than that it still fits the screen."""
    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(0, 0, 1600, 1000))
    firefox = _firefox_model("firefox-translations-enzh-full-shape-synthetic")
    dialog = open_dialog(FakeStore([firefox, EN_ZH_MODEL]))
    table = dialog.installed
    header = table.horizontalHeader()
    assert dialog.width() <= 1600
    assert table.horizontalScrollBar().maximum() == 0, [header.sectionSize(c) for c in range(table.columnCount())]
    in_use = ModelsDialog.USE_COLUMN
    assert header.sectionViewportPosition(in_use) + header.sectionSize(in_use) <= table.viewport().width()
    assert "In use" in [table.item(r, in_use).text() for r in range(table.rowCount())]

    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(0, 0, 1024, 768))
    assert dialog.opening_size().width() <= 1024 - 40


def test_the_import_file_dialogs_open_in_the_folder_the_last_import_came_from(
    qtbot, make_window, settings, tmp_path, monkeypatch
):
    """They opened in the current folder every time; now in the last folder used, remembered in the settings (a
    new Models dialog, and a restart, start there too). Cancelling remembers nothing."""
    from PySide6.QtWidgets import QFileDialog

    from gui.settings import Key, Settings
    from tests.gui.fakes import FakeFactory

    downloads, models = tmp_path / "Downloads", tmp_path / "Models"
    asked: list[tuple[str, str]] = []  # (which dialog, the folder it opened in)
    answers = [str(downloads / "zh-en.tar.gz"), str(models / "opus-mt-zh-en"), ""]

    def open_file(parent, caption="", directory="", filter=""):
        asked.append(("archive", directory))
        return answers.pop(0), ""

    def open_folder(parent, caption="", directory=""):
        asked.append(("folder", directory))
        return answers.pop(0)

    monkeypatch.setattr(QFileDialog, "getOpenFileName", staticmethod(open_file))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(open_folder))
    window = make_window(FakeFactory(), model_store=FakeStore([EN_ZH_MODEL]))
    dialog = window.open_models()
    wait_idle(qtbot, dialog)
    dialog.import_archive_action.trigger()
    wait_idle(qtbot, dialog)
    dialog.import_folder_action.trigger()
    wait_idle(qtbot, dialog)
    dialog.reject()
    again = window.open_models()
    wait_idle(qtbot, again)
    again.import_archive_action.trigger()  # cancelled
    again.reject()
    assert asked == [("archive", ""), ("folder", str(downloads)), ("archive", str(models))]
    assert Settings(settings.path).get(Key.MODEL_IMPORT_DIR) == str(models), "kept for the next start"


def test_the_writes_column_names_english_for_a_zh_en_model(open_dialog, qapp):
    """The Writes cell of a zh→en row was blank (English has no scripts to list); it names the language, in the
    interface language, and so do the row's tooltip and the model menu's summary."""
    from gui.i18n import install_translators
    from gui.models import model_text

    zh_en = FakeModel(Path("/models/zh-en"), "opus-mt-zh-en", ZH_EN)
    dialog = open_dialog(FakeStore([EN_ZH_MODEL, zh_en]))
    rows = {dialog.installed.item(r, ModelsDialog.NAME_COLUMN).text(): r for r in range(2)}
    writes = dialog.installed.item(rows["opus-mt-zh-en"], ModelsDialog.SCRIPTS_COLUMN)
    assert writes.text() == "English"
    assert "Writes: English" in writes.toolTip()
    assert dialog.installed.item(rows["opus-mt-en-zh"], ModelsDialog.SCRIPTS_COLUMN).text() == "Simplified, Traditional"
    assert model_text.summary(zh_en).startswith("English · ")
    install_translators("zh_CN")
    try:
        dialog._fill_installed()
        assert dialog.installed.item(rows["opus-mt-zh-en"], ModelsDialog.SCRIPTS_COLUMN).text() == "英语"
    finally:
        install_translators("en")


def test_check_for_models_selects_the_recommended_model_of_a_direction_not_yet_installed(qtbot, open_dialog):
    """A new install (or one direction missing): the best-quality entry is selected, so Download gets it in one click;
    before, nothing was selected and Download stayed disabled until a row was picked."""
    from engine.store.quality import Speed, published_for

    opus = FakeEntry(
        "opus-mt-zh-en", "opus-mt-zh-en", "zh", "en", quality=published_for("Helsinki-NLP/opus-mt-zh-en").quality
    )
    firefox_id = "mozilla/firefox-translations-zhen-base"
    firefox = FakeEntry(
        "firefox-translations-zhen-base",
        "Firefox base",
        "zh",
        "en",
        model_id=firefox_id,
        quality=published_for(firefox_id).quality,
        speed=Speed(512.0, 2, "int8", "test CPU"),
    )
    en_zh = FakeEntry("opus-mt-en-zh", "opus-mt-en-zh", "en", "zh", model_id="Helsinki-NLP/opus-mt-en-zh")
    dialog = open_dialog(FakeStore([EN_ZH_MODEL], [en_zh, opus, firefox]))
    qtbot.mouseClick(dialog.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: dialog.catalogue.rowCount() == 3 and not dialog._job, timeout=5000)
    assert dialog.selected_entry() is firefox, "zh→en has no model: its best one, not the first listed"
    speed = ModelsDialog.CATALOGUE_SPEED_COLUMN
    assert [dialog.catalogue.item(r, speed).text() for r in range(3)] == ["Not measured"] * 2 + ["512 tokens/s"], (
        "the download list shows speed beside quality, size and licence, as the installed list does"
    )
    assert (
        dialog.catalogue.item(2, ModelsDialog.CATALOGUE_STATE_COLUMN).text() == "Recommended"
        and dialog.download_button.isEnabled()
    )
    served = open_dialog(FakeStore([EN_ZH_MODEL, FakeModel(Path("/models/zh-en"), "opus-mt-zh-en", ZH_EN)], [opus]))
    qtbot.mouseClick(served.check_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: served.catalogue.rowCount() == 1 and not served._job, timeout=5000)
    assert served.selected_entry() is None, "every direction has a model: nothing is picked for the user"
