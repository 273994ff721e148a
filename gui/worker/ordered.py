"""The local API's requests on the worker: served in arrival order, one text at a time between interactive requests,
never replaced by a newer one (only `cancel_ordered` or the worker's stop ends one early)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol

from PySide6.QtCore import SignalInstance

from engine.errors import QiaoError
from engine.options import TranslationOptions
from engine.results import Translation
from gui.worker.jobs import Job, Report
from gui.worker.messages import CANCELLED, FRAME_S, NO_MODEL, STOPPED, internal
from gui.worker.model_load import TranslatorLike

API = "api"  # the running request's channel


@dataclass(eq=False)  # identity: a request is found in the queue as itself
class OrderedRequest:
    """An API request: several texts, translated in order, each one a step between interactive requests."""

    id: int
    texts: tuple[str, ...]
    options: TranslationOptions
    stream: bool = False  # report each item's deltas through ordered_progress
    results: list[Translation] = field(default_factory=list)
    cancel: threading.Event = field(default_factory=threading.Event)


class OrderedSignals(Protocol):
    ordered_progress: SignalInstance  # id, item index, new text
    ordered_finished: SignalInstance  # id, list[Translation]
    ordered_failed: SignalInstance  # id, message


class OrderedSource:
    """A FIFO of API requests; the head stays queued (part-done) until its last text is translated."""

    def __init__(
        self, lock: threading.Lock, translator: Callable[[], TranslatorLike | None], signals: OrderedSignals
    ) -> None:
        self._lock, self._translator, self._signals = lock, translator, signals
        self._queue: deque[OrderedRequest] = deque()

    # ---- the queue (lock held) ---------------------------------------------------------------------------------

    def add(self, request: OrderedRequest) -> None:
        self._queue.append(request)

    def find(self, request_id: int) -> OrderedRequest | None:
        return next((r for r in self._queue if r.id == request_id), None)

    def remove(self, request: OrderedRequest) -> None:
        self._queue.remove(request)

    def __len__(self) -> int:
        return len(self._queue)

    def take(self) -> Job | None:
        if not self._queue:
            return None
        request = self._queue[0]
        return Job(request.id, API, lambda _job: self._step(request), request.cancel)

    def drop(self) -> list[Report]:
        """Every request is cancelled; their callers (the API's threads) wait for an answer: STOPPED."""
        dropped = list(self._queue)
        self._queue.clear()
        for request in dropped:
            request.cancel.set()
        return [partial(self._signals.ordered_failed.emit, r.id, STOPPED) for r in dropped]

    # ---- on the worker thread ------------------------------------------------------------------------------------

    def _step(self, request: OrderedRequest) -> None:
        """Translate the request's next text; report the request when it is done, failed or cancelled."""
        failed = ""
        done = False
        try:
            if request.cancel.is_set():
                failed = CANCELLED
            elif len(request.results) < len(request.texts):
                result = self._item(request, len(request.results))
                if result.cancelled or request.cancel.is_set():
                    failed = CANCELLED
                else:
                    request.results.append(result)
            done = not failed and len(request.results) == len(request.texts)
        except QiaoError as exc:
            failed = str(exc)
        except Exception as exc:  # a bug: reported to the API's caller, the worker goes on
            failed = internal(exc)
        if not (failed or done):
            return
        with self._lock:
            if request not in self._queue:  # stop() dropped it and has reported it
                return
            self._queue.remove(request)
        if failed:
            self._signals.ordered_failed.emit(request.id, failed)
        else:
            self._signals.ordered_finished.emit(request.id, list(request.results))

    def _item(self, request: OrderedRequest, index: int) -> Translation:
        tr = self._translator()
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
                    self._signals.ordered_progress.emit(request.id, index, "".join(chunks))
                    chunks.clear()
                    last_emit = time.perf_counter()
        if chunks:
            self._signals.ordered_progress.emit(request.id, index, "".join(chunks))
        if result is None:
            raise RuntimeError("the translator's stream ended without a result")
        return result
