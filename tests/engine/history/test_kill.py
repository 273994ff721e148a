"""No committed entry is lost when the process is killed (kill -9) in the middle of writing."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.history.store import HistoryStore

ROOT = Path(__file__).resolve().parents[3]

CHILD = """
import sys
from engine.history.records import HistoryEntry, SentenceRecord
from engine.history.store import HistoryStore

store = HistoryStore(sys.argv[1], max_entries=1_000_000)
i = 0
while True:
    i += 1
    text = f"Sentence {i} of the kill test. " * 5
    new_id = store.add(HistoryEntry(text, f"第{i}句。" * 5, "en-zh", "m", "int8",
                                    sentences=(SentenceRecord(text, f"第{i}句。"),)))
    print(new_id, flush=True)  # only after add() returned
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_every_added_entry_survives_kill_9(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite3"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT
    )
    assert child.stdout is not None
    reported: list[int] = []
    for line in child.stdout:  # kill it in full flight, after 300 adds it reported
        reported.append(int(line))
        if len(reported) == 300:
            child.send_signal(signal.SIGKILL)
            break
    child.wait()
    reported.extend(int(line) for line in child.stdout.read().split())  # printed before the kill landed
    assert child.returncode == -signal.SIGKILL

    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    db.close()
    with HistoryStore(path) as store:
        assert store.search("kill test", limit=1)  # the index is whole too
        kept = {e.id for e in store.recent(limit=1_000_000)}
    assert set(reported) <= kept
    assert len(reported) >= 300
