"""The engine behind the API: one Translator per pair on ONE worker thread, requests served in arrival order.

`TranslationService` is the interface the HTTP app needs; `EngineService` implements it for `qiao serve` (headless),
and the window implements it through its own worker (gui/desktop/api_service.py), so the API and the window share one
engine there. Requests wait in a bounded FIFO queue: a full queue, or a request that waited past its timeout, is
`Busy` (503, Retry-After) rather than an unbounded backlog. Switching pairs loads that bundle on the worker thread;
at most MAX_LOADED Translators are kept (the least recently used is dropped). A direction is translated by the model
chosen for it (engine.store.choice), except a script that model cannot write and another installed one can
(engine.api.languages.resolve): that model is loaded for it, as a pair of its own.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.api import documents
from engine.api.errors import ApiError, Busy, ClientGone, TimedOut
from engine.api.languages import PairInfo, detect, resolve
from engine.config import EngineConfig
from engine.errors import InputError, QiaoError
from engine.options import TranslationOptions
from engine.results import SentenceResult, StreamEvent, Translation
from engine.text.punctuation import has_words

log = logging.getLogger("qiao.api")

FORMATS = ("text", "html")
QUEUE_SIZE = 32  # requests waiting for the engine; more → 503
MAX_LOADED = 2  # Translators kept loaded (one per pair)
DEFAULT_TIMEOUT_S = 120.0  # from entering the queue to the last translation, when the caller gives no timeout
GONE_POLL_S = 0.25  # how often a waiting request looks whether its client is still there

# Whether the client of the request this thread serves has gone (waitress's `waitress.client_disconnected`), set by
# the HTTP app around each request (`watching`): a request its client gave up on is stopped, not run to its limit.
_client_gone: ContextVar[Callable[[], bool] | None] = ContextVar("qiao_api_client_gone", default=None)


@contextlib.contextmanager
def watching(gone: Callable[[], bool] | None) -> Iterator[None]:
    """Within it, this thread's service calls stop their job (ClientGone) once `gone()` says the client left."""
    token = _client_gone.set(gone)
    try:
        yield
    finally:
        _client_gone.reset(token)


def client_gone() -> bool:
    """The current request's client has gone (False when nothing watches it, or the check itself fails)."""
    gone = _client_gone.get()
    if gone is None:
        return False
    try:
        return bool(gone())
    except Exception:  # a check that breaks says nothing about the client
        return False


class TranslationService(Protocol):
    """What the HTTP app asks of an engine. Every method may be called from many server threads at once."""

    def languages(self) -> list[PairInfo]:
        """The installed directions."""
        ...

    def translate(
        self,
        texts: Sequence[str],
        source: str,
        target: str,
        *,
        alternatives: int = 0,
        fmt: str = "text",
        timeout: float | None = None,
    ) -> list[str]:
        """One translation per text, in order, translated together. `source` may be "auto". `alternatives` is
        accepted for LibreTranslate's API (`translate_nbest` returns them). `timeout`: seconds for the whole call
        (queue and translation). ApiError (400 unsupported pair or bad input, 503 Busy while still queued, 504
        TimedOut once translating, the engine stopped) for a refusal."""
        ...

    def translate_nbest(
        self, texts: Sequence[str], source: str, target: str, count: int, *, timeout: float | None = None
    ) -> list[tuple[str, list[str]]]:
        """Each text's translation and up to `count` other whole translations of it (the beam's n-best, distinct,
        the translation itself left out), as LibreTranslate's `alternatives`."""
        ...

    def stream(self, text: str, source: str, target: str, *, timeout: float | None = None) -> Iterator[str]:
        """The translation's deltas as they are decoded (their concatenation is the translation). Refusals are
        raised by the call itself, before any delta; closing the iterator early cancels the decoding."""
        ...

    def detect(self, text: str) -> list[tuple[str, float]]:
        """[(language, confidence 0…100)], the likelier first."""
        ...

    def close(self) -> None:
        """Stop taking requests and release the engine."""
        ...


def installed_pairs(model: str | None = None) -> list[PairInfo]:
    """Every usable installed direction, once each, in search order (engine.store.installed), or just `model`'s;
    each described by the model that translates it (the choice, else the best: engine.store.choice), with the
    scripts only another installed model of the direction writes (`elsewhere`).

    `model` (--model) or QIAO_MODEL_DIR is final (engine.store.locate): only that bundle, and no bundle there, or an
    unusable one, is the error (ModelNotFoundError / ModelStoreError), never another installed model."""
    from engine.languages import written_variants
    from engine.paths import model_dir_override
    from engine.store.choice import by_quality, usable_for
    from engine.store.installed import ModelStoreError, chosen_model, describe, find_bundle, installed_models

    found: dict[str, PairInfo] = {}
    if model or model_dir_override():
        chosen = describe(find_bundle(model), "explicit" if model else "env")
        if chosen.problem is not None or chosen.pair is None:
            raise ModelStoreError(f"model bundle {chosen.path} cannot be used: {chosen.problem}")
        models = [chosen]
    else:
        models = installed_models()
    for m in models:
        if m.problem is None and m.pair is not None and m.pair.key not in found:
            key = m.pair.key
            used = chosen_model(models, key) or m
            p = used.pair
            assert p is not None
            elsewhere: dict[str, str] = {}
            for other in by_quality(usable_for(models, key)):
                assert other.pair is not None
                for variant in written_variants(other.pair):
                    if variant not in written_variants(p):
                        elsewhere.setdefault(variant, other.name)
            found[key] = PairInfo(
                p.source.code,
                p.target.code,
                p.source.name,
                p.target.name,
                p.variant_keys,
                model=used.name,
                elsewhere=tuple(elsewhere.items()),
            )
    return list(found.values())


@dataclass
class _Job:
    """One request on the worker: `run(translator, cancel)` with the pair's Translator; the caller waits on `done`."""

    pair: str
    run: Callable[[Any, threading.Event], Any]
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    started: bool = False  # the worker took it (a timeout then is TimedOut, before it Busy)
    result: Any = None
    error: BaseException | None = None


class EngineService:
    """TranslationService on this process's own engine (`qiao serve`)."""

    def __init__(
        self,
        model: str | None = None,
        config: EngineConfig | None = None,
        *,
        queue_size: int = QUEUE_SIZE,
        max_loaded: int = MAX_LOADED,
        pairs: list[PairInfo] | None = None,
        loader: Callable[[str], Any] | None = None,
    ) -> None:
        """`pairs` and `loader` (pair key → Translator) replace the model search, for tests."""
        self._model = model
        self._config = config or EngineConfig()
        self._pairs = pairs if pairs is not None else installed_pairs(model)
        self._loader = loader or self._load
        self._max_loaded = max(1, max_loaded)
        self._loaded: OrderedDict[str, Any] = OrderedDict()
        self._queue: queue.Queue[_Job | None] = queue.Queue(maxsize=max(1, queue_size))
        self._closed = threading.Event()
        self._current: _Job | None = None  # the job on the worker now
        self._thread = threading.Thread(target=self._work, name="qiao-api-engine", daemon=True)
        self._thread.start()

    # -- the interface ------------------------------------------------------------------------------------------
    def languages(self) -> list[PairInfo]:
        return list(self._pairs)

    def detect(self, text: str) -> list[tuple[str, float]]:
        return detect(text)

    def preload(self, pair: str, timeout: float | None = None) -> None:
        """Load `pair`'s model now (on the worker), so the first request is fast and a broken bundle is said at
        start; raises what loading raised."""
        self._call(pair, lambda translator, cancel: None, timeout)

    def translate(
        self,
        texts: Sequence[str],
        source: str,
        target: str,
        *,
        alternatives: int = 0,
        fmt: str = "text",
        timeout: float | None = None,
    ) -> list[str]:
        texts = checked_texts(texts)
        if fmt not in FORMATS:
            raise ApiError(f"{fmt} format is not supported")
        direction = resolve(self._pairs, texts, source, target)
        if direction.pair is None or not texts:
            return list(texts)
        options = TranslationOptions(variant=direction.variant)
        key = direction.job_key
        if fmt == "html":
            # each step of the fragments' texts is its own job, so other requests run in between; one deadline
            end = time.monotonic() + (DEFAULT_TIMEOUT_S if timeout is None else timeout)

            def step(batch: list[str]) -> list[str]:
                return self._call(key, lambda tr, cancel: _segments(tr, batch, options, cancel), _left(end))

            return documents.translate_html(texts, step, direction.pair.target)
        return self._call(key, lambda tr, cancel: _segments(tr, list(texts), options, cancel), timeout)

    def translate_nbest(
        self, texts: Sequence[str], source: str, target: str, count: int, *, timeout: float | None = None
    ) -> list[tuple[str, list[str]]]:
        texts = checked_texts(texts)
        direction = resolve(self._pairs, texts, source, target)
        if direction.pair is None or not texts:
            return [(t, []) for t in texts]
        options = TranslationOptions(variant=direction.variant, alternatives=count)
        done = self._call(direction.job_key, lambda tr, cancel: _translations(tr, texts, options, cancel), timeout)
        kept = documents.kept_texts(texts, done)
        return [(text, text_alternatives(t, count)) for text, t in zip(kept, done, strict=True)]

    def stream(self, text: str, source: str, target: str, *, timeout: float | None = None) -> Iterator[str]:
        (text,) = checked_texts([text])
        direction = resolve(self._pairs, [text], source, target)
        if direction.pair is None:
            return iter([text])
        options = TranslationOptions(variant=direction.variant)
        deltas: queue.Queue[tuple[str, Any]] = queue.Queue()

        def run(translator, cancel: threading.Event) -> None:
            try:
                for item in translator.stream(text, options, cancel=cancel):
                    if isinstance(item, StreamEvent) and item.delta:
                        deltas.put(("delta", item.delta))
                    elif isinstance(item, Translation) and not item.cancelled:  # sentences translated as empty
                        tail = documents.stream_tail(text, item)
                        if tail is not None:
                            deltas.put(("delta", tail))
            finally:  # a failure ends the stream at once; the reader raises the job's error
                deltas.put(("end", None))

        job = _Job(direction.job_key, run)
        self._submit(job)
        return self._deltas(job, deltas, timeout)

    def close(self) -> None:
        if self._closed.is_set():
            return
        self._closed.set()
        while True:  # the waiting requests are answered 503, not left hanging
            try:
                job = self._queue.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job.error = Busy("Qiao's API is shutting down")
                job.done.set()
        with contextlib.suppress(queue.Full):
            self._queue.put(None, timeout=5)
        self._thread.join(timeout=10)
        self._loaded.clear()

    # -- the queue and the worker ------------------------------------------------------------------------------
    def _submit(self, job: _Job) -> None:
        if self._closed.is_set():
            raise Busy("Qiao's API is shutting down")
        try:
            self._queue.put_nowait(job)
        except queue.Full:
            raise Busy(f"Qiao is busy ({self._queue.maxsize} requests are waiting); try again shortly") from None

    def _call(self, pair: str, run: Callable[[Any, threading.Event], Any], timeout: float | None) -> Any:
        job = _Job(pair, run)
        self._submit(job)
        wait = DEFAULT_TIMEOUT_S if timeout is None else timeout
        if not _wait(job, wait):
            job.cancel.set()  # not started: skipped; running: stops within a decoder step
            if job.started:
                raise TimedOut(f"the translation did not finish within {wait:g} s; the engine was stopped")
            raise Busy(f"the request waited {wait:g} s for the engine (Qiao is busy); try again shortly")
        if job.error is not None:
            raise job.error
        return job.result

    def _deltas(self, job: _Job, deltas: queue.Queue, timeout: float | None) -> Iterator[str]:
        wait = DEFAULT_TIMEOUT_S if timeout is None else timeout
        end = time.monotonic() + wait  # the whole stream, not each delta
        try:
            while True:
                try:
                    kind, value = deltas.get(timeout=max(0.0, end - time.monotonic()))
                except queue.Empty:
                    if job.started:
                        raise TimedOut(f"the translation did not finish within {wait:g} s") from None
                    raise Busy(f"the request waited {wait:g} s for the engine (Qiao is busy)") from None
                if kind == "end":
                    break
                yield value
            job.done.wait(max(0.0, end - time.monotonic()))
            if job.error is not None:
                raise job.error
        finally:
            job.cancel.set()  # a client that went away stops the decoding

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            if job.cancel.is_set() or self._closed.is_set():
                if job.error is None and self._closed.is_set():
                    job.error = Busy("Qiao's API is shutting down")
                job.done.set()
                continue
            self._current = job
            job.started = True
            try:
                job.result = job.run(self._translator(job.pair), job.cancel)
            except BaseException as exc:  # handed to the waiting request; the worker goes on
                job.error = exc
                if not isinstance(exc, QiaoError):
                    log.error("engine error on the worker: %s", type(exc).__name__)
            finally:
                self._current = None
                job.done.set()

    def _translator(self, pair: str) -> Any:
        translator = self._loaded.get(pair)
        if translator is not None:
            self._loaded.move_to_end(pair)
            return translator
        while len(self._loaded) >= self._max_loaded:
            self._loaded.popitem(last=False)  # its sessions are released with it
        translator = self._loader(pair)
        self._loaded[pair] = translator
        return translator

    def _load(self, pair: str) -> Any:
        """The Translator for a job key: a pair key ("en-zh": its chosen model, or --model), or a pair key and the
        installed model that writes the script asked for ("en-zh/opus-mt-en-zh")."""
        from engine.pipeline.translator import Translator
        from engine.store.installed import find_bundle

        key, _, name = pair.partition("/")
        log.info("loading the %s model%s", key, f" {name}" if name else "")
        return Translator(find_bundle(name or self._model, pair=key), self._config)


def checked_texts(texts: object) -> list[str]:
    """`texts` as a list of strings, or the ApiError (400) LibreTranslate answers for anything else."""
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise ApiError("texts must be a list of strings")
    if not all(isinstance(t, str) for t in texts):
        raise ApiError("Invalid request: q must be a string or a list of strings")
    return list(texts)


def _wait(job: _Job, wait: float) -> bool:
    """Wait up to `wait` s for `job`; True when done. A client that went away meanwhile cancels it (not started:
    skipped; running: stopped within a decoder step) and raises ClientGone."""
    watched = _client_gone.get() is not None
    end = time.monotonic() + wait
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return job.done.is_set()
        if job.done.wait(min(left, GONE_POLL_S) if watched else left):
            return True
        if watched and client_gone():
            job.cancel.set()
            raise ClientGone("the client closed its connection; its request was stopped")


def _left(end: float) -> float:
    """Seconds left before `end`; TimedOut once none are."""
    left = end - time.monotonic()
    if left <= 0:
        raise TimedOut("the request ran out of time between two steps")
    return left


def text_alternatives(translation: Translation, count: int) -> list[str]:
    """Up to `count` whole-text alternatives of `translation`: the k-th puts each sentence's k-th n-best
    alternative in that sentence's place (a sentence with fewer keeps its best); distinct, the translation itself
    and empty texts left out (LibreTranslate's filter_unique). A sentence with words whose text there is empty is
    its source text, as the translation itself is given (documents.kept_texts)."""
    rows = sorted(translation.sentences, key=lambda s: s.target_span)
    out: list[str] = []
    seen = {_composed(translation.text, rows, -1), ""}
    for k in range(count):
        if not any(len(s.alternatives) > k for s in rows):
            break
        candidate = _composed(translation.text, rows, k)
        if candidate not in seen:
            seen.add(candidate)
            out.append(candidate)
    return out


def _composed(text: str, rows: list[SentenceResult], k: int) -> str:
    """`text` with each sentence's k-th alternative in its place (its own text for k = -1 or when it has fewer), a
    sentence with words left empty there given as its source."""
    parts, at = [], 0
    for s in rows:
        start, end = s.target_span
        if start < at:  # the parts of one long sentence share a span: take it once
            continue
        parts.append(text[at:start])
        piece = s.alternatives[k].text if 0 <= k < len(s.alternatives) else text[start:end]
        if not piece.strip() and has_words(s.source):
            piece = s.source.strip()
        parts.append(piece)
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _translations(
    translator, texts: list[str], options: TranslationOptions, cancel: threading.Event
) -> list[Translation]:
    out: list[Translation] = []
    for result in translator.translate_segments(texts, options, cancel=cancel):
        if not isinstance(result, Translation):
            continue
        if result.cancelled:
            raise TimedOut("the translation was stopped (it took too long)")
        if result.error is not None:
            raise InputError(result.error)
        out.append(result)
    if len(out) != len(texts):
        raise ApiError("the engine gave fewer translations than texts", status=500)
    return out


def _segments(translator, texts: list[str], options: TranslationOptions, cancel: threading.Event) -> list[str]:
    """Each text's translation, a sentence the model translated as empty kept as it was (documents.kept_texts)."""
    return documents.kept_texts(texts, _translations(translator, texts, options, cancel))
