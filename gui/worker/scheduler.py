"""The one object that touches the engine: it lives on its own QThread and owns the `Translator`.

The UI thread calls the small thread-safe request methods below; they only record what is wanted (one pending
slot per kind of job, so the latest request wins) and wake the worker. Because iterating `Translator.stream` blocks
the worker's event loop, cancellation does not go through a queued signal: the UI thread sets the running request's
`threading.Event` directly, and the engine stops within one decoder step.

The worker iterates the stream itself and coalesces its deltas, on the worker thread, to at most one signal per
frame, so a fast decoder never floods the UI's event queue.

Interactive requests come on channels: "window" (the main window) and "popup" (the quick-translate popup). The
latest request wins PER CHANNEL: a popup request never cancels the window's translation, nor the reverse; with one
engine they run one after another, the window first. The window's review requests (`alternatives`, `sentence`: the
click-a-word popup, gui.worker.review) are a third latest-wins channel, "review", served right after the window's
translation (and `prepare_alternatives`, a sentence's start decoded while the pointer rests on it, after the popup's
request, stopped by any other request). The window's word alignment (`align`: which source words the sentence under
the pointer was written from, gui.worker.alignment) is a latest-wins slot of its own, served after the popup and before
prepare. Requests of the local API (`translate_ordered`) are served in
arrival order, one item at a time between interactive requests, and are never cancelled by a newer one (only by
`cancel_ordered` or `stop`). Priority: configuration, window, review, popup, alignment, prepare,
API, document steps.

Each kind of work is a job source that owns its queue (gui.worker.jobs); the scheduler asks them in `_sources`'
order, which is the priority above: configuration (gui.worker.model_load), the window's channel, review
(gui.worker.review), the popup's channel, alignment (gui.worker.alignment), prepare, API (gui.worker.ordered),
documents (gui.worker.documents).

Documents (`translate_document`) wait in a queue and are served in order, one bounded step
(`engine.documents.job.DocumentJob.steps`) at a time, and only when nothing else is pending: configuration and the
window's interactive request always run first, so typing waits at most one step. A precision or thread change
applies between steps and the document goes on (same model, same languages); a load that leaves another direction
(or no model) loaded stops the document between steps with `DOC_DIRECTION` (or `NO_MODEL`): its progress file is
kept, so queueing it again in its direction continues where it stopped. Each document goes to the installed
direction that reads it (engine.text.source_language on the start of its text, as `qiao translate-file` does): a Chinese
file queued while the window is en→zh is translated by the zh→en bundle, loaded beside the window's as for the quick
popup; with no such bundle, or in a language Qiao does not translate, it fails with `DOC_LANGUAGE`.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from PySide6.QtCore import QObject, Signal, Slot

from engine.documents.job import DocumentOptions
from engine.options import TranslationOptions
from gui.worker.alignment import AlignmentSource, alignment_request
from gui.worker.channels import CHANNELS, ChannelRequest, ChannelSource
from gui.worker.documents import DocumentRequest, DocumentSource, nothing_done
from gui.worker.engine import (
    DocumentJobFactory,
    Locator,
    PairLister,
    TranslatorFactory,
    Verifier,
    default_factory,
    default_locator,
    default_pair_lister,
    local_engine,
)
from gui.worker.jobs import Job, JobSource, next_job
from gui.worker.messages import CANCELLED, DOC_DIRECTION, DOC_LANGUAGE, INTERNAL, NO_MODEL, STOPPED
from gui.worker.model_load import EnginePort, ModelInfo, ModelLoadSource, ModelProblem
from gui.worker.ordered import OrderedRequest, OrderedSource
from gui.worker.review import (
    PREPARING,
    REVIEW,
    PrepareSource,
    ReviewRequest,
    ReviewSource,
    alternatives_request,
    prepare_request,
    sentence_request,
)
from gui.worker.thread import EngineThread

# Imported from here by the window, the features and the tests; they live in the worker's other modules
__all__ = [
    "CANCELLED",
    "DOC_DIRECTION",
    "DOC_LANGUAGE",
    "INTERNAL",
    "NO_MODEL",
    "STOPPED",
    "DocumentJobFactory",
    "EnginePort",
    "Locator",
    "ModelInfo",
    "ModelProblem",
    "PairLister",
    "TranslationWorker",
    "TranslatorFactory",
    "Verifier",
    "WorkerThread",
    "default_factory",
    "default_locator",
    "default_pair_lister",
]


class TranslationWorker(QObject):
    """Owns the Translator; see the module docstring for the threading contract."""

    model_loading = Signal(str, str)  # kind ("load" | "switch"), precision
    model_ready = Signal(object)  # ModelInfo
    model_failed = Signal(object)  # ModelProblem
    error = Signal(str)  # a non-fatal problem (e.g. a thread count the runtime refused)
    switch_failed = Signal(str, object)  # precision asked for, ModelProblem; the previous precision still runs
    translation_started = Signal(int)
    translation_progress = Signal(int, str, int, int)  # id, new text (coalesced), sentences done, total
    translation_finished = Signal(int, object)  # id, engine.results.Translation
    translation_failed = Signal(int, str)
    document_queued = Signal(int, object)  # id, source Path
    document_started = Signal(int, object)  # id, the result's Path (known before any work)
    document_progress = Signal(int, object)  # id, DocumentProgress (after every step)
    document_finished = Signal(int, object)  # id, DocumentResult (done or cancelled; cancelled ones have no output)
    document_failed = Signal(int, str)  # id, the job's wording, NO_MODEL, DOC_DIRECTION + pair, or INTERNAL + detail
    ordered_progress = Signal(int, int, str)  # id, item index, new text (streamed ordered requests only)
    ordered_finished = Signal(int, object)  # id, list[Translation] in the order of the texts
    ordered_failed = Signal(int, str)  # id, the engine's wording, NO_MODEL, STOPPED, CANCELLED or INTERNAL + detail
    # id, list[Alternative]: the candidate words as soon as they are known, then as their rests are decoded (some
    # entries not `complete`); always before the request's alternatives_ready, never for a replaced/cancelled one
    alternatives_progress = Signal(int, object)
    alternatives_ready = Signal(int, object)  # id, list[engine.results.Alternative], best first
    sentence_ready = Signal(int, object)  # id, engine.results.SentenceResult
    review_failed = Signal(int, str)  # id, the engine's wording, NO_MODEL, CANCELLED or INTERNAL + detail
    alignment_ready = Signal(int, object)  # id, tuple of (start, end) per token: characters of the sentence's source
    alignment_failed = Signal(int, str, bool)  # id, the engine's wording (or NO_MODEL, INTERNAL…), model cannot align
    _wake = Signal()

    def __init__(
        self,
        factory: TranslatorFactory | None = None,
        locator: Locator | None = None,
        expected_dir: Callable[[str | None], Path] | None = None,  # (pair) -> where a bundle of it belongs
        verifier: Verifier | None = None,
        pair_lister: PairLister | None = None,
        job_factory: DocumentJobFactory | None = None,
        *,
        engine: EnginePort | None = None,
    ) -> None:
        """`engine`: the engine to work with; or the hooks one by one, the engine's own for those not given."""
        super().__init__()
        hooks = (factory, locator, expected_dir, verifier, pair_lister, job_factory)
        if engine is not None and any(hook is not None for hook in hooks):
            raise TypeError("give either an engine or its hooks, not both")
        engine = engine or local_engine(*hooks)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._model = ModelLoadSource(engine, self)
        self._channels = {name: ChannelSource(name, self._model.of, self) for name in CHANNELS}
        self._review = ReviewSource(self._model.current, self)
        self._prepare = PrepareSource(self._model.current)
        self._alignment = AlignmentSource(self._model.current, self)
        self._ordered = OrderedSource(self._lock, self._model.current, self)
        self._documents = DocumentSource(self._lock, self._model, engine.document_job, self)
        # The priority: the first source with a job wins each turn (the module docstring says why this order)
        self._sources: tuple[JobSource, ...] = (
            self._model,
            self._channels["window"],
            self._review,
            self._channels["popup"],
            self._alignment,
            self._prepare,
            self._ordered,
            self._documents,
        )
        self._running: Job | None = None
        self._stopped = False
        self._wake.connect(self._drain)

    # ---- called from the UI thread -------------------------------------------------------------------------

    def load(self, model_dir: str | None, precision: str, threads: int | None, pair: str | None = None) -> None:
        """(Re)locate and load the bundle for `pair` ("en-zh"); replaces any earlier pending load."""
        with self._lock:
            self._stop_preparing()
            self._model.queue_load(model_dir, precision, threads, pair)
        self._wake.emit()

    def set_precision(self, precision: str) -> None:
        """Switch INT8/FP32 without restarting; a translation in flight restarts with the new precision."""
        with self._lock:
            self._model.queue_precision(precision)
            self._stop_preparing()
            running = self._running  # a translation or review request runs again, unless a newer one waits
            if running is not None and running.restart is not None and not running.superseded and running.restart():
                running.superseded = True
                running.cancel.set()
        self._wake.emit()

    def set_threads(self, threads: int | None) -> None:
        """Applies after the current translation (the thread count does not change its result)."""
        with self._lock:
            self._model.queue_threads(threads)
        self._wake.emit()

    def translate(
        self,
        text: str,
        options: TranslationOptions | None = None,
        *,
        precision: str | None = None,
        channel: str = "window",
        pair: str | None = None,
    ) -> int:
        """Queue `text` on `channel`, cancelling whatever runs or waits on that channel only; returns the request id
        the signals will carry (ids are unique across channels, so each listener keeps to its own).

        `precision`, when given, is switched to first, in the same step: a settings change that touches both the
        precision and the options redoes the translation once, never the old request in the new precision.
        `pair` ("zh-en"): translate in that installed direction even if another is loaded (the quick popup follows
        the language of the text it is given; that bundle is loaded once, beside the window's, until the next load).
        """
        if channel not in CHANNELS:
            raise ValueError(f"unknown channel {channel!r}: use one of {', '.join(CHANNELS)}")
        with self._lock:
            request = ChannelRequest(next(self._ids), text, options or TranslationOptions(), pair)
            if precision is not None:
                self._model.queue_precision(precision)
            self._channels[channel].put(request)
            self._stop_preparing()
            running = self._running
            if running is not None and running.channel == channel:
                running.superseded = True
                running.cancel.set()
        self._wake.emit()
        return request.id

    def cancel(self, channel: str = "window") -> None:
        """Stop the channel's running request (its partial text is reported) and drop its waiting one."""
        with self._lock:
            waiting = self._channels.get(channel) or (self._review if channel == REVIEW else None)
            if waiting is not None:
                waiting.put(None)
            if self._running is not None and self._running.channel == channel:
                self._running.cancel.set()

    def alternatives(
        self,
        source: str,
        tokens: list[int] | tuple[int, ...],
        position: int,
        options: TranslationOptions | None,
        k: int = 5,
    ) -> int:
        """Other words for target position `position` of the sentence `source` → `tokens`, each with the rest
        re-decoded: the words first and the rests as they are decoded (alternatives_progress), then the final list
        (alternatives_ready); replaces any earlier review request."""
        return self._queue_review(alternatives_request(next(self._ids), source, tokens, position, options, k))

    def sentence(
        self, source: str, options: TranslationOptions | None, prefix_tokens: list[int] | tuple[int, ...]
    ) -> int:
        """One sentence decoded with its start forced to `prefix_tokens` (sentence_ready); replaces any earlier
        review request. Options asking for n-best (`options.alternatives`) give a result with its alternatives."""
        return self._queue_review(sentence_request(next(self._ids), source, options, prefix_tokens))

    def prepare_alternatives(
        self, source: str, tokens: list[int] | tuple[int, ...], options: TranslationOptions | None
    ) -> int:
        """Decode the start of the sentence `source` → `tokens` while nothing else needs the engine, so that a click
        on one of its words gets its alternatives at once; replaces an earlier waiting one, stopped (keeping what
        it decoded) by any other request. Nothing is reported."""
        request = prepare_request(next(self._ids), source, tokens, options)
        with self._lock:
            self._prepare.put(request)
            self._stop_preparing()
        self._wake.emit()
        return request.id

    def align(self, source: str, tokens: list[int] | tuple[int, ...], options: TranslationOptions | None) -> int:
        """Which characters of `source` each of `tokens` (its translation, as SentenceResult.tokens) was written from
        (alignment_ready), or why not (alignment_failed; `unsupported` for a model that cannot align); replaces an
        earlier waiting request, stops nothing."""
        request = alignment_request(next(self._ids), source, tokens, options)
        with self._lock:
            self._alignment.put(request)
        self._wake.emit()
        return request.id

    def _stop_preparing(self) -> None:
        """(Lock held) a running prepare request gives the engine up within a step."""
        running = self._running
        if running is not None and running.channel == PREPARING:
            running.superseded = True
            running.cancel.set()

    def _queue_review(self, request: ReviewRequest) -> int:
        with self._lock:
            self._review.put(request)
            self._prepare.put(None)  # the click decodes what it needs; a start prepared after it would replace its own
            self._stop_preparing()
            running = self._running
            if running is not None and running.channel == REVIEW:
                running.superseded = True
                running.cancel.set()
        self._wake.emit()
        return request.id

    def translate_ordered(
        self, texts: Iterable[str], options: TranslationOptions | None = None, *, stream: bool = False
    ) -> int:
        """Queue an API request behind the earlier ones (FIFO, never superseded); returns the id that
        ordered_progress / ordered_finished / ordered_failed carry. `stream`: report each item's text as it comes."""
        request = OrderedRequest(next(self._ids), tuple(texts), options or TranslationOptions(), stream)
        with self._lock:
            self._stop_preparing()
            stopped = self._stopped
            if not stopped:
                self._ordered.add(request)
        if stopped:
            self.ordered_failed.emit(request.id, STOPPED)
            return request.id
        self._wake.emit()
        return request.id

    def cancel_ordered(self, request_id: int) -> None:
        """Drop an API request (its client went away or timed out): waiting, it is reported CANCELLED at once;
        running, its current item stops within one decoder step."""
        with self._lock:
            waiting = self._ordered.find(request_id)
            if waiting is None:
                return
            waiting.cancel.set()
            running = self._running is not None and self._running.id == request_id
            if not running:
                self._ordered.remove(waiting)
        if not running:
            self.ordered_failed.emit(request_id, CANCELLED)

    def ordered_pending(self) -> int:
        """How many API requests wait or run."""
        with self._lock:
            return len(self._ordered)

    def translate_document(
        self,
        path: str | Path,
        options: DocumentOptions | None = None,
        translation: TranslationOptions | None = None,
        *,
        pair: str | None = None,
    ) -> int:
        """Queue a document behind the others; returns the id its signals carry. `translation` is what the window
        asks of a translation now (kept for the whole document); `pair` the direction it is for."""
        doc = DocumentRequest(
            next(self._ids), Path(path), options or DocumentOptions(), translation or TranslationOptions(), pair
        )
        with self._lock:
            if self._stopped:
                return doc.id
            self._stop_preparing()
            self._documents.add(doc)
        self.document_queued.emit(doc.id, doc.source)
        self._wake.emit()
        return doc.id

    def cancel_document(self, doc_id: int) -> None:
        """A waiting document is dropped at once (reported as cancelled, nothing written); the running one stops
        within its step and its job reports how far it got."""
        with self._lock:
            waiting = self._documents.cancel(doc_id)
        if waiting is not None:
            self.document_finished.emit(doc_id, nothing_done(waiting, cancelled=True))

    def stop(self) -> None:
        """Before the thread quits: cancel everything and refuse new work."""
        with self._lock:
            self._stopped = True
            reports = [report for source in self._sources for report in source.drop()]
            if self._running is not None:
                self._running.superseded = True
                self._running.cancel.set()
        for report in reports:  # the API's requests: their callers (the API's threads) wait for an answer
            report()

    def is_busy(self, channel: str = "window") -> bool:
        """Whether `channel` has a request running or waiting."""
        with self._lock:
            running = self._running is not None and self._running.channel == channel
            waiting = self._channels.get(channel) or (self._review if channel == REVIEW else None)
            return running or (waiting is not None and waiting.waiting is not None)

    # ---- on the worker thread --------------------------------------------------------------------------------

    @Slot()
    def _drain(self) -> None:
        """Run every pending job, the first source's first, until no source has one."""
        while True:
            with self._lock:
                if self._stopped:
                    return
                job = next_job(self._sources)
                if job is None:
                    return
                self._running = job
            try:
                job.run()
            finally:
                with self._lock:
                    self._running = None


class WorkerThread(EngineThread[TranslationWorker]):
    """A `TranslationWorker` on its own started QThread, and a clean way to stop both."""

    def __init__(
        self,
        factory: TranslatorFactory | None = None,
        locator: Locator | None = None,
        expected_dir: Callable[[str | None], Path] | None = None,  # (pair) -> where a bundle of it belongs
        verifier: Verifier | None = None,
        pair_lister: PairLister | None = None,
        job_factory: DocumentJobFactory | None = None,
        *,
        engine: EnginePort | None = None,
    ) -> None:
        hooks = (factory, locator, expected_dir, verifier, pair_lister, job_factory)
        super().__init__(TranslationWorker(*hooks, engine=engine))
