"""engine.store.installed importing a Firefox Translations model (folder or archive), which is converted first: an
installed bundle of the name it will get is known before the conversion, a cancel stops the conversion and leaves
nothing, and the progress bar rises through the conversion's steps and the hashing."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
import threading
import zipfile
from pathlib import Path

import pytest

from engine.families.bergamot.converter import convert
from engine.store.installed import (
    AlreadyInstalled,
    ModelStoreCancelled,
    ModelStoreError,
    bundle_name,
    import_bundle,
    remove_bundle,
    verify_installed,
)
from tests.engine import model_helpers
from tests.fixtures.bergamot import make

store = model_helpers.store


@pytest.fixture
def firefox(tmp_path) -> Path:
    """A copy of the tiny Firefox-format en→zh folder (int8 with alphas, separate vocabularies, a shortlist)."""
    folder = make.cached_folder(make.TINY, "intgemm-alphas", shortlist=True)
    dest = tmp_path / "enzh"
    shutil.copytree(folder.model.parent, dest, ignore=shutil.ignore_patterns(".complete"))
    return dest


@pytest.fixture
def conversions(monkeypatch) -> list[Path]:
    """The folders the Firefox converter was asked to convert, in order (the real converter runs)."""
    seen: list[Path] = []
    real = convert.build_bundle

    def counted(source, out_dir, **options):
        seen.append(Path(source))
        return real(source, out_dir, **options)

    monkeypatch.setattr(convert, "build_bundle", counted)
    return seen


class Phases:
    """Progress reports, and where the conversion began and where its bundle was written among them."""

    def __init__(self, monkeypatch) -> None:
        self.reports: list[tuple[int, int]] = []
        self.started: int | None = None  # reports received when the converter was called
        self.written: int | None = None  # ... when it had written its bundle
        build, install = convert.build_bundle, convert.install_staged

        def building(source, out_dir, **options):
            self.started = len(self.reports)
            return build(source, out_dir, **options)

        def installing(staging, out_dir):
            install(staging, out_dir)
            self.written = len(self.reports)

        monkeypatch.setattr(convert, "build_bundle", building)
        monkeypatch.setattr(convert, "install_staged", installing)

    def __call__(self, done: int, total: int) -> None:
        self.reports.append((done, total))


@pytest.fixture
def phases(monkeypatch) -> Phases:
    return Phases(monkeypatch)


@pytest.fixture
def scratch(tmp_path, monkeypatch) -> Path:
    """The temporary folder the converter stages its bundle in (tempfile's), this test's own."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _zip(folder: Path, path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(folder.iterdir()):
            zf.write(file, f"{folder.name}/{file.name}")
    return path


@pytest.mark.parametrize("packed", [False, True], ids=["folder", "zip"])
def test_importing_an_installed_firefox_model_again_converts_it_once_in_all(
    store, tmp_path, firefox, conversions, packed
):
    source = _zip(firefox, tmp_path / "enzh.zip") if packed else firefox
    first = import_bundle(source)
    assert first.family == "bergamot" and first.name == bundle_name(first.model_id)
    assert len(conversions) == 1
    conversions.clear()

    with pytest.raises(AlreadyInstalled) as refused:  # the dialog asks whether to replace it...
        import_bundle(source)
    assert refused.value.target == first.path
    assert conversions == [], "refused before converting"
    assert [p.name for p in store.models.iterdir()] == [first.name], "nothing was left by the refusal"

    again = import_bundle(source, replace=True)  # ...and "Yes" converts it, once
    assert len(conversions) == 1
    assert again.path == first.path and verify_installed(again) == []
    assert [p.name for p in store.models.iterdir()] == [first.name]


@pytest.mark.parametrize("packed", [False, True], ids=["folder", "zip"])
@pytest.mark.parametrize("installed", [False, True], ids=["new", "replacing"])
def test_a_cancel_during_the_conversion_stops_it_and_leaves_nothing(
    store, tmp_path, firefox, scratch, phases, packed, installed
):
    source = _zip(firefox, tmp_path / "enzh.zip") if packed else firefox
    before = None
    if installed:
        import_bundle(source)
        before = store.listing()
        phases.started = phases.written = None
    cancel = threading.Event()

    def progress(done: int, total: int) -> None:
        phases(done, total)
        if phases.started is not None and len(phases.reports) > phases.started:  # converting: the user cancels
            cancel.set()

    with pytest.raises(ModelStoreCancelled):
        import_bundle(source, replace=installed, progress=progress, cancel=cancel)
    assert cancel.is_set()
    assert phases.written is None, "the conversion stopped at the cancel, before its bundle was written"
    assert list(scratch.iterdir()) == [], "the converter's staging folder is gone"
    if installed:
        assert store.listing() == before, "the installed bundle is untouched"
    else:
        assert [p.name for p in store.models.iterdir()] == [], "no work folder or partial bundle is left"


@pytest.mark.parametrize("packed", [False, True], ids=["folder", "zip"])
def test_progress_rises_through_the_conversion_and_the_hashing(store, tmp_path, firefox, phases, packed):
    source = _zip(firefox, tmp_path / "enzh.zip") if packed else firefox
    model = import_bundle(source, progress=phases)
    assert verify_installed(model) == []
    assert phases.started is not None and phases.written is not None

    (total,) = {t for _, t in phases.reports}  # one bar, whose end does not move
    done = [d for d, _ in phases.reports]
    assert done == sorted(done), "the bar never goes back"
    assert done[-1] == total
    unpacking = done[: phases.started]
    converting = sorted(set(done[phases.started : phases.written]) - set(unpacking))
    assert len(converting) >= len(convert.check_sentences("en")), "the conversion's steps move the bar"
    assert 0 < converting[-1] < total, "the conversion ends before the bar does"
    hashing = sorted(set(done[phases.written :]) - set(converting))
    assert hashing and hashing[-1] == total, "the hashing moves it to the end"
    assert bool(unpacking) == packed
    if packed:
        assert unpacking[-1] < converting[len(converting) // 2], "unpacking is a small part of a conversion's bar"


@pytest.mark.parametrize("installed", [False, True], ids=["new", "replacing"])
def test_a_disk_that_fills_up_while_converting_says_so_and_changes_nothing(
    store, tmp_path, firefox, monkeypatch, installed
):
    """The disk fills up as the converter writes the bundle (a small tmpfs in the QA run: `qiao model import` said
    "import failed, nothing was changed: No space left on device", with no folder and nothing to do)."""
    before = None
    if installed:
        import_bundle(firefox)
        before = store.listing()
    written = convert.write_manifest

    def disk_full(bundle: Path, manifest: dict) -> None:
        written(bundle, manifest)
        with open(bundle / "manifest.json", "r+b") as fh:
            fh.truncate(10)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as a short write raises it: no file named

    monkeypatch.setattr(convert, "write_manifest", disk_full)
    with pytest.raises(ModelStoreError) as failed:
        import_bundle(firefox, replace=installed)
    message = str(failed.value)
    assert f"not enough space in {store.models}" in message and firefox.name in message
    assert "Free some space" in message and "nothing was changed" in message
    if installed:
        assert store.listing() == before, "the installed bundle is untouched"
    else:
        assert [p.name for p in store.models.iterdir()] == [], "no work folder or partial bundle is left"


def test_a_read_only_models_folder_is_said_with_what_to_do_on_import_and_removal(store, tmp_path, firefox, monkeypatch):
    """A models folder on a read-only file system (a bind mount in the QA run): the import named its own work folder
    ("qiao: …/.import-…: Read-only file system"), the removal asked whether the model was open in Qiao."""
    model = import_bundle(firefox)
    root = store.models.resolve()
    real_mkdtemp, real_rename = tempfile.mkdtemp, os.rename

    def read_only(path: object) -> None:
        if Path(str(path)).resolve().is_relative_to(root):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    def mkdtemp(*args, **kwargs):
        read_only(kwargs.get("dir") or tempfile.gettempdir())
        return real_mkdtemp(*args, **kwargs)

    def rename(src, dst, *args, **kwargs):
        read_only(src)
        return real_rename(src, dst, *args, **kwargs)

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr(os, "rename", rename)
    before = store.listing()
    with pytest.raises(ModelStoreError) as refused:
        import_bundle(firefox, replace=True)
    message = str(refused.value)
    assert f"cannot write to the models folder {store.models}" in message and ".import-" not in message
    assert "QIAO_DATA_DIR" in message and "nothing was changed" in message
    with pytest.raises(ModelStoreError) as not_removed:
        remove_bundle(model)
    assert "cannot be written" in str(not_removed.value) and "open in Qiao" not in str(not_removed.value)
    assert store.listing() == before and verify_installed(model) == []
