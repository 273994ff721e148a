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
request, stopped by any other request). Requests of the local API (`translate_ordered`) are served in
arrival order, one item at a time between interactive requests, and are never cancelled by a newer one (only by
`cancel_ordered` or `stop`). Priority: configuration, window, review, popup, prepare, API,
document steps.

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

import contextlib
import itertools
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from PySide6.QtCore import QObject, QThread, Signal, Slot

from engine.config import PRECISIONS
from engine.documents.job import DocumentOptions, DocumentProgress, DocumentResult, key_of
from engine.errors import BundleError, FileProblem, ModelNotFoundError, QiaoError
from engine.languages import LanguagePair
from engine.options import TranslationOptions
from engine.results import StreamEvent, Translation
from gui.worker.review import (
    REVIEW,
    ReviewRequest,
    alternatives_request,
    prepare_request,
    run_review,
    sentence_request,
)

NO_MODEL = "no-model"  # translation_failed's message when no model is loaded (the window words it)
INTERNAL = "internal-error: "  # prefix of translation_failed's message for an unexpected exception (raw detail after)
FRAME_S = 1 / 60  # coalesce streamed text to about one UI update per frame
DOC_DIRECTION = "direction-changed: "  # document_failed's message prefix; the document's pair key follows
# document_failed's message prefix for a document in another language: "missing:zh-en" (the pair that would read it
# is not installed) or "unsupported:ja" (a language Qiao does not translate)
DOC_LANGUAGE = "document-language: "


class TranslatorLike(Protocol):
    """The part of `engine.pipeline.translator.Translator` the GUI uses (tests pass a fake with the same API)."""

    precision: str
    available_precisions: tuple[str, ...]
    manifest: Any

    def set_precision(self, precision: str) -> None: ...
    def set_threads(self, threads: int | None) -> None: ...
    def stream(
        self, text: str, options: TranslationOptions | None = None, *, cancel: threading.Event | None = None
    ) -> Iterator[StreamEvent | Translation]: ...


TranslatorFactory = Callable[[Path, str, "int | None"], TranslatorLike]
Locator = Callable[["str | None", "str | None"], Path]  # (explicit --model folder, pair key "en-zh") -> bundle
Verifier = Callable[[Path, str], object]  # raises BundleError when that precision of the bundle is not intact
PairLister = Callable[["str | None"], "tuple[str, ...]"]  # explicit folder -> pair keys of the usable bundles


class DocumentJobLike(Protocol):
    """The part of `engine.documents.job.DocumentJob` the worker uses (tests pass a fake with the same API)."""

    @property
    def output(self) -> Path: ...
    @property
    def result(self) -> DocumentResult | None: ...
    def steps(self, translator: Any, cancel: threading.Event | None = None) -> Iterator[DocumentProgress]: ...


# DocumentJob's constructor: (source, DocumentOptions, TranslationOptions, *, target_lang=, model_key=)
DocumentJobFactory = Callable[..., DocumentJobLike]


def default_job_factory(
    source: Path, options: DocumentOptions, translation: TranslationOptions, *, target_lang: str, model_key: str
) -> DocumentJobLike:
    """Import the document runner lazily (its formats load their libraries on the worker thread)."""
    from engine.documents.job import DocumentJob

    return DocumentJob(source, options, translation, target_lang=target_lang, model_key=model_key)


def default_factory(bundle_dir: Path, precision: str, threads: int | None) -> TranslatorLike:
    """Import the engine lazily: onnxruntime is loaded on the worker thread, never on the UI thread."""
    from engine.config import EngineConfig
    from engine.pipeline.translator import Translator

    return Translator(bundle_dir, EngineConfig(precision=precision, threads=threads))


def default_locator(explicit: str | None, pair: str | None) -> Path:
    from engine.store.installed import find_bundle

    return find_bundle(explicit, pair=pair)


def default_pair_lister(explicit: str | None) -> tuple[str, ...]:
    """The pairs of the installed bundles, read from their manifests only (cheap; no hashing)."""
    from engine.store.installed import installed_models

    return tuple(sorted({m.pair.key for m in installed_models(explicit) if m.pair is not None and not m.problem}))


def default_expected_dir(pair: str | None = None) -> Path:
    """Where a user should put a bundle for `pair` (None: the default direction's)."""
    from engine.store.installed import expected_bundle_dir

    return expected_bundle_dir(pair=pair)


def default_verifier(bundle_dir: Path, precision: str) -> object:
    from engine.bundle.manifest import verify_bundle

    return verify_bundle(bundle_dir, precision)


@dataclass(frozen=True)
class ModelInfo:
    """What the window shows about a loaded model (status bar, About dialog)."""

    bundle_dir: str
    model_id: str
    license: str
    attribution: str
    precision: str
    available_precisions: tuple[str, ...]
    default_beams: int | None
    load_seconds: float
    switched: bool = False  # True after a precision switch rather than a first load
    pair: LanguagePair | None = None  # the bundle's languages (manifest `languages`)
    pairs: tuple[str, ...] = ()  # pair keys of every usable installed bundle ("en-zh", "zh-en"), for the swap

    @property
    def variants(self) -> tuple[str, ...]:
        """The pair's variant keys ("hans", "hant"); () when it has none (the setting is hidden)."""
        return self.pair.variant_keys if self.pair is not None else ()


@dataclass(frozen=True)
class ModelProblem:
    """Why no model is usable, with what the user needs to fix it."""

    kind: str  # "missing" | "invalid" | "error"
    message: str  # the engine's English wording (shown only under "Details")
    details: tuple[str, ...]  # places searched, or the manifest check's problems
    bundle_dir: str | None
    expected_dir: str
    issues: tuple[FileProblem, ...] = ()  # structured problems, worded by the window in the interface language
    precision: str = ""  # the precision that failed to load
    alternatives: tuple[str, ...] = ()  # other precisions of the same bundle that passed their check
    pair_key: str = ""  # the direction that was asked for
    pairs: tuple[str, ...] = ()  # pair keys of the bundles that are installed, so the window can offer another


PREPARING = "prepare"  # the running prepare request's channel: no one's to cancel or wait for (is_busy: False)
CHANNELS = ("window", "popup")  # interactive channels, in priority order; each one is latest-wins
STOPPED = "stopped"  # ordered_failed's message for a request dropped because the worker stopped
CANCELLED = "cancelled"  # ordered_failed's message for a request cancelled with cancel_ordered


@dataclass
class _Request:
    id: int
    text: str
    options: TranslationOptions
    channel: str = "window"
    pair: str | None = None  # a popup request in another installed direction (gui.quick); None: the loaded one


@dataclass(eq=False)  # identity: a request is found in the queue as itself
class _Ordered:
    """An API request: several texts, translated in order, each one a step between interactive requests."""

    id: int
    texts: tuple[str, ...]
    options: TranslationOptions
    stream: bool = False  # report each item's deltas through ordered_progress
    results: list[Translation] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)


@dataclass
class _Running:
    request: _Request
    cancel: threading.Event = field(default_factory=threading.Event)
    superseded: bool = False  # a newer request replaced it: its result is not reported
    review: ReviewRequest | None = None  # set for a review request (channel "review")
    prepare: ReviewRequest | None = None  # set for a prepare request (channel PREPARING)


@dataclass
class _Document:
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
    # bundle loaded beside the window's (`TranslationWorker._translator_of`)
    rerouted: bool = False


class _LoadedTranslator:
    """What a document job translates with: whichever translator the worker holds for its direction when a step runs
    (a reload of the same direction between steps is used at once; the old one is not kept alive by the job)."""

    def __init__(self, worker: TranslationWorker, doc: _Document) -> None:
        self._worker, self._doc = worker, doc

    def translate_segments(
        self, segments: Iterable[str], options: TranslationOptions | None = None, *, cancel: threading.Event | None
    ) -> Iterator[Translation]:
        tr = self._worker._document_translator(self._doc)
        if tr is None:
            raise QiaoError("no translation model is loaded")
        return tr.translate_segments(segments, options, cancel=cancel)  # type: ignore[attr-defined]


def _pair_of(manifest: Any) -> LanguagePair | None:
    """The bundle's languages, from a Manifest or a manifest dict."""
    if isinstance(manifest, dict):
        raw = manifest.get("languages")
        return LanguagePair.from_dict(raw) if isinstance(raw, dict) else None
    pair = getattr(manifest, "pair", None)
    return pair if isinstance(pair, LanguagePair) else None


def _manifest_field(manifest: Any, name: str, default: Any = "") -> Any:
    if manifest is None:
        return default
    if isinstance(manifest, dict):
        return manifest.get(name, default)
    return getattr(manifest, name, default)


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
    _wake = Signal()

    def __init__(
        self,
        factory: TranslatorFactory | None = None,
        locator: Locator | None = None,
        expected_dir: Callable[[str | None], Path] | None = None,  # (pair) -> where a bundle of it belongs
        verifier: Verifier | None = None,
        pair_lister: PairLister | None = None,
        job_factory: DocumentJobFactory | None = None,
    ) -> None:
        super().__init__()
        self._job_factory = job_factory or default_job_factory
        self._documents: deque[_Document] = deque()  # waiting, in order
        self._document: _Document | None = None  # the one started (between or during its steps)
        self._factory = factory or default_factory
        self._locator = locator or default_locator
        self._expected_dir = expected_dir or default_expected_dir
        self._verifier = verifier or default_verifier
        self._pair_lister = pair_lister or default_pair_lister
        self._translator: TranslatorLike | None = None
        self._bundle_dir: Path | None = None
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending_load: tuple[str | None, str, int | None, str | None] | None = None
        self._pending_precision: str | None = None
        self._pending_threads: tuple[int | None] | None = None
        self._pending: dict[str, _Request] = {}  # per channel: the latest request waiting
        self._ordered: deque[_Ordered] = deque()  # API requests, in arrival order (the head may be part-done)
        self._review: ReviewRequest | None = None  # the latest review request waiting
        self._prepare: ReviewRequest | None = None  # the latest prepare request waiting (gui.worker.review)
        self._running: _Running | None = None
        self._pairs_known: tuple[str, ...] = ()  # as found by the last load (a precision switch keeps them)
        self._model_dir: str | None = None  # the last load's --model folder and threads, for `_other`
        self._threads: int | None = None
        self._other: tuple[str, TranslatorLike] | None = None  # the reverse direction, loaded for the popup
        self._stopped = False
        self._wake.connect(self._drain)

    # ---- called from the UI thread -------------------------------------------------------------------------

    def load(self, model_dir: str | None, precision: str, threads: int | None, pair: str | None = None) -> None:
        """(Re)locate and load the bundle for `pair` ("en-zh"); replaces any earlier pending load."""
        with self._lock:
            self._stop_preparing()
            self._pending_load = (model_dir, precision, threads, pair)
            self._pending_precision = None
            self._pending_threads = None
        self._wake.emit()

    def set_precision(self, precision: str) -> None:
        """Switch INT8/FP32 without restarting; a translation in flight restarts with the new precision."""
        with self._lock:
            self._pending_precision = precision
            self._stop_preparing()
            running = self._running
            channel = running.request.channel if running is not None else ""
            if running is not None and channel in CHANNELS and not running.superseded and channel not in self._pending:
                running.superseded = True
                self._pending[running.request.channel] = running.request
                running.cancel.set()
            elif running is not None and running.review is not None and not running.superseded and not self._review:
                running.superseded = True
                self._review = running.review
                running.cancel.set()
        self._wake.emit()

    def set_threads(self, threads: int | None) -> None:
        """Applies after the current translation (the thread count does not change its result)."""
        with self._lock:
            self._pending_threads = (threads,)
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
            request = _Request(next(self._ids), text, options or TranslationOptions(), channel, pair)
            if precision is not None:
                self._pending_precision = precision
            self._pending[channel] = request
            self._stop_preparing()
            running = self._running
            if running is not None and running.request.channel == channel:
                running.superseded = True
                running.cancel.set()
        self._wake.emit()
        return request.id

    def cancel(self, channel: str = "window") -> None:
        """Stop the channel's running request (its partial text is reported) and drop its waiting one."""
        with self._lock:
            self._pending.pop(channel, None)
            if channel == REVIEW:
                self._review = None
            if self._running is not None and self._running.request.channel == channel:
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
            self._prepare = request
            self._stop_preparing()
        self._wake.emit()
        return request.id

    def _stop_preparing(self) -> None:
        """(Lock held) a running prepare request gives the engine up within a step."""
        running = self._running
        if running is not None and running.request.channel == PREPARING:
            running.superseded = True
            running.cancel.set()

    def _queue_review(self, request: ReviewRequest) -> int:
        with self._lock:
            self._review = request
            self._prepare = None  # the click decodes what it needs; a start prepared after it would replace its own
            self._stop_preparing()
            running = self._running
            if running is not None and running.review is not None:
                running.superseded = True
                running.cancel.set()
        self._wake.emit()
        return request.id

    def translate_ordered(
        self, texts: Iterable[str], options: TranslationOptions | None = None, *, stream: bool = False
    ) -> int:
        """Queue an API request behind the earlier ones (FIFO, never superseded); returns the id that
        ordered_progress / ordered_finished / ordered_failed carry. `stream`: report each item's text as it comes."""
        request = _Ordered(next(self._ids), tuple(texts), options or TranslationOptions(), stream)
        with self._lock:
            self._stop_preparing()
            stopped = self._stopped
            if not stopped:
                self._ordered.append(request)
        if stopped:
            self.ordered_failed.emit(request.id, STOPPED)
            return request.id
        self._wake.emit()
        return request.id

    def cancel_ordered(self, request_id: int) -> None:
        """Drop an API request (its client went away or timed out): waiting, it is reported CANCELLED at once;
        running, its current item stops within one decoder step."""
        with self._lock:
            waiting = next((r for r in self._ordered if r.id == request_id), None)
            if waiting is None:
                return
            waiting.cancel.set()
            running = self._running is not None and self._running.request.id == request_id
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
        doc = _Document(
            next(self._ids), Path(path), options or DocumentOptions(), translation or TranslationOptions(), pair
        )
        with self._lock:
            if self._stopped:
                return doc.id
            self._stop_preparing()
            self._documents.append(doc)
        self.document_queued.emit(doc.id, doc.source)
        self._wake.emit()
        return doc.id

    def cancel_document(self, doc_id: int) -> None:
        """A waiting document is dropped at once (reported as cancelled, nothing written); the running one stops
        within its step and its job reports how far it got."""
        with self._lock:
            waiting = next((d for d in self._documents if d.id == doc_id), None)
            if waiting is not None:
                self._documents.remove(waiting)
            elif self._document is not None and self._document.id == doc_id:
                self._document.cancel.set()
        if waiting is not None:
            self.document_finished.emit(doc_id, _nothing_done(waiting, cancelled=True))

    def stop(self) -> None:
        """Before the thread quits: cancel everything and refuse new work."""
        with self._lock:
            self._stopped = True
            self._documents.clear()
            if self._document is not None:
                self._document.cancel.set()
            self._pending.clear()
            self._review = None
            self._prepare = None
            dropped = list(self._ordered)
            self._ordered.clear()
            for request in dropped:
                request.cancel.set()
            self._pending_load = None
            self._pending_precision = None
            self._pending_threads = None
            if self._running is not None:
                self._running.superseded = True
                self._running.cancel.set()
        for request in dropped:  # their callers (the API's threads) wait for an answer
            self.ordered_failed.emit(request.id, STOPPED)

    def is_busy(self, channel: str = "window") -> bool:
        """Whether `channel` has a request running or waiting."""
        with self._lock:
            running = self._running is not None and self._running.request.channel == channel
            return running or channel in self._pending or (channel == REVIEW and self._review is not None)

    # ---- on the worker thread --------------------------------------------------------------------------------

    @Slot()
    def _drain(self) -> None:
        """Run every pending job, configuration first, until nothing is left."""
        while True:
            with self._lock:
                if self._stopped:
                    return
                if self._pending_load is not None:
                    job: Callable[[], None] = self._job_load(self._pending_load)
                    self._pending_load = None
                elif self._pending_precision is not None:
                    job = self._job_precision(self._pending_precision)
                    self._pending_precision = None
                elif self._pending_threads is not None:
                    job = self._job_threads(self._pending_threads[0])
                    self._pending_threads = None
                elif "window" in self._pending or (self._pending and self._review is None):
                    channel = next(c for c in CHANNELS if c in self._pending)
                    running = _Running(self._pending.pop(channel))
                    self._running = running
                    job = self._job_translate(running)
                elif self._review is not None:
                    review, self._review = self._review, None
                    running = _Running(_Request(review.id, review.source, review.options, REVIEW), review=review)
                    self._running = running
                    job = self._job_review(running)
                elif self._prepare is not None:
                    prepare, self._prepare = self._prepare, None
                    request = _Request(prepare.id, prepare.source, prepare.options, PREPARING)
                    running = _Running(request, prepare=prepare)
                    self._running = running
                    job = self._job_prepare(running)
                elif self._ordered:
                    ordered = self._ordered[0]
                    self._running = _Running(_Request(ordered.id, "", ordered.options, "api"), ordered.cancel)
                    job = self._job_ordered_step(ordered)
                elif self._document is not None or self._documents:
                    if self._document is None:
                        self._document = self._documents.popleft()
                    job = self._job_document_step(self._document)
                else:
                    return
            try:
                job()
            finally:
                with self._lock:
                    self._running = None

    def _job_load(self, args: tuple[str | None, str, int | None, str | None]) -> Callable[[], None]:
        model_dir, precision, threads, pair = args
        return lambda: self._load(model_dir, precision, threads, pair)

    def _load(self, model_dir: str | None, precision: str, threads: int | None, pair: str | None = None) -> None:
        """Locate and load; whatever goes wrong, the window hears model_failed (never "Loading…" forever)."""
        self._translator = None
        self._other = None
        self._model_dir, self._threads = model_dir, threads
        self.model_loading.emit("load", precision)
        start = time.perf_counter()
        bundle: Path | None = None
        try:
            expected = str(self._expected_dir(pair))
        except Exception:  # the expected location is only advice; never let it hide the real problem
            expected = ""
        pairs = self._pairs(model_dir)
        try:
            bundle = self._locator(model_dir, pair)
            translator = self._factory(bundle, precision, threads)
            self._translator = translator
            self._bundle_dir = bundle
            info = self._info(bundle, time.perf_counter() - start, switched=False)
        except Exception as exc:  # an unreadable bundle or manifest must not kill the worker thread
            self._translator = None
            problem = self._problem(exc, bundle, expected, precision)
            self.model_failed.emit(replace(problem, pair_key=pair or "", pairs=pairs))
            return
        if info.pair is not None and info.pair.key not in pairs:
            pairs = tuple(sorted({*pairs, info.pair.key}))
        self._pairs_known = pairs
        self.model_ready.emit(replace(info, pairs=pairs))

    def _pairs(self, model_dir: str | None) -> tuple[str, ...]:
        """What else is installed; a store that cannot be read only means no swap is offered."""
        try:
            return tuple(self._pair_lister(model_dir))
        except Exception:
            return ()

    def _problem(self, exc: Exception, bundle: Path | None, expected: str, precision: str) -> ModelProblem:
        if isinstance(exc, ModelNotFoundError):
            return ModelProblem("missing", str(exc), tuple(exc.searched), None, expected, precision=precision)
        if isinstance(exc, BundleError):
            return ModelProblem(
                "invalid",
                str(exc),
                tuple(exc.problems),
                str(exc.bundle_dir),
                expected,
                issues=tuple(exc.issues),
                precision=precision,
                alternatives=self._intact_precisions(bundle, precision),
            )
        return ModelProblem(
            "error",
            f"{type(exc).__name__}: {exc}",
            (),
            str(bundle) if bundle else None,
            expected,
            precision=precision,  # no alternative offered: nothing says the other precision would load
        )

    def _intact_precisions(self, bundle: Path | None, failed: str) -> tuple[str, ...]:
        """The other precisions of this bundle that pass their check, to offer instead of the broken one."""
        if bundle is None:
            return ()
        intact = []
        for other in PRECISIONS:
            if other == failed:
                continue
            try:
                self._verifier(bundle, other)
            except Exception:  # any failure means "not offered"
                continue
            intact.append(other)
        return tuple(intact)

    def _info(self, bundle: Path | None, seconds: float, *, switched: bool) -> ModelInfo:
        tr = self._translator
        assert tr is not None
        manifest = getattr(tr, "manifest", None)
        generation = _manifest_field(manifest, "generation", {}) or {}
        beams = generation.get("num_beams") if isinstance(generation, dict) else None
        pair = _pair_of(manifest)
        return ModelInfo(
            bundle_dir=str(bundle or ""),
            model_id=str(_manifest_field(manifest, "model_id", "")),
            license=str(_manifest_field(manifest, "license", "")),
            attribution=str(_manifest_field(manifest, "attribution", "")),
            precision=tr.precision,
            available_precisions=tuple(tr.available_precisions),
            default_beams=int(beams) if isinstance(beams, int) else None,
            load_seconds=seconds,
            switched=switched,
            pair=pair,
            pairs=self._pairs_known,
        )

    def _job_precision(self, precision: str) -> Callable[[], None]:
        return lambda: self._switch_precision(precision)

    def _switch_precision(self, precision: str) -> None:
        tr = self._translator
        if tr is None or tr.precision == precision:
            return
        self._other = None  # loaded again in the new precision when next needed
        self.model_loading.emit("switch", precision)
        start = time.perf_counter()
        try:
            tr.set_precision(precision)
            info = self._info(self._bundle_dir, time.perf_counter() - start, switched=True)
        except Exception as exc:  # the translator keeps the graphs it had; the window says so
            self.switch_failed.emit(precision, self._problem(exc, self._bundle_dir, "", precision))
            return
        self.model_ready.emit(info)

    def _job_threads(self, threads: int | None) -> Callable[[], None]:
        def run() -> None:
            self._threads = threads
            self._other = None
            if self._translator is None:
                return
            try:
                self._translator.set_threads(threads)
            except Exception as exc:
                self.error.emit(str(exc))

        return run

    def _job_translate(self, running: _Running) -> Callable[[], None]:
        return lambda: self._translate(running)

    def _translator_for(self, request: _Request) -> TranslatorLike | None:
        """The loaded translator, or the one of the request's other installed direction (loaded once and kept)."""
        return self._translator_of(request.pair)

    def _translator_of(self, pair: str | None) -> TranslatorLike | None:
        """The loaded translator when it is `pair`'s (or `pair` is None), else `pair`'s bundle loaded beside it, once
        and kept until the next load, precision or threads change."""
        tr = self._translator
        loaded = _pair_of(getattr(tr, "manifest", None)) if tr is not None else None
        if pair is None or tr is None or loaded is None or loaded.key == pair:
            return tr
        if self._other is None or self._other[0] != pair:
            self._other = None
            bundle = self._locator(self._model_dir, pair)
            self._other = (pair, self._factory(bundle, tr.precision, self._threads))
        return self._other[1]

    def _document_translator(self, doc: _Document) -> TranslatorLike | None:
        """What `doc`'s next step translates with: the loaded translator, or for a document in the other language
        (`rerouted`) its direction's."""
        return self._translator_of(doc.pair) if doc.rerouted else self._translator

    def _translate(self, running: _Running) -> None:
        request = running.request
        try:
            tr = self._translator_for(request)
        except Exception as exc:  # the other direction's bundle cannot load: that request fails, nothing else
            if not running.superseded:
                self.translation_failed.emit(request.id, str(exc))
            return
        if tr is None:
            if not running.superseded:
                self.translation_failed.emit(request.id, NO_MODEL)
            return
        self.translation_started.emit(request.id)
        chunks: list[str] = []
        last_emit = 0.0
        progress = [0, 0]

        def flush() -> None:
            nonlocal last_emit
            if chunks and not running.superseded:
                self.translation_progress.emit(request.id, "".join(chunks), progress[0], progress[1])
            chunks.clear()
            last_emit = time.perf_counter()

        result: Translation | None = None
        try:
            for item in tr.stream(request.text, request.options, cancel=running.cancel):
                if isinstance(item, Translation):
                    result = item
                    continue
                if item.delta:
                    chunks.append(item.delta)
                progress[0], progress[1] = item.sentences_done, item.sentences_total
                if time.perf_counter() - last_emit >= FRAME_S:
                    flush()
            if result is None:
                raise RuntimeError("the translator's stream ended without a result")
        except QiaoError as exc:
            if not running.superseded:
                self.translation_failed.emit(request.id, str(exc))
            return
        except Exception as exc:  # a bug, not the user's doing: the window words it and keeps the detail aside
            if not running.superseded:
                self.translation_failed.emit(request.id, f"{INTERNAL}{type(exc).__name__}: {exc}")
            return
        flush()
        if not running.superseded:
            self.translation_finished.emit(request.id, result)

    def _job_review(self, running: _Running) -> Callable[[], None]:
        return lambda: self._run_review(running)

    def _run_review(self, running: _Running) -> None:
        """Alternatives or one sentence; nothing is reported for a request a newer one (or a restart) replaced."""
        request = running.review
        assert request is not None
        failed = ""
        result: object = None
        try:
            if self._translator is None:
                failed = NO_MODEL
            else:
                result = run_review(self._translator, request, running.cancel, self._review_progress(running))
        except QiaoError as exc:
            failed = str(exc)
        except Exception as exc:  # a bug: the window words it, the worker goes on
            failed = f"{INTERNAL}{type(exc).__name__}: {exc}"
        if running.superseded:
            return
        if running.cancel.is_set():  # whatever the engine did when cut short (returned or raised)
            failed = CANCELLED
        if failed:
            self.review_failed.emit(request.id, failed)
        elif isinstance(result, list):
            self.alternatives_ready.emit(request.id, result)
        else:
            self.sentence_ready.emit(request.id, result)

    def _job_prepare(self, running: _Running) -> Callable[[], None]:
        return lambda: self._run_prepare(running)

    def _run_prepare(self, running: _Running) -> None:
        """Only a speed-up for the next click: whatever goes wrong (cancelled, a problem the click will report
        itself) is dropped."""
        if self._translator is None or running.prepare is None:
            return
        with contextlib.suppress(Exception):
            run_review(self._translator, running.prepare, running.cancel)

    def _review_progress(self, running: _Running) -> Callable[[list], None]:
        """alternatives_progress for `running`: the first list at once (the words the popup waits for), later ones
        at most one a frame; nothing once a newer request replaced it or it was cancelled."""
        request_id = running.request.id
        last_emit: float | None = None

        def report(alternatives: list) -> None:
            nonlocal last_emit
            if running.superseded or running.cancel.is_set():
                return
            now = time.perf_counter()
            if last_emit is None or now - last_emit >= FRAME_S:
                last_emit = now
                self.alternatives_progress.emit(request_id, alternatives)

        return report

    # ---- API requests, on the worker thread ----------------------------------------------------------------------

    def _job_ordered_step(self, request: _Ordered) -> Callable[[], None]:
        return lambda: self._ordered_step(request)

    def _ordered_step(self, request: _Ordered) -> None:
        """Translate the request's next text; report the request when it is done, failed or cancelled."""
        failed = ""
        done = False
        try:
            if request.cancel.is_set():
                failed = CANCELLED
            elif len(request.results) < len(request.texts):
                result = self._ordered_item(request, len(request.results))
                if result.cancelled or request.cancel.is_set():
                    failed = CANCELLED
                else:
                    request.results.append(result)
            done = not failed and len(request.results) == len(request.texts)
        except QiaoError as exc:
            failed = str(exc)
        except Exception as exc:  # a bug: reported to the API's caller, the worker goes on
            failed = f"{INTERNAL}{type(exc).__name__}: {exc}"
        if not (failed or done):
            return
        with self._lock:
            if request not in self._ordered:  # stop() dropped it and has reported it
                return
            self._ordered.remove(request)
        if failed:
            self.ordered_failed.emit(request.id, failed)
        else:
            self.ordered_finished.emit(request.id, list(request.results))

    def _ordered_item(self, request: _Ordered, index: int) -> Translation:
        tr = self._translator
        if tr is None:
            raise QiaoError(NO_MODEL)
        result: Translation | None = None
        chunks: list[str] = []
        last_emit = time.perf_counter()
        for item in tr.stream(request.texts[index], request.options, cancel=request.cancel):
            if isinstance(item, Translation):
                result = item
            elif request.stream and item.delta:
                chunks.append(item.delta)
                if time.perf_counter() - last_emit >= FRAME_S:
                    self.ordered_progress.emit(request.id, index, "".join(chunks))
                    chunks.clear()
                    last_emit = time.perf_counter()
        if chunks:
            self.ordered_progress.emit(request.id, index, "".join(chunks))
        if result is None:
            raise RuntimeError("the translator's stream ended without a result")
        return result

    # ---- documents, on the worker thread -------------------------------------------------------------------------

    def _job_document_step(self, doc: _Document) -> Callable[[], None]:
        return lambda: self._document_step(doc)

    def _document_step(self, doc: _Document) -> None:
        """One bounded step of `doc` (its first one also starts the job); the document ends here when it is done,
        cancelled, failed, or no longer for the loaded direction."""
        try:
            ended = self._advance(doc)
        except QiaoError as exc:  # DocumentError included: the engine's wording, for a person
            ended = True
            self._end_document(doc, failed=str(exc))
        except Exception as exc:  # a bug: the window words it, the detail goes to the log
            ended = True
            self._end_document(doc, failed=f"{INTERNAL}{type(exc).__name__}: {exc}")
        if ended:
            with self._lock:
                if self._document is doc:
                    self._document = None

    def _advance(self, doc: _Document) -> bool:
        """Run the next step; True when the document has ended (and been reported)."""
        if doc.cancel.is_set() and doc.steps is None:
            self._end_document(doc, result=_nothing_done(doc, cancelled=True))
            return True
        if self._translator is None:
            self._end_document(doc, failed=NO_MODEL)
            return True
        if doc.steps is None and doc.pair and not doc.rerouted:
            refused = self._route_document(doc)
            if refused:
                self._end_document(doc, failed=f"{DOC_LANGUAGE}{refused}")
                return True
        tr = self._document_translator(doc)
        loaded = _pair_of(getattr(tr, "manifest", None))
        if tr is None:
            self._end_document(doc, failed=NO_MODEL)
            return True
        if doc.pair and loaded is not None and loaded.key != doc.pair:
            self._end_document(doc, failed=f"{DOC_DIRECTION}{doc.pair}")
            return True
        if doc.steps is None:
            model_id = _manifest_field(getattr(tr, "manifest", None), "model_id", "")
            target = loaded.target.code if loaded is not None else (doc.pair or "en-zh").split("-")[-1]
            doc.job = self._job_factory(
                doc.source,
                doc.options,
                doc.translation,
                target_lang=target,
                model_key=key_of(model_id, loaded.key if loaded else doc.pair or "", tr.precision),
            )
            self.document_started.emit(doc.id, doc.job.output)
            doc.steps = iter(doc.job.steps(_LoadedTranslator(self, doc), doc.cancel))
        try:
            progress = next(doc.steps)
        except StopIteration:
            result = doc.job.result if doc.job is not None else None
            if result is None:
                raise RuntimeError("the document job ended without a result") from None
            self._end_document(doc, result=result)
            return True
        self.document_progress.emit(doc.id, progress)
        return False

    def _route_document(self, doc: _Document) -> str:
        """Send `doc` to the installed direction that reads its text (the same sample and rule as `qiao
        translate-file`); "" when it goes (to its own direction or the other), else DOC_LANGUAGE's detail."""
        from engine.documents.sample import text_sample
        from engine.text.source_language import choose_pair, detect_language

        assert doc.pair is not None
        choice = choose_pair(detect_language(text_sample(doc.source)), self._pairs_known, doc.pair)
        if choice.unsupported is not None:
            return f"unsupported:{choice.unsupported}"
        if choice.missing is not None:
            return f"missing:{choice.missing}"
        if choice.pair != doc.pair:
            doc.pair, doc.rerouted = choice.pair, True
        return ""

    def _end_document(self, doc: _Document, *, result: DocumentResult | None = None, failed: str = "") -> None:
        if doc.steps is not None and hasattr(doc.steps, "close"):
            with contextlib.suppress(Exception):  # a job stopped between steps keeps its progress file, as if cancelled
                doc.steps.close()
        if result is not None and result.error and not result.cancelled:
            failed = result.error
        if failed:
            self.document_failed.emit(doc.id, failed)
        else:
            self.document_finished.emit(doc.id, result)


def _nothing_done(doc: _Document, *, cancelled: bool) -> DocumentResult:
    """The result of a document that never started."""
    return DocumentResult(doc.source, None, "", 0, 0, 0, 0.0, cancelled=cancelled)


SWITCH_INTERVAL_S = 0.001  # the interpreter's thread switch interval while a worker runs (see WorkerThread)


class WorkerThread:
    """A `TranslationWorker` on its own started QThread, and a clean way to stop both."""

    def __init__(
        self,
        factory: TranslatorFactory | None = None,
        locator: Locator | None = None,
        expected_dir: Callable[[str | None], Path] | None = None,  # (pair) -> where a bundle of it belongs
        verifier: Verifier | None = None,
        pair_lister: PairLister | None = None,
        job_factory: DocumentJobFactory | None = None,
    ) -> None:
        # The worker's Python work (sentence results, token spans) holds the GIL for up to the switch interval each
        # time the UI thread asks for it back, and the UI thread asks at every Qt call it makes: at the default
        # 5 ms a finishing 72 000-sentence paste froze the window for 0.6 s; at 1 ms it does not.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self.thread = QThread()
        self.thread.setObjectName("qiao-engine")
        self.worker = TranslationWorker(factory, locator, expected_dir, verifier, pair_lister, job_factory)
        self.worker.moveToThread(self.thread)
        self.thread.start()

    def shutdown(self, timeout_ms: int = 10_000) -> bool:
        """Cancel work, stop the thread; True if it ended within the timeout (a model load cannot be cut short)."""
        self.worker.stop()
        self.thread.quit()
        return self.thread.wait(timeout_ms)
