"""The Models dialog on the real engine store (no fakes): a private models folder, the committed fixture served by a
local 127.0.0.1 server, and the failures a user meets — offline, a damaged archive, a wrong sha256."""

from __future__ import annotations

import socket
import zipfile

import pytest

from gui.models.models_dialog import ModelsDialog
from tests.engine import model_helpers
from tests.engine.model_helpers import FIXTURE_NAME, catalogue_entry, closed_port_url, write_catalogue, zip_bundle

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
    assert d.catalogue.item(0, 6).text() == "Installed"


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
