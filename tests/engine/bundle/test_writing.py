"""engine.bundle.writing: where a build may write (check_out_dir) and the move into place (install_staged), on its own
and through `qiao model build` of a tiny Firefox Translations folder."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

import pytest

from engine.bundle import writing
from engine.bundle.writing import check_out_dir, install_staged, staging_dir
from engine.errors import BuildError


def _staged(tmp_path: Path, text: str) -> Path:
    staging = tmp_path / f"staging-{text}"
    (staging / "int8").mkdir(parents=True)
    (staging / "manifest.json").write_text(text)
    (staging / "int8" / "encoder.onnx").write_text(text)
    return staging


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_force_replaces_a_bundle_only_and_never_the_models_own_folder(tmp_path: Path) -> None:
    """--force used to rmtree whatever --out named: a folder of the user's files, or the model folder being read."""
    files = tmp_path / "mine"
    files.mkdir()
    (files / "notes.txt").write_text("keep me")
    with pytest.raises(BuildError, match="not empty"):
        check_out_dir(files, overwrite=False)
    with pytest.raises(BuildError, match="not a model bundle"):
        check_out_dir(files, overwrite=True)
    with pytest.raises(BuildError, match="holds the model being converted"):
        check_out_dir(tmp_path, overwrite=True, source=files)  # --out is the model folder's parent
    with pytest.raises(BuildError, match="holds the model being converted"):
        check_out_dir(files, overwrite=True, source=files)
    with pytest.raises(BuildError, match="not a folder"):
        check_out_dir(files / "notes.txt", overwrite=True)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "manifest.json").write_text("{}")
    check_out_dir(bundle, overwrite=True, source="Helsinki-NLP/opus-mt-en-zh")  # a bundle; a model id is no path
    check_out_dir(tmp_path / "new", overwrite=False, source=files)
    (tmp_path / "empty").mkdir()
    check_out_dir(tmp_path / "empty", overwrite=False)


def test_install_replaces_a_bundle_by_renames_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    out = tmp_path / "models" / "bundle"
    install_staged(_staged(tmp_path, "one"), out)
    assert (out / "int8" / "encoder.onnx").read_text() == "one"
    install_staged(_staged(tmp_path, "two"), out)
    assert (out / "manifest.json").read_text() == "two" and (out / "int8" / "encoder.onnx").read_text() == "two"
    assert _hidden(out.parent) == [] and not (tmp_path / "staging-two").exists()
    assert oct(out.stat().st_mode & 0o777) == "0o755" and oct((out / "manifest.json").stat().st_mode & 0o777) == "0o644"


@pytest.mark.parametrize("fails", ["copy", "rename"])
def test_a_failed_move_keeps_the_bundle_that_was_there(tmp_path: Path, monkeypatch, fails: str) -> None:
    """The old bundle was deleted before the new one was moved in: a full disk during the (cross-disk) copy lost
    both. Now the new one is copied beside it first and swapped in by renames."""
    out = tmp_path / "bundle"
    install_staged(_staged(tmp_path, "old"), out)

    def full_disk(source: str, target: str) -> None:
        shutil.copytree(source, target)
        (Path(target) / "manifest.json").write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")

    real_rename = writing.os.rename

    def refused(source, target) -> None:
        if Path(target) == out and ".new-" in Path(source).name:  # the new bundle cannot go in (the old one can)
            raise OSError(errno.EACCES, "Permission denied")
        real_rename(source, target)

    if fails == "copy":
        monkeypatch.setattr(writing.shutil, "move", full_disk)
    else:
        monkeypatch.setattr(writing.os, "rename", refused)
    with pytest.raises(OSError):
        install_staged(_staged(tmp_path, "new"), out)
    assert (out / "manifest.json").read_text() == "old" and (out / "int8" / "encoder.onnx").read_text() == "old"
    assert _hidden(tmp_path) == []


def test_qiao_model_build_force_refuses_a_folder_of_other_files(tmp_path: Path, capsys) -> None:
    pytest.importorskip("onnx")
    pytest.importorskip("sentencepiece")
    from engine.cli.main import main
    from tests.fixtures.bergamot import make

    folder = tmp_path / "models" / "enzh"
    shutil.copytree(make.cached_folder(make.TINY, "npz").model.parent, folder)
    (tmp_path / "models" / "notes.txt").write_text("keep me")
    before = sorted(p.name for p in folder.iterdir())
    for out in (folder, folder.parent):
        assert main(["model", "build", "--from", str(folder), "--out", str(out), "--force", "--quiet"]) == 1
        assert "holds the model being converted" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == before
    assert (tmp_path / "models" / "notes.txt").read_text() == "keep me"
    out = tmp_path / "bundle"
    assert main(["model", "build", "--from", str(folder), "--out", str(out), "--quiet"]) == 0
    assert main(["model", "build", "--from", str(folder), "--out", str(out), "--force", "--quiet"]) == 0
    assert (out / "manifest.json").is_file() and _hidden(tmp_path) == []


def test_a_build_stages_beside_its_bundle_and_removes_what_a_killed_build_left(tmp_path: Path) -> None:
    """The staging folder was made in the temporary folder: a build killed outright left 215 MB (base-memory's
    shape) there for good, and a read-only --out failed only after the whole build."""
    import os

    out = tmp_path / "models" / "bundle"
    killed = tmp_path / "models" / f".bundle.build-{2**22 + 1}-abc"  # beyond any pid: that build is gone
    running = tmp_path / "models" / f".bundle.build-{os.getpid()}-def"
    other = tmp_path / "models" / ".other.build-1-x"
    for folder in (killed, running, other):
        (folder / "int8").mkdir(parents=True)
    staging = staging_dir(out)
    assert staging.parent == out.parent and staging.name.startswith(f".bundle.build-{os.getpid()}-")
    assert not killed.exists() and running.exists() and other.exists()
    (staging / "manifest.json").write_text("{}")
    install_staged(staging, out)
    assert (out / "manifest.json").is_file() and not staging.exists()
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if not os.access(locked, os.W_OK):  # root writes anywhere
            with pytest.raises(PermissionError):
                staging_dir(locked / "bundle")
    finally:
        locked.chmod(0o700)
