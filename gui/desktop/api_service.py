"""The local API's engine when the window runs: `WindowTranslationService` implements engine.api's
`TranslationService` by submitting to the window's worker (`translate_ordered`, FIFO) and waiting for its answer.

So the window and the API share one engine and one queue: the window's typing stays latest-wins and goes first,
API requests are served in arrival order between its requests. The waiting happens on the HTTP server's threads,
never on the UI thread (a call from the UI thread is refused: it would freeze the window). The window translates
in its loaded direction only; another direction is a 400 naming the one loaded.

A request whose client closed its connection (engine.api.service.client_gone, set by the HTTP app for each request)
is cancelled on the worker while it waits or runs (ClientGone, logged 499), as `qiao serve` does: the next client is
not made to wait for work nobody will read.

A sentence the model translates as empty comes back as its source text in its place (engine.api.documents
`kept_texts`; a stream ends with `stream_tail`), named for the answer's `warnings`, as `qiao serve` answers.
"""

from __future__ import annotations

import contextvars
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QCoreApplication, Qt

from engine.api import documents
from engine.api.errors import ApiError, Busy, ClientGone, TimedOut, UnsupportedLanguage
from engine.api.languages import PairInfo, detect, resolve
from engine.api.service import GONE_POLL_S, checked_texts, client_gone, text_alternatives
from engine.languages import LanguagePair
from engine.options import TranslationOptions
from gui.worker.scheduler import CANCELLED, INTERNAL, NO_MODEL, STOPPED, TranslationWorker

QUEUE_SIZE = 32  # API requests waiting on the window's worker; more → 503
DEFAULT_TIMEOUT_S = 120.0


@dataclass
class _Waiter:
    done: threading.Event
    deltas: queue.Queue | None = None  # streaming requests: ("delta", text) items
    result: Any = None
    error: str | None = None


class WindowTranslationService:
    """TranslationService through the window's `TranslationWorker`; every method may be called from many threads."""

    def __init__(
        self, worker: TranslationWorker, pair: Callable[[], LanguagePair | None], *, queue_size: int = QUEUE_SIZE
    ) -> None:
        """`pair`: the direction the window has loaded now (None while no model is loaded)."""
        self._worker = worker
        self._pair = pair
        self._queue_size = queue_size
        self._lock = threading.RLock()  # re-entered when a stopped worker answers translate_ordered at once
        self._waiters: dict[int, _Waiter] = {}
        self._early: dict[int, tuple[str, Any]] = {}  # answers that came before their waiter was registered
        self._abandoned: set[int] = set()  # timed out or closed early: their late answers are dropped
        self._closed = False
        direct = Qt.ConnectionType.DirectConnection  # on the worker thread: only sets events, never touches widgets
        worker.ordered_finished.connect(self._finished, direct)
        worker.ordered_failed.connect(self._failed, direct)
        worker.ordered_progress.connect(self._progress, direct)

    # -- the interface ------------------------------------------------------------------------------------------
    def languages(self) -> list[PairInfo]:
        pair = self._pair()
        if pair is None:
            return []
        return [PairInfo(pair.source.code, pair.target.code, pair.source.name, pair.target.name, pair.variant_keys)]

    def detect(self, text: str) -> list[tuple[str, float]]:
        return detect(text)

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
        options = self._options(texts, source, target)
        if options is None or not texts:
            return list(texts)
        if fmt == "html":
            pair = self._pair()
            end = time.monotonic() + (DEFAULT_TIMEOUT_S if timeout is None else timeout)  # one deadline, all steps

            def step(batch: list[str]) -> list[str]:
                left = end - time.monotonic()
                if left <= 0:
                    raise TimedOut("the request ran out of time between two steps")
                return documents.kept_texts(batch, self._run(batch, options, left))

            # the target's code, as a page's <html lang> is set to (qiao serve passes the same)
            return documents.translate_html(texts, step, pair.target.code if pair else target)
        if fmt != "text":
            raise ApiError(f"{fmt} format is not supported")
        # a sentence the model translated as empty is put back as it was, and named for the answer's warnings
        return documents.kept_texts(texts, self._run(texts, options, timeout))

    def translate_nbest(
        self, texts: Sequence[str], source: str, target: str, count: int, *, timeout: float | None = None
    ) -> list[tuple[str, list[str]]]:
        texts = checked_texts(texts)
        options = self._options(texts, source, target)
        if options is None or not texts:
            return [(t, []) for t in texts]
        done = self._run(texts, options.replace(alternatives=count), timeout)
        kept = documents.kept_texts(texts, done)
        return [(text, text_alternatives(r, count)) for text, r in zip(kept, done, strict=True)]

    def stream(self, text: str, source: str, target: str, *, timeout: float | None = None) -> Iterator[str]:
        (text,) = checked_texts([text])
        options = self._options([text], source, target)
        if options is None:
            return iter([text])
        waiter = _Waiter(threading.Event(), queue.Queue())
        rid = self._submit([text], options, waiter, stream=True)
        # the deltas are read after the app's call has returned (the server iterates the body), outside the request's
        # watch: this request's context is kept to ask it whether the client is still there
        gone = contextvars.copy_context().run
        return self._deltas(rid, text, waiter, timeout, lambda: gone(client_gone))

    def close(self) -> None:
        with self._lock:
            self._closed = True
            ids = list(self._waiters)
        for rid in ids:
            self._worker.cancel_ordered(rid)

    # -- submitting and waiting ---------------------------------------------------------------------------------
    def _options(self, texts: list[str], source: str, target: str) -> TranslationOptions | None:
        """The options for the window's loaded direction (engine.api.languages.resolve, as `qiao serve` answers);
        None when source and target are the same language."""
        pair = self._pair()
        if pair is None:
            raise Busy("Qiao's window has no translation model loaded yet; try again shortly")
        loaded = PairInfo(pair.source.code, pair.target.code, pair.source.name, pair.target.name, pair.variant_keys)
        try:
            direction = resolve([loaded], texts, source, target)
        except UnsupportedLanguage as exc:
            raise UnsupportedLanguage(f"{exc} — the Qiao window translates {loaded.key}") from None
        if direction.pair is None:
            return None
        return TranslationOptions(variant=direction.variant)

    def _submit(self, texts: list[str], options: TranslationOptions, waiter: _Waiter, *, stream: bool) -> int:
        if QCoreApplication.instance() is not None and threading.current_thread() is threading.main_thread():
            raise RuntimeError("WindowTranslationService waits for the engine: call it from a server thread")
        with self._lock:
            if self._closed:
                raise Busy("Qiao's API is shutting down")
            if len(self._waiters) >= self._queue_size:
                raise Busy(f"Qiao is busy ({self._queue_size} requests are waiting); try again shortly")
            rid = self._worker.translate_ordered(texts, options, stream=stream)
            self._waiters[rid] = waiter
            early = self._early.pop(rid, None)
        if early is not None:
            self._deliver(rid, *early)
        return rid

    def _run(self, texts: list[str], options: TranslationOptions, timeout: float | None) -> list[Any]:
        """The worker's Translations of `texts`; TimedOut (the request cancelled on the worker) past `timeout`,
        ClientGone (cancelled too) once the request's client has closed its connection."""
        waiter = _Waiter(threading.Event())
        rid = self._submit(list(texts), options, waiter, stream=False)
        wait = DEFAULT_TIMEOUT_S if timeout is None else timeout
        end = time.monotonic() + wait
        while not waiter.done.wait(min(GONE_POLL_S, max(0.0, end - time.monotonic()))):
            if client_gone():
                self._abandon(rid)  # waiting: dropped at once; running: stops within a decoder step
                raise ClientGone("the client closed its connection; its request was cancelled")
            if time.monotonic() >= end:
                self._abandon(rid)
                raise TimedOut(f"the translation did not finish within {wait:g} s; it was cancelled")
        self._raise(waiter)
        return list(waiter.result)

    def _deltas(
        self, rid: int, text: str, waiter: _Waiter, timeout: float | None, gone: Callable[[], bool]
    ) -> Iterator[str]:
        """The stream's deltas, then the sentences the model translated as empty put back (documents.stream_tail:
        at the end as a last delta, before it as the `whole` text the app's `done` gives)."""
        wait = DEFAULT_TIMEOUT_S if timeout is None else timeout
        end = time.monotonic() + wait  # the whole stream, not each delta
        assert waiter.deltas is not None
        try:
            while True:
                try:
                    kind, value = waiter.deltas.get(timeout=min(GONE_POLL_S, max(0.0, end - time.monotonic())))
                except queue.Empty:
                    if gone():
                        raise ClientGone("the client closed its connection; its request was cancelled") from None
                    if time.monotonic() >= end:
                        raise TimedOut(f"the translation did not finish within {wait:g} s") from None
                    continue
                if kind == "end":
                    break
                yield value
            self._raise(waiter)
            (translation,) = waiter.result  # the worker's Translation of the one text
            tail = documents.stream_tail(text, translation)
            if tail is not None:
                yield tail
        finally:
            if not waiter.done.is_set():
                self._abandon(rid)  # the client went away: the decoding stops

    def _abandon(self, rid: int) -> None:
        with self._lock:
            if self._waiters.pop(rid, None) is not None:
                self._abandoned.add(rid)
        self._worker.cancel_ordered(rid)

    @staticmethod
    def _raise(waiter: _Waiter) -> None:
        message = waiter.error
        if message is None:
            return
        if message == NO_MODEL:
            raise Busy("Qiao's window has no translation model loaded; try again shortly")
        if message in (CANCELLED, STOPPED):
            raise Busy("the translation was cancelled (Qiao is closing or busy); try again shortly")
        if message.startswith(INTERNAL):
            raise ApiError("Qiao's engine failed on this request", status=500)
        raise ApiError(message)

    # -- on the worker thread (direct connections) --------------------------------------------------------------
    def _finished(self, rid: int, results: object) -> None:
        self._deliver(rid, "finished", results)

    def _failed(self, rid: int, message: str) -> None:
        self._deliver(rid, "failed", message)

    def _progress(self, rid: int, index: int, text: str) -> None:
        with self._lock:
            waiter = self._waiters.get(rid)
        if waiter is not None and waiter.deltas is not None:
            waiter.deltas.put(("delta", text))

    def _deliver(self, rid: int, kind: str, value: Any) -> None:
        with self._lock:
            waiter = self._waiters.pop(rid, None)
            if waiter is None:
                if rid in self._abandoned:
                    self._abandoned.discard(rid)
                elif not self._closed and len(self._early) < 4 * self._queue_size:
                    self._early[rid] = (kind, value)  # translate_ordered returned after the worker answered
                return
        if kind == "finished":
            waiter.result = value
        else:
            waiter.error = str(value)
        waiter.done.set()
        if waiter.deltas is not None:
            waiter.deltas.put(("end", None))
