"""engine.store.download against a local server on 127.0.0.1: good, truncated, wrong hash, dropped and resumed, Range
ignored, HTTP errors, cancel, offline. On every failure the models folder holds no new bundle."""

from __future__ import annotations

import threading

import pytest

from engine.store.catalogue import CatalogueEntry
from engine.store.download import DownloadCancelled, DownloadError, download_bundle, part_file
from engine.store.installed import ModelStoreError, installed_models, verify_installed
from tests.engine import model_helpers
from tests.engine.model_helpers import FIXTURE_NAME, catalogue_entry, closed_port_url, zip_bundle

store = model_helpers.store
server = model_helpers.server


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    return zip_bundle(tmp_path_factory.mktemp("archive") / "bundle.zip")


def _entry(archive, url: str, **changes: object) -> CatalogueEntry:
    raw = catalogue_entry(archive, url, **changes)
    return CatalogueEntry(**{**raw, "precisions": tuple(raw["precisions"])})


def _bundles(store) -> list[str]:
    return [p.name for p in store.models.iterdir() if not p.name.startswith(".")] if store.models.exists() else []


def test_a_good_download_installs_a_verified_bundle(store, server, archive):
    url = server.add("/b.zip", archive.read_bytes())
    entry = _entry(archive, url)
    seen: list[tuple[int, int]] = []
    model = download_bundle(entry, progress=lambda d, t: seen.append((d, t)))
    assert model.path == store.models / FIXTURE_NAME and model.pair_key == "en-zh"
    assert verify_installed(model) == []
    assert seen[-1] == (entry.size, entry.size)
    assert not part_file(entry).exists(), "the archive is deleted once installed"
    assert server.requests == [("/b.zip", None)]


def test_a_connection_dropped_mid_body_is_resumed_with_range(store, server, archive):
    body = archive.read_bytes()
    url = server.add("/b.zip", body, mode="drop-once", cut=len(body) // 3)
    model = download_bundle(_entry(archive, url))
    assert verify_installed(model) == []
    assert server.requests == [("/b.zip", None), ("/b.zip", f"bytes={len(body) // 3}-")]


def test_a_kept_part_resumes_in_the_next_call(store, server, archive):
    body = archive.read_bytes()
    cut = len(body) // 2
    url = server.add("/b.zip", body, mode="truncate", cut=cut)
    entry = _entry(archive, url)
    with pytest.raises(DownloadError, match="connection dropped") as exc:
        download_bundle(entry)
    assert exc.value.resumable and "run the download again to resume" in str(exc.value)
    assert part_file(entry).stat().st_size == cut and _bundles(store) == []
    server.routes["/b.zip"].mode = "ok"
    server.requests.clear()
    model = download_bundle(entry)
    assert verify_installed(model) == [] and server.requests == [("/b.zip", f"bytes={cut}-")]


def test_a_server_that_ignores_range_restarts_from_the_start(store, server, archive):
    body = archive.read_bytes()
    url = server.add("/b.zip", body, mode="ignore-range")
    entry = _entry(archive, url)
    part = part_file(entry)
    part.parent.mkdir(parents=True)
    part.write_bytes(b"\0" * 1000)  # not even the right bytes: a restart must not keep them
    model = download_bundle(entry)
    assert verify_installed(model) == []
    assert server.requests == [("/b.zip", "bytes=1000-")]


def test_a_206_for_another_range_is_never_appended(store, server, archive):
    url = server.add("/b.zip", archive.read_bytes(), mode="wrong-range")
    entry = _entry(archive, url)
    part = part_file(entry)
    part.parent.mkdir(parents=True)
    part.write_bytes(archive.read_bytes()[:1000])
    model = download_bundle(entry)
    assert verify_installed(model) == []
    assert server.requests == [("/b.zip", "bytes=1000-"), ("/b.zip", None)]


def test_a_server_file_shorter_than_the_catalogue_says_is_refused(store, server, archive):
    body = archive.read_bytes()
    url = server.add("/b.zip", body, mode="short", cut=len(body) - 100)
    entry = _entry(archive, url)
    with pytest.raises(DownloadError, match=r"the catalogue says .*not the catalogue's bundle; nothing was changed"):
        download_bundle(entry)
    assert not part_file(entry).exists() and _bundles(store) == []


def test_a_wrong_sha256_deletes_the_download_and_installs_nothing(store, server, archive):
    url = server.add("/b.zip", archive.read_bytes())
    entry = _entry(archive, url, sha256="0" * 64)
    with pytest.raises(DownloadError, match=r"sha256 .* differs from the catalogue's") as exc:
        download_bundle(entry)
    assert "the file was deleted, nothing was changed" in str(exc.value)
    assert not part_file(entry).exists() and _bundles(store) == []


@pytest.mark.parametrize("status", [404, 500])
def test_http_errors_are_reported_and_change_nothing(store, server, archive, status):
    url = server.add("/b.zip", b"", mode="status", status=status)
    with pytest.raises(DownloadError, match=f"the server answered {status}") as exc:
        download_bundle(_entry(archive, url))
    assert "nothing was changed" in str(exc.value) and not exc.value.resumable and not exc.value.offline
    assert not store.models.exists()


def test_offline_says_so_and_changes_nothing(store, server, archive):
    with pytest.raises(DownloadError) as exc:
        download_bundle(_entry(archive, closed_port_url()))
    assert str(exc.value).startswith("you are offline or the server cannot be reached: nothing was changed")
    assert exc.value.offline and not exc.value.resumable
    assert not store.data.exists(), "not even the models folder is created"


def test_cancel_keeps_the_part_installs_nothing_and_a_later_call_resumes(store, server, archive):
    body = archive.read_bytes()
    url = server.add("/b.zip", body, mode="slow", delay=0.001)
    entry = _entry(archive, url)
    cancel = threading.Event()

    def progress(done, total):
        if done >= 64 * 1024:
            cancel.set()

    with pytest.raises(DownloadCancelled, match="cancelled") as exc:
        download_bundle(entry, progress=progress, cancel=cancel)
    kept = part_file(entry).stat().st_size
    assert exc.value.resumable and 0 < kept < len(body) and _bundles(store) == []
    server.routes["/b.zip"].mode = "ok"
    server.requests.clear()
    assert verify_installed(download_bundle(entry)) == []
    assert server.requests == [("/b.zip", f"bytes={kept}-")]


def test_a_complete_checked_part_is_installed_without_downloading(store, server, archive):
    url = server.add("/b.zip", archive.read_bytes())
    entry = _entry(archive, url)
    part = part_file(entry)
    part.parent.mkdir(parents=True)
    part.write_bytes(archive.read_bytes())
    assert verify_installed(download_bundle(entry)) == [] and server.requests == []


def test_already_installed_is_refused_before_any_request_and_force_replaces(store, server, archive):
    url = server.add("/b.zip", archive.read_bytes())
    entry = _entry(archive, url)
    download_bundle(entry)
    server.requests.clear()
    with pytest.raises(ModelStoreError, match="already installed"):
        download_bundle(entry)
    assert server.requests == []
    model = download_bundle(entry, replace=True)
    assert verify_installed(model) == [] and [m.name for m in installed_models()] == [FIXTURE_NAME]


def test_a_bundle_of_another_pair_than_the_catalogue_says_is_refused(store, server, archive):
    url = server.add("/b.zip", archive.read_bytes())
    entry = _entry(archive, url, source="zh", target="en")
    with pytest.raises(ModelStoreError, match="translates en-zh, but zh-en was expected"):
        download_bundle(entry)
    assert not part_file(entry).exists() and _bundles(store) == []


def test_a_refused_url_is_never_fetched(store, archive):
    entry = _entry(archive, "http://example.org/b.zip")
    with pytest.raises(DownloadError, match="plain http"):
        download_bundle(entry)
    assert not store.data.exists()


def test_a_local_file_url_works(store, archive):
    model = download_bundle(_entry(archive, archive.as_uri()))
    assert verify_installed(model) == []
