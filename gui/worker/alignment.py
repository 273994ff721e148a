"""The worker's "alignment" requests (which source words each target token of one sentence was written from, for the
window's word-level highlight) and their job source.

One slot, latest wins: the window asks for the sentence under the pointer, so only the last one asked matters. It
runs after the interactive requests (window, review, popup) and before prepare, the API and documents: the user is
pointing at the text, and one forced pass over one sentence is short. It never stops anything else, and nothing
stops it (the engine's alignment takes no cancel event).

A model that gives no alignment (Marian bundles: engine.errors.NotSupported, or a translator without `alignment`)
is answered `alignment_failed` with `unsupported` set, so the window stops asking until another model loads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import SignalInstance

from engine.errors import NotSupported, QiaoError
from engine.options import TranslationOptions
from gui.worker.jobs import Job, LatestWins
from gui.worker.messages import NO_MODEL, internal

ALIGNMENT = "alignment"  # the channel name of a running alignment job
UNSUPPORTED = "this model gives no word alignment"  # a translator without the method (the engine words its own)


@dataclass(frozen=True)
class AlignmentRequest:
    """One sentence (as the model read it) and its tokens, to align."""

    id: int
    source: str
    tokens: tuple[int, ...]
    options: TranslationOptions


def alignment_request(
    request_id: int, source: str, tokens: Sequence[int], options: TranslationOptions | None
) -> AlignmentRequest:
    if not tokens:
        raise ValueError("a sentence without tokens has nothing to align")
    return AlignmentRequest(request_id, source, tuple(tokens), options or TranslationOptions())


class AlignmentSignals(Protocol):
    alignment_ready: SignalInstance  # id, tuple[tuple[int, int], ...]: per token, characters of the source
    alignment_failed: SignalInstance  # id, message, unsupported (True: the model cannot align at all)


class AlignmentSource(LatestWins[AlignmentRequest]):
    """The "alignment" channel: Translator.alignment on the worker thread, its answer or why there is none."""

    def __init__(self, translator: Callable[[], Any], signals: AlignmentSignals) -> None:
        super().__init__()
        self._translator, self._signals = translator, signals

    def job(self, request: AlignmentRequest) -> Job:
        return Job(request.id, ALIGNMENT, lambda job: self._run(job, request))

    def _run(self, job: Job, request: AlignmentRequest) -> None:
        failed, unsupported = "", False
        spans: tuple[tuple[int, int], ...] = ()
        try:
            translator = self._translator()
            align = getattr(translator, "alignment", None) if translator is not None else None
            if translator is None:
                failed = NO_MODEL
            elif align is None:
                failed, unsupported = UNSUPPORTED, True
            else:
                spans = tuple((int(a), int(b)) for a, b in align(request.source, request.tokens, request.options))
        except NotSupported as exc:
            failed, unsupported = str(exc), True
        except QiaoError as exc:
            failed = str(exc)
        except Exception as exc:  # a bug: the window keeps the sentence-level highlight, the worker goes on
            failed = internal(exc)
        if job.superseded:
            return
        if failed:
            self._signals.alignment_failed.emit(request.id, failed, unsupported)
        else:
            self._signals.alignment_ready.emit(request.id, spans)
