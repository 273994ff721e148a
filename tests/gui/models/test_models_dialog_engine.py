"""The Models dialog on the real engine store (no fakes): a private models folder, the committed fixture served by a
local 127.0.0.1 server, and the failures a user meets — offline, a damaged archive, a wrong sha256."""

from __future__ import annotations

import shutil
import socket
import threading
import zipfile
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Qt, QTimer, Slot

from engine.families.bergamot.converter import convert
from gui.models.models_dialog import ModelsDialog
from tests.engine import model_helpers
from tests.engine.model_helpers import FIXTURE_NAME, catalogue_entry, closed_port_url, write_catalogue, zip_bundle
from tests.fixtures.bergamot import make

store = model_helpers.store
_GETADDRINFO = socket.getaddrinfo  # before any test patches it


@pytest.fixture
def server(no_network, monkeypatch):
    """tests/engine's 127.0.0.1 server. GUI tests refuse every lookup and connection (no_network); loopback is let
    through here and only here, and anything else still fails the test."""
    refused = socket.getaddrinfo

    def lookup(host, *args, **kwargs):
        return _GETADDRINFO(host, *args, **kwargs) if host in model_helpers.LOOPBACK else refused(host, *args)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    model_helpers.allow_loopback(monkeypatch)
    with model_helpers.running_server() as state:
        yield state


@pytest.fixture
def dialog(qtbot, store):
    made: list[ModelsDialog] = []

    def make() -> ModelsDialog:
        d = (
            ModelsDialog()
        )  # the engine's own store (engine.store.installed, engine.store.catalogue, engine.store.download)
        qtbot.addWidget(d)
        made.append(d)
        d.show()
        idle(qtbot, d)
        return d

    yield make
    for d in made:
        d.close_tasks()


def idle(qtbot, d: ModelsDialog) -> None:
    qtbot.waitUntil(lambda: not d._job, timeout=30_000)


def serve_catalogue(server, tmp_path, monkeypatch, **changes) -> None:
    archive = zip_bundle(tmp_path / "bundle.zip")
    url = server.add("/bundle.zip", archive.read_bytes())
    catalogue = write_catalogue(tmp_path / "catalogue.json", [catalogue_entry(archive, url, **changes)])
    monkeypatch.setenv("QIAO_CATALOGUE_URL", server.add("/catalogue.json", catalogue.read_bytes()))


def test_download_from_the_catalogue_installs_a_verified_bundle(qtbot, dialog, store, server, tmp_path, monkeypatch):
    serve_catalogue(server, tmp_path, monkeypatch)
    d = dialog()
    assert d.installed.rowCount() == 0 and d.catalogue.rowCount() == 0
    assert server.requests == []  # opening the dialog asks no server
    d.check_catalogue()
    idle(qtbot, d)
    assert d.catalogue.rowCount() == 1 and d.catalogue.item(0, 0).text() == "English → Chinese"
    d.catalogue.selectRow(0)
    d.download_selected()
    idle(qtbot, d)
    qtbot.waitUntil(lambda: d.installed.rowCount() == 1, timeout=10_000)
    assert "Downloaded and checked" in d.message.text()
    assert (store.models / FIXTURE_NAME / "manifest.json").is_file()
    assert d.installed.item(0, 0).text() == "English → Chinese"
    assert d.installed.item(0, ModelsDialog.LOCATION_COLUMN).text() == "Your models folder"
    assert d.catalogue.item(0, ModelsDialog.CATALOGUE_STATE_COLUMN).text() == "Installed"


def test_offline_says_so_and_changes_nothing(qtbot, dialog, store, server, monkeypatch):
    monkeypatch.setenv("QIAO_CATALOGUE_URL", closed_port_url("/catalogue.json"))  # nothing listens: refused
    d = dialog()
    d.check_catalogue()
    idle(qtbot, d)
    assert "could not reach the model server" in d.message.text() and "nothing was changed" in d.message.text()
    assert d.catalogue.rowCount() == 0 and store.listing() == []


def test_a_wrong_sha256_is_refused_and_nothing_is_installed(qtbot, dialog, store, server, tmp_path, monkeypatch):
    serve_catalogue(server, tmp_path, monkeypatch, sha256="0" * 64)
    d = dialog()
    d.check_catalogue()
    idle(qtbot, d)
    d.catalogue.selectRow(0)
    d.download_selected()
    idle(qtbot, d)
    assert "The download failed; nothing was changed." in d.message.text() and "sha256" in d.message.text()
    assert d.installed.rowCount() == 0
    assert not any(p.startswith(FIXTURE_NAME) for p in store.listing())


def test_a_damaged_archive_is_refused_and_nothing_is_installed(qtbot, dialog, store, tmp_path):
    good = zip_bundle(tmp_path / "good.zip")
    bad = tmp_path / "bad.zip"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("int8/decoder.weights"):
                data = bytes([data[0] ^ 0xFF]) + data[1:]  # same size, one byte flipped
            dst.writestr(info, data)
    d = dialog()
    d.import_from(bad)
    idle(qtbot, d)
    assert "Could not import the model; nothing was changed." in d.message.text()
    assert "int8/decoder.weights" in d.message.text()
    assert d.installed.rowCount() == 0 and store.listing() == []
    d.import_from(good)
    idle(qtbot, d)
    qtbot.waitUntil(lambda: d.installed.rowCount() == 1, timeout=10_000)
    assert "Imported" in d.message.text()


@pytest.mark.parametrize("agree", [True, False])
def test_importing_an_installed_bundle_asks_before_replacing_it(qtbot, dialog, store, tmp_path, agree):
    good = zip_bundle(tmp_path / "good.zip")
    d = dialog()
    d.import_from(good)
    idle(qtbot, d)
    qtbot.waitUntil(lambda: d.installed.rowCount() == 1, timeout=10_000)
    installed = store.models / FIXTURE_NAME / "manifest.json"
    before = installed.stat().st_ino
    asked: list[object] = []
    d.confirm_replace = lambda what: asked.append(what) or agree  # the user's answer to "Replace it?"
    d.import_from(good)
    qtbot.waitUntil(lambda: not d._job and bool(asked), timeout=30_000)
    idle(qtbot, d)
    assert asked == [FIXTURE_NAME], "the question names the installed model, not the archive (good.zip)"
    if agree:
        assert "Imported" in d.message.text()
        assert installed.stat().st_ino != before  # a fresh copy moved in
    else:
        assert d.message.text() == "The model is installed already; nothing was changed."
        assert installed.stat().st_ino == before
    assert d.installed.rowCount() == 1 and [p for p in store.listing() if p.startswith(".")] == []


@pytest.fixture
def firefox(tmp_path) -> Path:
    """A copy of the tiny Firefox Translations en→zh folder (int8 with alphas, separate vocabularies, a shortlist), as
    a user downloads it: importing it converts it to a bundle first (engine.families.bergamot.converter)."""
    folder = make.cached_folder(make.TINY, "intgemm-alphas", shortlist=True)
    dest = tmp_path / "enzh"
    shutil.copytree(folder.model.parent, dest, ignore=shutil.ignore_patterns(".complete"))
    return dest


class ProgressSeen(QObject):
    """The progress bar's fill (value / maximum) each time its value changes, one list per job the dialog started
    (told on the UI thread in order with the job's reports: both come queued from the task thread)."""

    def __init__(self, d: ModelsDialog) -> None:
        super().__init__()
        self.bar = d.progress
        self.jobs: list[list[float]] = []
        d.engine.tasks.started.connect(self._started)
        self.bar.valueChanged.connect(self._value)

    @Slot(str)
    def _started(self, kind: str) -> None:
        if kind != "list":
            self.jobs.append([])

    def _value(self, value: int) -> None:
        low, high = self.bar.minimum(), self.bar.maximum()
        if low <= value and low < high:
            self.jobs[-1].append((value - low) / (high - low))


def test_a_firefox_translations_folder_is_converted_once_and_again_only_when_replaced(
    qtbot, dialog, store, firefox, monkeypatch
):
    """Import → From a folder… on a Firefox Translations model: converted on the dialog's task thread (the dialog goes
    on answering meanwhile), listed as a Bergamot model; importing it again asks once, and "Yes" converts it once."""
    conversions: list[int] = []  # the thread each conversion ran on
    converting, release = threading.Event(), threading.Event()
    real = convert.build_bundle

    def counted(source, out_dir, **options):
        conversions.append(threading.get_ident())
        converting.set()
        release.wait(30)  # held until the test, on the UI thread, has used the dialog during the conversion
        return real(source, out_dir, **options)

    monkeypatch.setattr(convert, "build_bundle", counted)
    d = dialog()
    seen = ProgressSeen(d)
    replaced: list[str] = []
    d.replaced.connect(replaced.append)
    try:
        d.import_from(firefox)  # what Import → From a folder… does with the folder chosen
        qtbot.waitUntil(converting.is_set, timeout=30_000)
        assert conversions[0] != threading.get_ident(), "the conversion runs off the UI thread"
        # While the conversion runs the dialog says what runs and offers Cancel, and its event loop goes on: a timer
        # fires (it could not, were the UI thread waiting for the conversion).
        assert d.progress.isVisible() and d.cancel_button.isEnabled() and not d.import_button.isEnabled()
        assert d.message.text() == f"Importing {firefox}…"
        ticks: list[int] = []
        QTimer.singleShot(0, lambda: ticks.append(threading.get_ident()))
        qtbot.waitUntil(lambda: bool(ticks), timeout=5000)
        assert ticks == [threading.get_ident()] and len(conversions) == 1 and not release.is_set()
    finally:
        release.set()
    idle(qtbot, d)
    qtbot.waitUntil(lambda: d.installed.rowCount() == 1, timeout=10_000)
    assert len(conversions) == 1
    [model] = d.models
    assert model.family == "bergamot" and model.problem is None
    assert d.installed.item(0, 3).text() == "Bergamot (Firefox)"
    assert d.installed.item(0, 0).text() == "English → Chinese"
    assert d.message.text() == f"Imported {model.name}."
    installed = store.models / model.name / "manifest.json"
    before = installed.stat().st_ino

    asked: list[object] = []
    d.confirm_replace = lambda what: asked.append(what) or True  # "Yes" to "Replace it?"
    d.import_from(firefox)
    qtbot.waitUntil(lambda: bool(asked), timeout=30_000)
    idle(qtbot, d)
    assert asked == [model.name], "asked once, naming the installed model"
    assert len(conversions) == 2, "the refusal converted nothing; the replacement converted once"
    assert d.message.text() == f"Imported {model.name}."
    assert installed.stat().st_ino != before, "a fresh conversion moved in"
    assert d.installed.rowCount() == 1 and d.models[0].family == "bergamot"
    assert [p.name for p in store.models.iterdir()] == [model.name], "nothing else was left behind"
    assert set(conversions) == {conversions[0]}, "both on the dialog's task thread"
    assert threading.get_ident() not in d.engine.tasks.threads_seen, "no job of the dialog ran on the UI thread"
    assert replaced == [str(model.path)], "a window with the old one loaded is told to load it again"

    assert len(seen.jobs) == 3, seen.jobs  # the import, the refused one (nothing to report), the replacement
    assert seen.jobs[1] == []
    for job in (seen.jobs[0], seen.jobs[2]):
        assert len(job) > 2 and job == sorted(job), "the bar rises and never goes back"
        assert job[-1] == 1.0


def test_cancel_during_a_firefox_conversion_leaves_nothing(qtbot, dialog, store, firefox, monkeypatch):
    """The dialog's Cancel while a Firefox Translations folder is being converted: the conversion stops, the dialog
    says nothing was changed, and no bundle, work folder or partial copy is left in the models folder."""
    converting, release = threading.Event(), threading.Event()
    real = convert.build_bundle

    def held(source, out_dir, **options):
        converting.set()
        release.wait(30)
        return real(source, out_dir, **options)

    monkeypatch.setattr(convert, "build_bundle", held)
    d = dialog()
    try:
        d.import_from(firefox)
        qtbot.waitUntil(converting.is_set, timeout=30_000)
        qtbot.mouseClick(d.cancel_button, Qt.MouseButton.LeftButton)
    finally:
        release.set()
    idle(qtbot, d)
    assert d.message.text() == "Cancelled; nothing was changed."
    assert d.installed.rowCount() == 0 and not d.progress.isVisible() and d.import_button.isEnabled()
    assert store.listing() == []


def test_a_cancel_that_comes_after_the_replacement_moved_in_reports_the_import(
    qtbot, dialog, store, firefox, monkeypatch
):
    """Cancel clicked as a replacing import ends, after its bundle has moved in (the old one is gone): the dialog
    said "Cancelled; nothing was changed." and did not tell the window, which kept the replaced model loaded. The
    import happened: it is reported as done, and the window is told to load the new bundle."""
    from engine.store import installed as engine_installed

    d = dialog()
    replaced: list[str] = []
    d.replaced.connect(replaced.append)
    d.import_from(firefox)
    idle(qtbot, d)
    qtbot.waitUntil(lambda: d.installed.rowCount() == 1, timeout=10_000)
    [model] = d.models
    manifest = store.models / model.name / "manifest.json"
    before = manifest.stat().st_ino
    real = engine_installed._place

    def placed_then_cancelled(bundle, target, replace):
        real(bundle, target, replace)
        d.engine.tasks.cancel()  # the user's click lands now: past the import's last check

    monkeypatch.setattr(engine_installed, "_place", placed_then_cancelled)
    d.confirm_replace = lambda what: True
    d.import_from(firefox)
    qtbot.waitUntil(lambda: d.message.text() not in (f"Importing {firefox}…", "Replacing the installed model…"))
    idle(qtbot, d)
    assert manifest.stat().st_ino != before, "the new bundle replaced the old one"
    assert d.message.text() == f"Imported {model.name}."
    assert replaced == [str(model.path)]
    assert d.installed.rowCount() == 1 and d.models[0].family == "bergamot"
