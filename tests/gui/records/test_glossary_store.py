"""The glossary store: default place, atomic saves, and a damaged or unreadable file that is reported and kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine import atomic_write
from engine.glossary import Glossary, GlossaryEntry
from gui.records.glossary_store import FILE_NAME, GlossaryStore

G = Glossary((GlossaryEntry("GPU", "显卡", True, False), GlossaryEntry("Qiao")), protect=False)


def test_default_path_is_the_config_folder(private_dirs):
    store = GlossaryStore()
    assert store.path == private_dirs / "config" / FILE_NAME
    assert store.glossary() == Glossary() and store.problem is None


def test_save_then_load_again(tmp_path, qtbot):
    path = tmp_path / "g.tsv"
    store = GlossaryStore(path)
    with qtbot.waitSignal(store.changed, timeout=1000):
        store.save(G)
    assert store.glossary() == G
    assert GlossaryStore(path).glossary() == G


def test_a_failed_save_keeps_the_old_file_and_the_old_glossary(tmp_path, monkeypatch, qtbot):
    path = tmp_path / "g.tsv"
    store = GlossaryStore(path)
    store.save(G)
    before = path.read_bytes()

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_write.os, "fsync", full_disk)
    with qtbot.assertNotEmitted(store.changed), pytest.raises(OSError):
        store.save(Glossary((GlossaryEntry("x", "y"),)))
    assert path.read_bytes() == before
    assert store.glossary() == G
    assert sorted(os.listdir(tmp_path)) == ["g.tsv"]


def test_a_damaged_file_is_kept_aside_and_reported(tmp_path):
    path = tmp_path / "g.tsv"
    damaged = "source\ttarget\nGPU\t显卡\nbad\tline\tmaybe\n"
    path.write_text(damaged, encoding="utf-8")
    store = GlossaryStore(path)
    assert store.glossary() == Glossary()
    assert store.kept_aside is not None and store.kept_aside.read_text(encoding="utf-8") == damaged
    assert not path.exists()
    assert "line 3" in store.problem and str(store.kept_aside) in store.problem
    store.save(G)  # the user can go on; the damaged file stays where it was put
    assert store.kept_aside.read_text(encoding="utf-8") == damaged


def test_binary_garbage_is_kept_aside_too(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_bytes(b"\xff\xfe\x00garbage\x00")
    store = GlossaryStore(path)
    assert store.kept_aside is not None and store.kept_aside.read_bytes() == b"\xff\xfe\x00garbage\x00"
    assert "not UTF-8" in store.problem


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_never_overwritten(tmp_path):
    path = tmp_path / "g.tsv"
    path.write_text("a\tb\n", encoding="utf-8")
    path.chmod(0)
    try:
        store = GlossaryStore(path)
        assert store.problem and store.kept_aside is None
        with pytest.raises(PermissionError):
            store.save(G)
    finally:
        path.chmod(0o600)
    assert path.read_text(encoding="utf-8") == "a\tb\n"


def test_an_unreadable_file_is_never_overwritten_even_as_root(tmp_path, monkeypatch):
    """The same through a read that fails (root can read a mode-0 file, so the failure is simulated)."""
    path = tmp_path / "g.tsv"
    path.write_text("a\tb\n", encoding="utf-8")
    from engine import glossary_io

    real = glossary_io._no_wait  # the glossary is opened through it (never blocking on a FIFO)

    def refuse(name, flags):
        if Path(name) == path:
            raise PermissionError(13, "Permission denied")
        return real(name, flags)

    monkeypatch.setattr(glossary_io, "_no_wait", refuse)
    store = GlossaryStore(path)
    assert "could not be read" in store.problem
    with pytest.raises(PermissionError):
        store.save(G)
    monkeypatch.undo()
    assert path.read_text(encoding="utf-8") == "a\tb\n"


def test_stale_temp_files_of_a_killed_save_are_removed(tmp_path, monkeypatch):
    path = tmp_path / "g.tsv"
    stale = tmp_path / f".{path.name}.99999.tmp"
    stale.write_text("half", encoding="utf-8")
    os.utime(stale, (1, 1))
    GlossaryStore(path)
    assert not stale.exists()
