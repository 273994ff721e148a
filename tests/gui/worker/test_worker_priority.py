"""The scheduler's job sources, asked in priority order: configuration (a model load) first, then the window's
channel, review, the popup's channel, alignment, prepare, the API, documents, whatever order the requests came in."""

from __future__ import annotations

import threading

import pytest

from engine.options import TranslationOptions
from gui.worker.jobs import Job, next_job
from gui.worker.scheduler import WorkerThread
from tests.gui.document_fakes import FakeJobs
from tests.gui.fakes import FakeFactory, FakeTranslator, fixed_locator


class _LoggingTranslator(FakeTranslator):
    """Logs what each job asks of it in the shared `log`, in the order the worker asks."""

    log: list

    def stream(self, text, options=None, *, cancel=None):
        self.log.append(("translate", text))
        yield from super().stream(text, options, cancel=cancel)

    def translate_sentence(self, source, options=None, *, prefix=(), cancel=None):
        self.log.append(("review", source))
        return None

    def prepare_alternatives(self, source, tokens, options=None, *, cancel=None):
        self.log.append(("prepare", source))

    def alignment(self, source, tokens, options=None):
        self.log.append(("alignment", source))
        return ()


class _GatedFactory(FakeFactory):
    """The first load waits for `release` (the worker is busy while the test queues); every load is logged."""

    def __init__(self, log: list) -> None:
        super().__init__()
        self.log = log
        self.loading = threading.Event()
        self.release = threading.Event()

    def __call__(self, bundle_dir, precision, threads):
        self.log.append(("load",))
        if len(self.built) == 0:
            self.loading.set()
            assert self.release.wait(10)
        tr = super().__call__(bundle_dir, precision, threads)
        tr.__class__ = _LoggingTranslator
        tr.log = self.log
        return tr


@pytest.fixture
def busy_worker(tmp_path):
    """A worker held in its first load, and the log every job writes to."""
    log: list = []
    factory = _GatedFactory(log)
    jobs = FakeJobs(steps=1, events=log)
    wt = WorkerThread(factory, fixed_locator(tmp_path), lambda pair=None: tmp_path, factory.verify, lambda _: (), jobs)
    wt.worker.load(None, "int8", None)
    assert factory.loading.wait(5), "the first load started"
    yield wt, factory, log
    factory.release.set()
    assert wt.shutdown(5000)


def test_jobs_run_in_priority_order_not_arrival_order(qtbot, busy_worker, tmp_path):
    wt, factory, log = busy_worker
    worker = wt.worker
    doc = tmp_path / "doc.txt"
    doc.write_text("Hello world.\n", encoding="utf-8")
    # Queued (nearly) lowest priority first: served in arrival order, the document would run first
    worker.translate_document(doc)
    worker.translate_ordered(["api text"])
    worker.align("alignment text", [1], TranslationOptions())
    worker.translate("popup text", channel="popup")
    worker.sentence("review text", TranslationOptions(), [1])
    worker.prepare_alternatives("prepare text", [1, 2], TranslationOptions())  # after the click: one drops the other
    worker.translate("window text")
    worker.load(None, "int8", None)  # the last request of all, the first served
    factory.release.set()
    qtbot.waitUntil(lambda: ("step", "doc.txt", 0) in log, timeout=5000)
    assert log == [
        ("load",),  # the load that was running
        ("load",),
        ("translate", "window text"),
        ("review", "review text"),
        ("translate", "popup text"),
        ("alignment", "alignment text"),
        ("prepare", "prepare text"),
        ("translate", "api text"),
        ("step", "doc.txt", 0),
    ]


class _Source:
    def __init__(self, name: str, jobs: int) -> None:
        self.name, self.jobs = name, jobs

    def take(self) -> Job | None:
        if not self.jobs:
            return None
        self.jobs -= 1
        return Job(0, self.name, lambda _job: None)

    def drop(self) -> list:
        return []


def test_next_job_takes_from_the_first_source_that_has_one():
    high, low = _Source("high", 1), _Source("low", 2)
    taken = [job.channel for job in iter(lambda: next_job((high, low)), None)]
    assert taken == ["high", "low", "low"]
    assert next_job((high, low)) is None
