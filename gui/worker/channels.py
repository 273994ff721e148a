"""The interactive channels, "window" and "popup": each one a job source with one slot, the latest request wins
(a newer request on the same channel cancels the running one; the scheduler does that). A request streams its
translation, coalesced on the worker thread to at most one signal a frame."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from PySide6.QtCore import SignalInstance

from engine.errors import QiaoError
from engine.options import TranslationOptions
from engine.results import Translation
from gui.worker.jobs import Job, LatestWins
from gui.worker.messages import FRAME_S, NO_MODEL, internal
from gui.worker.model_load import TranslatorLike

CHANNELS = ("window", "popup")  # interactive channels, in priority order; each one is latest-wins


@dataclass
class ChannelRequest:
    """An interactive request (window or popup)."""

    id: int
    text: str
    options: TranslationOptions
    pair: str | None = None  # a popup request in another installed direction (gui.quick); None: the loaded one


class TranslationSignals(Protocol):
    translation_started: SignalInstance
    translation_progress: SignalInstance
    translation_finished: SignalInstance
    translation_failed: SignalInstance


class ChannelSource(LatestWins[ChannelRequest]):
    """One interactive channel: the latest request wins; it streams its translation, coalesced to a frame."""

    def __init__(
        self, name: str, translator_of: Callable[[str | None], TranslatorLike | None], signals: TranslationSignals
    ):
        super().__init__()
        self.name, self._translator_of, self._signals = name, translator_of, signals

    def job(self, request: ChannelRequest) -> Job:
        return Job(
            request.id, self.name, lambda job: self._translate(job, request), restart=lambda: self.put_back(request)
        )

    def _translate(self, job: Job, request: ChannelRequest) -> None:
        signals = self._signals
        try:  # the loaded translator, or the one of the request's other installed direction (loaded once and kept)
            tr = self._translator_of(request.pair)
        except Exception as exc:  # the other direction's bundle cannot load: that request fails, nothing else
            if not job.superseded:
                signals.translation_failed.emit(request.id, str(exc))
            return
        if tr is None:
            if not job.superseded:
                signals.translation_failed.emit(request.id, NO_MODEL)
            return
        signals.translation_started.emit(request.id)
        chunks: list[str] = []
        last_emit = 0.0
        progress = [0, 0]

        def flush() -> None:
            nonlocal last_emit
            if chunks and not job.superseded:
                signals.translation_progress.emit(request.id, "".join(chunks), progress[0], progress[1])
            chunks.clear()
            last_emit = time.perf_counter()

        result: Translation | None = None
        try:
            for item in tr.stream(request.text, request.options, cancel=job.cancel):
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
            if not job.superseded:
                signals.translation_failed.emit(request.id, str(exc))
            return
        except Exception as exc:  # a bug, not the user's doing: the window words it and keeps the detail aside
            if not job.superseded:
                signals.translation_failed.emit(request.id, internal(exc))
            return
        flush()
        if not job.superseded:
            signals.translation_finished.emit(request.id, result)
