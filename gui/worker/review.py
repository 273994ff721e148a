"""The worker's "review" requests (alternatives for one word, one sentence re-decoded) and their job sources.

One slot, latest wins: the popup only ever shows the answer to the user's last click, so a newer review request
replaces the waiting one and cancels the running one (the engine's `cancel` event, one decoder step). They run just
below the window's own translation and above the popup, the API and documents: the user is looking at the window.

A `prepare` request (the pointer rests on a sentence: decode its start so a click there finds its words at once) is
no part of that slot: it waits in its own, runs only when nothing interactive waits, is stopped by any other request
and never reports anything (a speed-up only; the click itself reports any problem).

A sentence re-run for more n-best entries ("More translations…") is a plain `sentence` request whose options ask for
them (`more_translations_options`); no separate kind is needed.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import SignalInstance

from engine.errors import QiaoError
from engine.options import TranslationOptions
from engine.results import Alternative
from gui.worker.jobs import Job, LatestWins
from gui.worker.messages import CANCELLED, FRAME_S, NO_MODEL, internal

ALTERNATIVES = "alternatives"  # Translator.alternatives: other words at one position, the rest re-decoded
SENTENCE = "sentence"  # Translator.translate_sentence: one sentence, its start forced to the given tokens
PREPARE = "prepare"  # Translator.prepare_alternatives: a sentence's start decoded before a click (nothing reported)
REVIEW = "review"  # the channel name (is_busy / cancel)
PREPARING = "prepare"  # the running prepare request's channel: no one's to cancel or wait for (is_busy: False)
MORE_ALTERNATIVES = 4  # n-best entries asked for by "More translations…"
MORE_BEAMS = 5  # at least this many beams then (n-best comes from the beam)


@dataclass(frozen=True)
class ReviewRequest:
    """What one review request asks of the engine."""

    id: int
    kind: str  # ALTERNATIVES | SENTENCE
    source: str
    options: TranslationOptions
    tokens: tuple[int, ...] = ()  # ALTERNATIVES: the sentence's current tokens; SENTENCE: the forced prefix
    position: int = 0  # ALTERNATIVES only
    k: int = 5  # ALTERNATIVES only


def alternatives_request(
    request_id: int, source: str, tokens: Sequence[int], position: int, options: TranslationOptions | None, k: int
) -> ReviewRequest:
    if position < 0 or position >= len(tokens):
        raise ValueError(f"position {position} is outside the sentence's {len(tokens)} tokens")
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    return ReviewRequest(request_id, ALTERNATIVES, source, options or TranslationOptions(), tuple(tokens), position, k)


def sentence_request(
    request_id: int, source: str, options: TranslationOptions | None, prefix_tokens: Sequence[int]
) -> ReviewRequest:
    return ReviewRequest(request_id, SENTENCE, source, options or TranslationOptions(), tuple(prefix_tokens))


def prepare_request(
    request_id: int, source: str, tokens: Sequence[int], options: TranslationOptions | None
) -> ReviewRequest:
    if not tokens:
        raise ValueError("a sentence without tokens has no alternatives to prepare")
    return ReviewRequest(request_id, PREPARE, source, options or TranslationOptions(), tuple(tokens))


def run_review(
    translator: Any,
    request: ReviewRequest,
    cancel: threading.Event,
    on_progress: Callable[[list[Alternative]], None] | None = None,
) -> object:
    """Ask the engine (on the worker thread): a list[Alternative] or a SentenceResult.

    With `on_progress`, alternatives come from `Translator.iter_alternatives` (when the translator has it): every
    list still decoding a rest (an entry not `complete`: first the bare candidate words) goes to `on_progress`,
    and the final list is returned, as `Translator.alternatives` would have."""
    if request.kind == ALTERNATIVES:
        args = (request.source, request.tokens, request.position, request.options)
        stream = getattr(translator, "iter_alternatives", None)
        if on_progress is None or stream is None:
            return list(translator.alternatives(*args, k=request.k, cancel=cancel))
        steps = stream(*args, k=request.k, cancel=cancel)
        last: list[Alternative] = []
        try:
            for found in steps:
                last = list(found)
                if not all(a.complete for a in last):
                    on_progress(last)
        finally:
            steps.close()
        return last
    if request.kind == PREPARE:
        prepare = getattr(translator, "prepare_alternatives", None)
        if prepare is not None:
            prepare(request.source, request.tokens, request.options, cancel=cancel)
        return None
    return translator.translate_sentence(request.source, request.options, prefix=request.tokens, cancel=cancel)


def more_translations_options(options: TranslationOptions, default_beams: int | None) -> TranslationOptions:
    """The options of a sentence re-run that yields n-best entries when the shown result has none."""
    beams = options.beams or default_beams or 1
    return options.replace(alternatives=MORE_ALTERNATIVES, beams=max(beams, MORE_BEAMS))


class ReviewSignals(Protocol):
    alternatives_progress: SignalInstance  # id, list[Alternative] (some still decoding their rest)
    alternatives_ready: SignalInstance  # id, list[Alternative]
    sentence_ready: SignalInstance  # id, SentenceResult
    review_failed: SignalInstance  # id, message


class ReviewSource(LatestWins[ReviewRequest]):
    """The "review" channel: alternatives or one sentence; nothing is reported for a request a newer one (or a
    restart) replaced."""

    def __init__(self, translator: Callable[[], Any], signals: ReviewSignals) -> None:
        super().__init__()
        self._translator, self._signals = translator, signals

    def job(self, request: ReviewRequest) -> Job:
        return Job(request.id, REVIEW, lambda job: self._run(job, request), restart=lambda: self.put_back(request))

    def _run(self, job: Job, request: ReviewRequest) -> None:
        failed = ""
        result: object = None
        try:
            translator = self._translator()
            if translator is None:
                failed = NO_MODEL
            else:
                result = run_review(translator, request, job.cancel, self._progress(job))
        except QiaoError as exc:
            failed = str(exc)
        except Exception as exc:  # a bug: the window words it, the worker goes on
            failed = internal(exc)
        if job.superseded:
            return
        if job.cancel.is_set():  # whatever the engine did when cut short (returned or raised)
            failed = CANCELLED
        if failed:
            self._signals.review_failed.emit(request.id, failed)
        elif isinstance(result, list):
            self._signals.alternatives_ready.emit(request.id, result)
        else:
            self._signals.sentence_ready.emit(request.id, result)

    def _progress(self, job: Job) -> Callable[[list], None]:
        """alternatives_progress for `job`: the first list at once (the words the popup waits for), later ones at
        most one a frame; nothing once a newer request replaced it or it was cancelled."""
        last_emit: float | None = None

        def report(alternatives: list) -> None:
            nonlocal last_emit
            if job.superseded or job.cancel.is_set():
                return
            now = time.perf_counter()
            if last_emit is None or now - last_emit >= FRAME_S:
                last_emit = now
                self._signals.alternatives_progress.emit(job.id, alternatives)

        return report


class PrepareSource(LatestWins[ReviewRequest]):
    """A sentence's start decoded before a click: only a speed-up, so whatever goes wrong (cancelled, a problem the
    click will report itself) is dropped."""

    def __init__(self, translator: Callable[[], Any]) -> None:
        super().__init__()
        self._translator = translator

    def job(self, request: ReviewRequest) -> Job:
        return Job(request.id, PREPARING, lambda job: self._run(job, request))

    def _run(self, job: Job, request: ReviewRequest) -> None:
        translator = self._translator()
        if translator is None:
            return
        with contextlib.suppress(Exception):
            run_review(translator, request, job.cancel)
