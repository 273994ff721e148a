"""Documents on the worker: queued, served in order one bounded step (`DocumentJob.steps`) at a time, last in the
scheduler's list, so anything else waiting runs between two steps. See gui.worker.scheduler for what a load does
to a document under way, and how a document in the other language finds its direction."""

from __future__ import annotations

import contextlib
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import SignalInstance

from engine.documents.job import DocumentOptions, DocumentProgress, DocumentResult, key_of
from engine.errors import QiaoError
from engine.options import TranslationOptions
from engine.results import Translation
from gui.worker.jobs import Job, Report
from gui.worker.messages import DOC_DIRECTION, DOC_LANGUAGE, NO_MODEL, internal
from gui.worker.model_load import DocumentJobLike, TranslatorLike, manifest_field, pair_of

DOCUMENT = "document"  # the running step's channel


@dataclass
class DocumentRequest:
    """A queued or running document; `steps` is set once its job has started."""

    id: int
    source: Path
    options: DocumentOptions
    translation: TranslationOptions
    pair: str | None  # the direction it was queued for ("en-zh"); None: whatever is loaded
    cancel: threading.Event = field(default_factory=threading.Event)
    job: DocumentJobLike | None = None
    steps: Iterator[DocumentProgress] | None = None
    # its text reads as another installed direction's source language: `pair` is that direction, translated by the
    # bundle loaded beside the window's (`Translators.of`)
    rerouted: bool = False


class Translators(Protocol):
    """What a document translates with (gui.worker.model_load.ModelLoadSource)."""

    pairs_known: tuple[str, ...]

    def current(self) -> TranslatorLike | None: ...
    def of(self, pair: str | None) -> TranslatorLike | None: ...


class LoadedTranslator:
    """What a document job translates with: whichever translator `current` gives when a step runs (a reload of the
    same direction between steps is used at once; the old one is not kept alive by the job)."""

    def __init__(self, current: Callable[[], TranslatorLike | None]) -> None:
        self._current = current

    def translate_segments(
        self, segments: Iterable[str], options: TranslationOptions | None = None, *, cancel: threading.Event | None
    ) -> Iterator[Translation]:
        tr = self._current()
        if tr is None:
            raise QiaoError("no translation model is loaded")
        return tr.translate_segments(segments, options, cancel=cancel)  # type: ignore[attr-defined]


class DocumentSignals(Protocol):
    document_started: SignalInstance  # id, the result's Path
    document_progress: SignalInstance  # id, DocumentProgress
    document_finished: SignalInstance  # id, DocumentResult
    document_failed: SignalInstance  # id, message


JobFactory = Callable[..., DocumentJobLike]  # (source, options, translation, *, target_lang=, model_key=)


class DocumentSource:
    """The waiting documents, in order, and the one started (between or during its steps)."""

    def __init__(
        self, lock: threading.Lock, models: Translators, job_factory: JobFactory, signals: DocumentSignals
    ) -> None:
        self._lock, self._models, self._job_factory, self._signals = lock, models, job_factory, signals
        self._waiting: deque[DocumentRequest] = deque()
        self._running: DocumentRequest | None = None

    # ---- the queue (lock held) ---------------------------------------------------------------------------------

    def add(self, doc: DocumentRequest) -> None:
        self._waiting.append(doc)

    def cancel(self, doc_id: int) -> DocumentRequest | None:
        """A waiting document is dropped (returned, for the caller to report); the running one is told to stop."""
        waiting = next((d for d in self._waiting if d.id == doc_id), None)
        if waiting is not None:
            self._waiting.remove(waiting)
        elif self._running is not None and self._running.id == doc_id:
            self._running.cancel.set()
        return waiting

    def take(self) -> Job | None:
        if self._running is None and self._waiting:
            self._running = self._waiting.popleft()
        doc = self._running
        return None if doc is None else Job(doc.id, DOCUMENT, lambda _job: self._step(doc), doc.cancel)

    def drop(self) -> list[Report]:
        self._waiting.clear()
        if self._running is not None:
            self._running.cancel.set()
        return []

    # ---- on the worker thread ------------------------------------------------------------------------------------

    def _step(self, doc: DocumentRequest) -> None:
        """One bounded step of `doc` (its first one also starts the job); the document ends here when it is done,
        cancelled, failed, or no longer for the loaded direction."""
        try:
            ended = self._advance(doc)
        except QiaoError as exc:  # DocumentError included: the engine's wording, for a person
            ended = True
            self._end(doc, failed=str(exc))
        except Exception as exc:  # a bug: the window words it, the detail goes to the log
            ended = True
            self._end(doc, failed=internal(exc))
        if ended:
            with self._lock:
                if self._running is doc:
                    self._running = None

    def _translator(self, doc: DocumentRequest) -> TranslatorLike | None:
        """What `doc`'s next step translates with: the loaded translator, or for a document in the other language
        (`rerouted`) its direction's."""
        return self._models.of(doc.pair) if doc.rerouted else self._models.current()

    def _advance(self, doc: DocumentRequest) -> bool:
        """Run the next step; True when the document has ended (and been reported)."""
        if doc.cancel.is_set() and doc.steps is None:
            self._end(doc, result=nothing_done(doc, cancelled=True))
            return True
        if self._models.current() is None:
            self._end(doc, failed=NO_MODEL)
            return True
        if doc.steps is None and doc.pair and not doc.rerouted:
            refused = self._route(doc)
            if refused:
                self._end(doc, failed=f"{DOC_LANGUAGE}{refused}")
                return True
        tr = self._translator(doc)
        loaded = pair_of(getattr(tr, "manifest", None))
        if tr is None:
            self._end(doc, failed=NO_MODEL)
            return True
        if doc.pair and loaded is not None and loaded.key != doc.pair:
            self._end(doc, failed=f"{DOC_DIRECTION}{doc.pair}")
            return True
        if doc.steps is None:
            model_id = manifest_field(getattr(tr, "manifest", None), "model_id", "")
            target = loaded.target.code if loaded is not None else (doc.pair or "en-zh").split("-")[-1]
            doc.job = self._job_factory(
                doc.source,
                doc.options,
                doc.translation,
                target_lang=target,
                model_key=key_of(model_id, loaded.key if loaded else doc.pair or "", tr.precision),
            )
            self._signals.document_started.emit(doc.id, doc.job.output)
            doc.steps = iter(doc.job.steps(LoadedTranslator(lambda: self._translator(doc)), doc.cancel))
        try:
            progress = next(doc.steps)
        except StopIteration:
            result = doc.job.result if doc.job is not None else None
            if result is None:
                raise RuntimeError("the document job ended without a result") from None
            self._end(doc, result=result)
            return True
        self._signals.document_progress.emit(doc.id, progress)
        return False

    def _route(self, doc: DocumentRequest) -> str:
        """Send `doc` to the installed direction that reads its text (the same sample and rule as `qiao
        translate-file`); "" when it goes (to its own direction or the other), else DOC_LANGUAGE's detail."""
        from engine.documents.sample import text_sample
        from engine.text.source_language import choose_pair, detect_language

        assert doc.pair is not None
        choice = choose_pair(detect_language(text_sample(doc.source)), self._models.pairs_known, doc.pair)
        if choice.unsupported is not None:
            return f"unsupported:{choice.unsupported}"
        if choice.missing is not None:
            return f"missing:{choice.missing}"
        if choice.pair != doc.pair:
            doc.pair, doc.rerouted = choice.pair, True
        return ""

    def _end(self, doc: DocumentRequest, *, result: DocumentResult | None = None, failed: str = "") -> None:
        if doc.steps is not None and hasattr(doc.steps, "close"):
            with contextlib.suppress(Exception):  # a job stopped between steps keeps its progress file, as if cancelled
                doc.steps.close()
        if result is not None and result.error and not result.cancelled:
            failed = result.error
        if failed:
            self._signals.document_failed.emit(doc.id, failed)
        else:
            self._signals.document_finished.emit(doc.id, result)


def nothing_done(doc: DocumentRequest, *, cancelled: bool) -> DocumentResult:
    """The result of a document that never started."""
    return DocumentResult(doc.source, None, "", 0, 0, 0, 0.0, cancelled=cancelled)
