"""The worker's "review" requests (alternatives for one word, one sentence re-decoded),
kept out of gui/worker/scheduler.py.

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

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.options import TranslationOptions
from engine.results import Alternative

ALTERNATIVES = "alternatives"  # Translator.alternatives: other words at one position, the rest re-decoded
SENTENCE = "sentence"  # Translator.translate_sentence: one sentence, its start forced to the given tokens
PREPARE = "prepare"  # Translator.prepare_alternatives: a sentence's start decoded before a click (nothing reported)
REVIEW = "review"  # the channel name (is_busy / cancel)
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
