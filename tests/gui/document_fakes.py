"""Stand-ins for `engine.documents.job.DocumentJob` (same constructor, `output`, `result`, `steps`), for tests that
need to control when each step runs; built on the engine's own DocumentOptions/Progress/Result types, so the real
job drops in.

`FakeJobs` is the worker's job factory: it builds `FakeDocumentJob`s, remembers them, and shares one `events` log
with `RecordingFactory`'s translators, so a test can see whether the window's request ran between two steps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from engine.documents.job import DocumentOptions, DocumentProgress, DocumentResult
from engine.documents.model import DocumentError, DocumentFormat
from engine.options import TranslationOptions
from tests.gui.fakes import FakeFactory, FakeTranslator

FAKE_FORMATS = [
    DocumentFormat("txt", "Plain text", (".txt",), read=lambda data: None),  # type: ignore[arg-type,return-value]
    DocumentFormat("markdown", "Markdown", (".md", ".markdown"), read=lambda data: None),  # type: ignore[arg-type]
    DocumentFormat("docx", "Word document", (".docx",), read=lambda data: None),  # type: ignore[arg-type]
]


def use_fake_formats(monkeypatch) -> None:
    """The registry answers with FAKE_FORMATS (the real format modules are other work and may be absent)."""
    from engine.documents import registry

    monkeypatch.setattr(registry, "available", lambda: list(FAKE_FORMATS))


class FakeDocumentJob:
    """`steps` units of `units_per_step` each; a step waits for a permit from `hold` (when given), and stops at once
    when `cancel` is set. The result file is written (text) when the last step ends."""

    def __init__(
        self,
        source: Path,
        options: DocumentOptions,
        translation: TranslationOptions,
        *,
        target_lang: str,
        model_key: str = "",
        jobs: FakeJobs,
    ) -> None:
        self.source = Path(source)
        self.options = options
        self.translation = translation
        self.target_lang = target_lang
        self.model_key = model_key
        self.jobs = jobs
        self._result: DocumentResult | None = None
        self.steps_run = 0
        self.thread: int | None = None
        if jobs.fail_at_start.get(self.source.name):
            raise DocumentError(jobs.fail_at_start[self.source.name])
        folder = options.out_dir or self.source.parent
        self._output = folder / options.name_template.format(
            stem=self.source.stem, suffix=self.source.suffix, lang=target_lang
        )

    @property
    def output(self) -> Path:
        return self._output

    @property
    def result(self) -> DocumentResult | None:
        return self._result

    def _end(self, start: float, *, cancelled: bool = False, error: str | None = None) -> None:
        written = None
        if not cancelled and error is None:
            self._output.parent.mkdir(parents=True, exist_ok=True)
            self._output.write_text("译文\n", encoding="utf-8")
            written = self._output
        self._result = DocumentResult(
            source=self.source,
            output=written,
            format="txt",
            units=self.jobs.steps * self.jobs.units_per_step,
            translated=self.steps_run * self.jobs.units_per_step,
            resumed=0,
            seconds=time.perf_counter() - start,
            cancelled=cancelled,
            error=error,
        )

    def steps(self, translator, cancel: threading.Event | None = None) -> Iterator[DocumentProgress]:
        self.thread = threading.get_ident()
        start = time.perf_counter()
        total = self.jobs.steps * self.jobs.units_per_step
        for i in range(self.jobs.steps):
            if not self._wait(cancel):
                self._end(start, cancelled=True)
                return
            if self.jobs.fail_at_step.get(self.source.name) == i:
                self._end(start, error=f"{self.source.name} is damaged at step {i}")
                return
            self.jobs.events.append(("step", self.source.name, i))
            if self.jobs.step_s:
                time.sleep(self.jobs.step_s)
            self.steps_run += 1
            done = self.steps_run * self.jobs.units_per_step
            elapsed = time.perf_counter() - start
            yield DocumentProgress(
                source=self.source,
                units_done=done,
                units_total=total,
                chars_done=done * 10,
                chars_total=total * 10,
                elapsed_s=elapsed,
                eta_s=self.jobs.eta_s if self.steps_run >= 1 else None,
            )
        self._end(start)

    def _wait(self, cancel: threading.Event | None) -> bool:
        """False when cancelled before the step may run."""
        while True:
            if cancel is not None and cancel.is_set():
                return False
            if self.jobs.hold is None or self.jobs.hold.acquire(timeout=0.005):
                return True


class FakeJobs:
    """The worker's job factory; `hold` (a Semaphore) lets the test release steps one by one."""

    def __init__(
        self,
        *,
        steps: int = 3,
        units_per_step: int = 4,
        hold: threading.Semaphore | None = None,
        step_s: float = 0.0,
        eta_s: float | None = 42.0,
        events: list | None = None,
    ) -> None:
        self.steps = steps
        self.units_per_step = units_per_step
        self.hold = hold
        self.step_s = step_s
        self.eta_s = eta_s
        self.events: list = events if events is not None else []
        self.built: list[FakeDocumentJob] = []
        self.fail_at_start: dict[str, str] = {}  # file name -> the DocumentError's message
        self.fail_at_step: dict[str, int] = {}  # file name -> step whose result carries an error

    def __call__(self, source, options, translation, *, target_lang: str, model_key: str = "") -> FakeDocumentJob:
        job = FakeDocumentJob(source, options, translation, target_lang=target_lang, model_key=model_key, jobs=self)
        self.built.append(job)
        return job

    def release(self, n: int = 1) -> None:
        assert self.hold is not None
        for _ in range(n):
            self.hold.release()


class RecordingTranslator(FakeTranslator):
    """A FakeTranslator that logs each interactive request in the shared events list."""

    events: list

    def stream(self, text, options=None, *, cancel=None):
        self.events.append(("interactive", text))
        yield from super().stream(text, options, cancel=cancel)


class RecordingFactory(FakeFactory):
    """Builds RecordingTranslators that log into `events`."""

    def __init__(self, events: list, **kwargs) -> None:
        super().__init__(**kwargs)
        self.events = events

    def __call__(self, bundle_dir: Path, precision: str, threads: int | None) -> FakeTranslator:
        tr = super().__call__(bundle_dir, precision, threads)
        tr.__class__ = RecordingTranslator
        tr.events = self.events
        return tr


class FakeDocumentWorker(QObject):
    """The document half of `gui.worker.scheduler.TranslationWorker`, on the test's thread: records what it is asked,
    and the
    test emits the reports itself."""

    document_queued = Signal(int, object)
    document_started = Signal(int, object)
    document_progress = Signal(int, object)
    document_finished = Signal(int, object)
    document_failed = Signal(int, str)

    def __init__(self) -> None:
        super().__init__()
        self.queued: list[tuple] = []  # (id, path, DocumentOptions, TranslationOptions, pair)
        self.cancelled: list[int] = []
        self._ids = 100

    def translate_document(self, path, options=None, translation=None, *, pair=None) -> int:
        self._ids += 1
        self.queued.append((self._ids, Path(path), options, translation, pair))
        self.document_queued.emit(self._ids, Path(path))
        return self._ids

    def cancel_document(self, doc_id: int) -> None:
        self.cancelled.append(doc_id)


def progress(source: Path, done: int, total: int, eta: float | None = 90.0) -> DocumentProgress:
    return DocumentProgress(source, done, total, done * 10, total * 10, 1.0, eta)


def result(source: Path, output: Path | None, *, units: int = 12, cancelled: bool = False) -> DocumentResult:
    return DocumentResult(source, output, "txt", units, units, 0, 3.2, cancelled=cancelled)
