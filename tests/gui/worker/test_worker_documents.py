"""Documents on the worker thread: served in order, one step at a time, the window's request first between steps,
cancel of the running and of a waiting document, failures in words, and what a direction change does."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from PySide6.QtCore import QObject

from engine.documents.job import DocumentOptions
from engine.options import TranslationOptions
from gui.worker.scheduler import DOC_DIRECTION, INTERNAL, NO_MODEL, WorkerThread
from tests.gui.document_fakes import FakeJobs, RecordingFactory
from tests.gui.fakes import FakeFactory, PairFactory, PairLocator, fixed_locator

SIGNALS = (
    "model_ready",
    "model_failed",
    "translation_finished",
    "document_queued",
    "document_started",
    "document_progress",
    "document_finished",
    "document_failed",
)


class _Sink(QObject):
    def __init__(self, name: str, recorder: Recorder) -> None:
        super().__init__()
        self.name, self.recorder = name, recorder

    def hit(self, *args: object) -> None:
        self.recorder.events.append((self.name, *args))
        self.recorder.threads.add(threading.get_ident())


class Recorder:
    """Every worker signal, in arrival order, received on the UI thread."""

    def __init__(self, worker) -> None:
        self.events: list[tuple] = []
        self.threads: set[int] = set()
        self.sinks = [_Sink(name, self) for name in SIGNALS]
        for sink in self.sinks:
            getattr(worker, sink.name).connect(sink.hit)

    def of(self, name: str) -> list[tuple]:
        return [e[1:] for e in self.events if e[0] == name]

    def ended(self) -> list[int]:
        return [e[1] for e in self.events if e[0] in ("document_finished", "document_failed")]


@pytest.fixture
def docs_thread(tmp_path):
    threads: list[WorkerThread] = []

    def make(jobs: FakeJobs, factory=None, locator=None, *, load: bool = True, pair: str | None = None):
        factory = factory or FakeFactory()
        wt = WorkerThread(factory, locator or fixed_locator(tmp_path), lambda p=None: tmp_path, None, None, jobs)
        threads.append(wt)
        rec = Recorder(wt.worker)
        if load:
            wt.worker.load(None, "int8", None, pair)
        return wt, rec

    yield make
    for wt in threads:
        assert wt.shutdown(5000)


def files(tmp_path: Path, *names: str) -> list[Path]:
    out = []
    for name in names:
        p = tmp_path / name
        p.write_text("Hello world.\n", encoding="utf-8")
        out.append(p)
    return out


def wait_ready(qtbot, rec: Recorder) -> None:
    qtbot.waitUntil(lambda: bool(rec.of("model_ready")), timeout=5000)


def test_documents_run_in_order_on_the_worker_thread_with_progress_after_every_step(qtbot, docs_thread, tmp_path):
    jobs = FakeJobs(steps=3, units_per_step=4)
    wt, rec = docs_thread(jobs)
    a, b = files(tmp_path, "a.txt", "b.txt")
    options = TranslationOptions(beams=2, variant="hant")
    ida = wt.worker.translate_document(a, DocumentOptions(), options, pair="en-zh")
    idb = wt.worker.translate_document(b, DocumentOptions(), options, pair="en-zh")
    qtbot.waitUntil(lambda: len(rec.ended()) == 2, timeout=5000)
    assert rec.ended() == [ida, idb]
    assert [e for e in jobs.events if e[0] == "step"] == [("step", n, i) for n in ("a.txt", "b.txt") for i in range(3)]
    progress_a = [p.units_done for i, p in rec.of("document_progress") if i == ida]
    assert progress_a == [4, 8, 12]
    assert rec.of("document_started")[0] == (ida, tmp_path / "a.zh.txt")
    ((_, result_a), (_, result_b)) = rec.of("document_finished")
    assert result_a.output == tmp_path / "a.zh.txt" and result_a.output.exists() and not result_a.cancelled
    assert result_b.output == tmp_path / "b.zh.txt"
    job = jobs.built[0]
    assert job.translation == options and job.target_lang == "zh"
    assert job.model_key.endswith(":en-zh:int8"), job.model_key  # engine.documents.job.model_key's wording
    assert threading.get_ident() not in {j.thread for j in jobs.built}
    assert rec.threads == {threading.get_ident()}


def test_the_windows_request_runs_between_two_steps(qtbot, docs_thread, tmp_path):
    events: list = []
    jobs = FakeJobs(steps=3, hold=threading.Semaphore(0), events=events)
    wt, rec = docs_thread(jobs, RecordingFactory(events))
    wait_ready(qtbot, rec)
    (doc,) = files(tmp_path, "long.txt")
    wt.worker.translate_document(doc, DocumentOptions(), pair="en-zh")
    jobs.release()
    qtbot.waitUntil(lambda: ("step", "long.txt", 0) in events, timeout=5000)
    wt.worker.translate("hello world")  # waits for the step now under way, not for the whole document
    jobs.release(2)
    qtbot.waitUntil(lambda: len(rec.ended()) == 1 and bool(rec.of("translation_finished")), timeout=5000)
    assert events == [
        ("step", "long.txt", 0),
        ("step", "long.txt", 1),
        ("interactive", "hello world"),
        ("step", "long.txt", 2),
    ]
    assert rec.of("translation_finished")[0][1].text == "你好世界"


def test_typing_keeps_priority_and_the_latest_request_still_wins(qtbot, docs_thread, tmp_path):
    events: list = []
    jobs = FakeJobs(steps=2, hold=threading.Semaphore(0), events=events)
    wt, rec = docs_thread(jobs, RecordingFactory(events))
    wait_ready(qtbot, rec)
    wt.worker.translate_document(files(tmp_path, "d.txt")[0], DocumentOptions(), pair="en-zh")
    jobs.release()
    qtbot.waitUntil(lambda: ("step", "d.txt", 0) in events, timeout=5000)
    wt.worker.translate("hello")
    last = wt.worker.translate("good morning")
    jobs.release()
    qtbot.waitUntil(lambda: len(rec.ended()) == 1 and bool(rec.of("translation_finished")), timeout=5000)
    assert ("interactive", "hello") not in events, "a superseded request never runs"
    assert [f[0] for f in rec.of("translation_finished")] == [last]


def test_cancelling_the_running_document_stops_it_within_a_step_and_the_next_one_starts(qtbot, docs_thread, tmp_path):
    jobs = FakeJobs(steps=5, hold=threading.Semaphore(0))
    wt, rec = docs_thread(jobs)
    a, b = files(tmp_path, "a.txt", "b.txt")
    ida = wt.worker.translate_document(a, DocumentOptions(), pair="en-zh")
    idb = wt.worker.translate_document(b, DocumentOptions(), pair="en-zh")
    jobs.release()
    qtbot.waitUntil(lambda: bool(rec.of("document_progress")), timeout=5000)
    started = time.perf_counter()
    wt.worker.cancel_document(ida)
    qtbot.waitUntil(lambda: ida in rec.ended(), timeout=2000)
    assert time.perf_counter() - started < 2.0
    ((fid, result),) = rec.of("document_finished")
    assert fid == ida and result.cancelled and result.output is None
    assert not (tmp_path / "a.zh.txt").exists(), "a cancelled document writes nothing"
    jobs.release(5)
    qtbot.waitUntil(lambda: idb in rec.ended(), timeout=5000)
    assert rec.of("document_finished")[-1][1].output == tmp_path / "b.zh.txt"


def test_cancelling_a_waiting_document_drops_it_at_once(qtbot, docs_thread, tmp_path):
    jobs = FakeJobs(steps=2, hold=threading.Semaphore(0))
    wt, rec = docs_thread(jobs)
    a, b, c = files(tmp_path, "a.txt", "b.txt", "c.txt")
    ida = wt.worker.translate_document(a, DocumentOptions(), pair="en-zh")
    idb = wt.worker.translate_document(b, DocumentOptions(), pair="en-zh")
    idc = wt.worker.translate_document(c, DocumentOptions(), pair="en-zh")
    wt.worker.cancel_document(idb)
    assert rec.of("document_finished")[0][0] == idb, "reported at once, before the running one moves"
    assert rec.of("document_finished")[0][1].cancelled
    jobs.release(4)
    qtbot.waitUntil(lambda: len(rec.ended()) == 3, timeout=5000)
    assert rec.ended() == [idb, ida, idc]
    assert [j.source.name for j in jobs.built] == ["a.txt", "c.txt"], "the cancelled one never started"


def test_a_failing_document_says_why_and_the_queue_goes_on(qtbot, docs_thread, tmp_path):
    jobs = FakeJobs(steps=2)
    jobs.fail_at_start["locked.docx"] = "locked.docx is encrypted; save it without a password and try again"
    jobs.fail_at_step["bad.txt"] = 1
    wt, rec = docs_thread(jobs)
    locked, bad, good = files(tmp_path, "locked.docx", "bad.txt", "good.txt")
    ids = [wt.worker.translate_document(p, DocumentOptions(), pair="en-zh") for p in (locked, bad, good)]
    qtbot.waitUntil(lambda: len(rec.ended()) == 3, timeout=5000)
    assert rec.of("document_failed") == [
        (ids[0], "locked.docx is encrypted; save it without a password and try again"),
        (ids[1], "bad.txt is damaged at step 1"),
    ]
    assert rec.of("document_finished")[0][0] == ids[2]


def test_a_bug_in_the_job_is_reported_as_internal(qtbot, docs_thread, tmp_path):
    def broken(*args, **kwargs):
        raise NotImplementedError("engine.documents.job is being written")

    wt, rec = docs_thread(broken)
    wt.worker.translate_document(files(tmp_path, "x.txt")[0], DocumentOptions(), pair="en-zh")
    qtbot.waitUntil(lambda: bool(rec.of("document_failed")), timeout=5000)
    assert rec.of("document_failed")[0][1].startswith(INTERNAL + "NotImplementedError")


def test_without_a_model_the_document_fails_with_no_model(qtbot, docs_thread, tmp_path):
    wt, rec = docs_thread(FakeJobs(), load=False)
    wt.worker.translate_document(files(tmp_path, "x.txt")[0], DocumentOptions(), pair="en-zh")
    qtbot.waitUntil(lambda: bool(rec.of("document_failed")), timeout=5000)
    assert rec.of("document_failed")[0][1] == NO_MODEL


def test_a_direction_change_stops_the_document_between_steps(qtbot, docs_thread, tmp_path):
    jobs = FakeJobs(steps=4, hold=threading.Semaphore(0))
    locator = PairLocator(tmp_path)
    wt, rec = docs_thread(jobs, PairFactory(), locator, pair="en-zh")
    wait_ready(qtbot, rec)
    a, b = files(tmp_path, "a.txt", "b.txt")
    ida = wt.worker.translate_document(a, DocumentOptions(), pair="en-zh")
    jobs.release()
    qtbot.waitUntil(lambda: bool(rec.of("document_progress")), timeout=5000)
    wt.worker.load(None, "int8", None, "zh-en")  # the window's ⇄
    jobs.release()  # the step under way finishes; then the load runs, then the document sees the other direction
    qtbot.waitUntil(lambda: bool(rec.ended()), timeout=5000)
    assert rec.of("document_failed") == [(ida, f"{DOC_DIRECTION}en-zh")]
    assert jobs.built[0].steps_run == 2 and not (tmp_path / "a.zh.txt").exists()
    b.write_text("你好，世界。\n", encoding="utf-8")  # Chinese: the new direction reads it (English would go back)
    idb = wt.worker.translate_document(b, DocumentOptions(), pair="zh-en")  # queued for the new direction: runs
    jobs.release(4)
    qtbot.waitUntil(lambda: idb in rec.ended(), timeout=5000)
    assert rec.of("document_finished")[0][1].output == tmp_path / "b.en.txt"


def test_a_precision_switch_applies_between_steps_and_the_document_goes_on(qtbot, docs_thread, tmp_path):
    jobs = FakeJobs(steps=3, hold=threading.Semaphore(0))
    factory = FakeFactory()
    wt, rec = docs_thread(jobs, factory)
    wait_ready(qtbot, rec)
    did = wt.worker.translate_document(files(tmp_path, "a.txt")[0], DocumentOptions(), pair="en-zh")
    jobs.release()
    qtbot.waitUntil(lambda: bool(rec.of("document_progress")), timeout=5000)
    wt.worker.set_precision("fp32")
    jobs.release(2)
    qtbot.waitUntil(lambda: did in rec.ended(), timeout=5000)
    assert rec.of("document_finished")[0][1].output is not None
    assert factory.translator.precision_switches == ["fp32"]


def test_shutdown_mid_document_stops_promptly(qtbot, docs_thread, tmp_path):
    jobs = FakeJobs(steps=1000, step_s=0.01)  # 10 s if it ran to the end
    wt, rec = docs_thread(jobs)
    wt.worker.translate_document(files(tmp_path, "big.txt")[0], DocumentOptions(), pair="en-zh")
    qtbot.waitUntil(lambda: bool(rec.of("document_progress")), timeout=5000)
    started = time.perf_counter()
    assert wt.shutdown(5000)
    assert time.perf_counter() - started < 3.0
    assert not (tmp_path / "big.zh.txt").exists()
