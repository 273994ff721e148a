"""The model-management worker: its jobs run on its own thread, report progress sparingly, word offline failures."""

from __future__ import annotations

import threading
import urllib.error
from pathlib import Path

from PySide6.QtCore import QObject, QThread, Slot

from gui.models.model_tasks import OFFLINE, ModelTaskThread, is_offline
from tests.gui.fakes import EN_ZH, FakeEntry, FakeModel, FakeOffline, FakeStore

MODEL = FakeModel(Path("/models/en-zh"), "opus-mt-en-zh", EN_ZH)


class Reports(QObject):
    """Lives on the test's thread, so the reports arrive queued, as the dialog gets them."""

    def __init__(self, tasks) -> None:
        super().__init__()
        self.events: list[tuple] = []
        tasks.progress.connect(self.progress)
        tasks.finished.connect(self.finished)
        tasks.cancelled.connect(self.cancelled)
        tasks.failed.connect(self.failed)
        tasks.listed.connect(self.listed)

    @Slot(str, int, int)
    def progress(self, *a) -> None:
        self.events.append(("progress", *a))

    @Slot(str, object)
    def finished(self, *a) -> None:
        self.events.append(("finished", *a))

    @Slot(str)
    def cancelled(self, *a) -> None:
        self.events.append(("cancelled", *a))

    @Slot(str, str)
    def failed(self, *a) -> None:
        self.events.append(("failed", *a))

    @Slot(object)
    def listed(self, *a) -> None:
        self.events.append(("listed", *a))

    def of(self, name: str) -> list[tuple]:
        return [e[1:] for e in self.events if e[0] == name]


def run(qtbot, store: FakeStore, kind: str, *args):
    mt = ModelTaskThread(store)
    reports = Reports(mt.tasks)
    assert mt.tasks.start(kind, *args)
    qtbot.waitUntil(lambda: bool(reports.of("finished") or reports.of("failed")), timeout=5000)
    return mt, reports


def test_jobs_run_on_the_task_thread_never_the_ui_thread(qtbot):
    store = FakeStore([MODEL])
    mt, reports = run(qtbot, store, "list")
    try:
        qtbot.waitUntil(lambda: bool(reports.of("listed")), timeout=5000)
        assert reports.of("listed") == [([MODEL],)]
        assert store.threads and threading.get_ident() not in store.threads
        assert mt.tasks.thread() is mt.thread and mt.thread is not QThread.currentThread()
    finally:
        assert mt.shutdown()


def test_a_change_is_followed_by_the_fresh_list(qtbot):
    store = FakeStore([MODEL])
    mt, reports = run(qtbot, store, "remove", MODEL)
    try:
        qtbot.waitUntil(lambda: bool(reports.of("listed")), timeout=5000)
        assert reports.of("listed")[-1] == ([],)
    finally:
        mt.shutdown()


def test_only_one_job_at_a_time(qtbot):
    gate = threading.Event()
    store = FakeStore([], [FakeEntry("e", "e", "zh", "en")], gate=gate)
    mt = ModelTaskThread(store)
    try:
        assert mt.tasks.start("download", store.entries[0])
        assert not mt.tasks.start("list"), "refused while the download runs"
        gate.set()
        qtbot.waitUntil(lambda: not mt.tasks.busy, timeout=5000)
        assert mt.tasks.start("list")
    finally:
        mt.shutdown()


def test_download_progress_is_reported_and_ends_at_the_total(qtbot):
    entry = FakeEntry("e", "e", "zh", "en", size=1000)
    mt, reports = run(qtbot, FakeStore([], [entry], chunks=50), "download", entry)
    try:
        progress = reports.of("progress")
        assert progress and progress[-1] == ("download", 1000, 1000)
        assert len(progress) < 50, "throttled, not one signal per chunk"
    finally:
        mt.shutdown()


def test_cancel_reports_cancelled_not_failed(qtbot):
    gate = threading.Event()
    entry = FakeEntry("e", "e", "zh", "en")
    store = FakeStore([], [entry], gate=gate)
    mt = ModelTaskThread(store)
    reports = Reports(mt.tasks)
    try:
        mt.tasks.start("download", entry)
        qtbot.waitUntil(lambda: "download_bundle" in store.calls, timeout=5000)
        mt.tasks.cancel()
        qtbot.waitUntil(lambda: bool(reports.of("cancelled")), timeout=5000)
        assert reports.of("failed") == [] and store.models == []
    finally:
        mt.shutdown()


def test_an_unreachable_server_is_reported_as_offline(qtbot):
    mt, reports = run(qtbot, FakeStore(offline=True), "catalogue")
    try:
        assert reports.of("failed") == [("catalogue", OFFLINE)]
    finally:
        mt.shutdown()


def test_offline_is_recognised_through_the_cause_chain():
    try:
        try:
            raise urllib.error.URLError(ConnectionRefusedError(111, "refused"))
        except urllib.error.URLError as inner:
            raise RuntimeError("could not download the catalogue") from inner
    except RuntimeError as exc:
        assert is_offline(exc)
    assert is_offline(FakeOffline())
    assert not is_offline(ValueError("sha256 mismatch"))
    http_error = urllib.error.HTTPError("http://127.0.0.1:9/x", 404, "Not Found", {}, None)  # type: ignore[arg-type]
    assert not is_offline(http_error), "the server answered: not offline"
