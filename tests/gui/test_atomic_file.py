"""Atomic replacement under SIGKILL: the old or the new complete file, never a torn one, and no orphan after start."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine import atomic_write
from engine.atomic_write import remove_stale_temps, state_temp_path, write_state_file
from gui.window.autosave import Autosave
from gui.window.last_translation import LastTranslation

ROOT = Path(__file__).resolve().parents[2]
KILLS = 30
posix_only = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="SIGKILL is POSIX")

# A child that rewrites the target as fast as it can: version k's content says k and is checkable on its own.
WRITER = r"""
import sys
from pathlib import Path
from engine.atomic_write import write_state_file
from gui.window.last_translation import LastTranslation
kind, target, size, k = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
store = LastTranslation(target) if kind == "translation" else None
print("ready", flush=True)
while True:
    k += 1
    body = (f"{k:010d}" * (size // 10 + 1))[:size]
    if store is not None:
        store.save("source %d" % k, body, {"precision": "int8"}, now=float(k))
    else:
        write_state_file(target, body.encode("ascii"))
"""


def _kill_at_random(kind: str, target: Path, size: int, rnd: random.Random, first: int, most: float) -> None:
    """Start a writer (its versions count up from `first`), let it write for a random moment, SIGKILL it."""
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, kind, str(target), str(size), str(first)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == b"ready"
        time.sleep(rnd.uniform(0.0, most))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        if child.stdout is not None:
            child.stdout.close()


def _version_of_autosave(data: bytes, size: int) -> int:
    """The version a complete file holds; fails on a torn (short, mixed or partly zero) file."""
    assert len(data) == size, f"torn file: {len(data)} bytes, expected {size}"
    k = int(data[:10])
    assert data == (f"{k:010d}" * (size // 10 + 1))[:size].encode("ascii"), "mixed content"
    return k


@posix_only
def test_sigkill_during_20_mb_autosaves_leaves_a_whole_file_and_start_removes_the_orphans(tmp_path, monkeypatch):
    target = tmp_path / "state" / "source.txt"
    size = 20_000_000
    write_state_file(target, (f"{0:010d}" * (size // 10 + 1))[:size].encode("ascii"))
    rnd = random.Random(11)
    seen_versions, orphans_seen = set(), 0
    for run in range(KILLS):
        _kill_at_random("autosave", target, size, rnd, first=1000 * (run + 1), most=0.3)
        seen_versions.add(_version_of_autosave(target.read_bytes(), size))
        orphans = list(target.parent.glob(".source.txt.*.tmp"))
        orphans_seen += bool(orphans)
        monkeypatch.setattr(atomic_write, "_PROCESS_START", time.time())  # as the next start of the app sees it
        before = target.read_bytes()
        store = Autosave(target, str)
        assert sorted(store.cleaned) == sorted(orphans)
        assert [p.name for p in target.parent.iterdir() if p.name != "source.txt"] == [], "a temp file was left"
        assert target.read_bytes() == before, "start must not touch the source"
    assert len(seen_versions) > 1, "no writer ever replaced the file before its kill: the test proves nothing"
    assert orphans_seen >= 1, f"no kill landed mid-write in {KILLS} tries: the test proves nothing"


@posix_only
def test_sigkill_during_translation_saves_leaves_the_old_or_the_new_record(tmp_path):
    target = tmp_path / "translation.json"
    rnd = random.Random(7)
    size = 500_000
    LastTranslation(target).save("source 0", "0" * size, {"precision": "int8"}, now=0.0)
    versions = []
    for run in range(KILLS):
        _kill_at_random("translation", target, size, rnd, first=1000 * (run + 1), most=0.15)
        record = json.loads(target.read_text(encoding="utf-8"))  # a torn JSON file would not parse
        saved = LastTranslation(target).load()
        assert saved is not None
        k = int(saved.finished_at)
        assert saved.matches_source(f"source {k}"), "the target must belong to the source saved with it"
        assert saved.target == (f"{k:010d}" * (size // 10 + 1))[:size] == record["target"]
        versions.append(k)
    assert len(set(versions)) > 1, "the writer never replaced the file: the test proves nothing"


def test_a_live_writers_temp_file_is_not_deleted_but_an_old_one_and_legacy_names_are(tmp_path):
    target = tmp_path / "source.txt"
    target.write_text("kept", encoding="utf-8")
    old = tmp_path / ".source.txt.999999.tmp"
    legacy = tmp_path / ".source-abc123.tmp"
    fresh = tmp_path / ".source.txt.888888.tmp"  # another window writing right now
    unrelated = tmp_path / ".other.txt.1.tmp"
    for path in (old, legacy, fresh, unrelated):
        path.write_text("partial", encoding="utf-8")
    stale = atomic_write._PROCESS_START - 60
    for path in (old, legacy, unrelated):
        os.utime(path, (stale, stale))
    removed = remove_stale_temps(target, ".source-*.tmp")
    assert sorted(removed) == sorted([old, legacy])
    assert fresh.exists() and unrelated.exists() and target.read_text(encoding="utf-8") == "kept"


def test_write_state_file_names_its_temp_file_per_target_and_process_and_removes_it_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "source.txt"
    assert state_temp_path(target) == tmp_path / f".source.txt.{os.getpid()}.tmp"
    write_state_file(target, b"old")

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied", str(dst))

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(PermissionError):
        write_state_file(target, b"new")
    assert target.read_bytes() == b"old" and sorted(p.name for p in tmp_path.iterdir()) == ["source.txt"]
