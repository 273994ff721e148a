"""Word-level alignment: which source words a target word was written from, and the reverse, from the model's soft
alignment (engine Translator.alignment: per target token, the characters of the sentence's source it attended to
most). The window's sentence tint (gui.window.alignment) adds these words on top where the model gives them.

`WordAligner` asks the worker (never the UI thread) for one sentence at a time, when the user points at it, and keeps
each answer per sentence (its source and tokens), so moving over the same sentence again asks nothing. A model that
cannot align (Marian bundles) answers once that it cannot: nothing more is asked until another model loads, and the
window keeps its sentence-level highlight exactly as before.

The pure functions below map one sentence's token spans (target side) and alignment spans (source side) to the
ranges to tint, each widened to whole words (gui.review.confidence.whole_words: a reader sees words, not pieces).
"""

from __future__ import annotations

import difflib
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, Signal

from engine.options import TranslationOptions
from gui.review.confidence import whole_words

Span = tuple[int, int]
Key = tuple[str, tuple[int, ...]]  # a sentence: its source as the model read it, and its tokens
CACHED = 256  # sentences whose alignment is kept (a window shows far fewer at once)
ASKED = 8  # requests whose answers are still taken (the worker answers only the last waiting one, and a running one)


def merged(spans: Sequence[Span]) -> list[Span]:
    """Non-empty spans, sorted, with touching or overlapping ones joined."""
    out: list[Span] = []
    for a, b in sorted(s for s in spans if s[0] < s[1]):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


def _word_at(text: str, offset: int) -> Span | None:
    """The word holding character `offset` of `text` (a Han character or a punctuation mark on its own); None on
    a space or outside the text."""
    if not 0 <= offset < len(text) or text[offset].isspace():
        return None
    return whole_words(text, offset, offset + 1)


def sources_of_target(
    links: Sequence[Span], token_spans: Sequence[Span], source: str, target: str, token: int
) -> tuple[Span | None, list[Span]]:
    """For target token `token` of a sentence: its word in `target` (the sentence's text; `token_spans` in it)
    and the source ranges (in `source`, the sentence as the model read it) that word's tokens were written from."""
    if not 0 <= token < len(token_spans) or token_spans[token][0] >= token_spans[token][1]:
        return None, []
    word = whole_words(target, *token_spans[token])
    tokens = [k for k, (a, b) in enumerate(token_spans) if a < b and a < word[1] and b > word[0]]
    found = [whole_words(source, *links[k]) for k in tokens if k < len(links) and links[k][0] < links[k][1]]
    return word, merged(found)


def targets_of_source(
    links: Sequence[Span], token_spans: Sequence[Span], source: str, target: str, offset: int
) -> tuple[Span | None, list[Span]]:
    """For character `offset` of `source`: its word there and the target ranges (in `target`) of the tokens
    written from it (each widened to its word)."""
    word = _word_at(source, offset)
    if word is None:
        return None, []
    found = [
        whole_words(target, *token_spans[k])
        for k, (a, b) in enumerate(links)
        if a < b and a < word[1] and b > word[0] and k < len(token_spans)
    ]
    return word, merged(found)


def char_map(model_text: str, shown: str) -> list[int | None]:
    """Where each character of `model_text` (a sentence as the model read it: wrapped lines joined, or one part of
    a split sentence) is in `shown` (the sentence's text in the editor); None for one that is not there."""
    at = shown.find(model_text)
    if at >= 0:
        return list(range(at, at + len(model_text)))
    out: list[int | None] = [None] * len(model_text)
    matcher = difflib.SequenceMatcher(None, model_text, shown, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        for k in range(size):
            out[a + k] = b + k
    return out


def mapped(spans: Sequence[Span], where: Sequence[int | None]) -> list[Span]:
    """Spans of a model text → spans of the shown text (char_map); a span none of whose characters are shown is
    left out."""
    out = []
    for a, b in spans:
        inside = [where[k] for k in range(max(0, a), min(b, len(where))) if where[k] is not None]
        if inside:
            out.append((min(inside), max(inside) + 1))  # type: ignore[type-var, operator]
    return merged(out)


def unmapped(offset: int, where: Sequence[int | None]) -> int | None:
    """The model text's character shown at `offset` (the reverse of char_map); None where none is."""
    for k, shown in enumerate(where):
        if shown == offset:
            return k
    return None


class WordAligner(QObject):
    """Asks the worker for a sentence's alignment when the window points at it; keeps the answers (see the module
    docstring). `changed` tells the highlight to redraw once an answer came."""

    changed = Signal()

    def __init__(self, worker: Any, options: Callable[[], TranslationOptions], parent: QObject | None = None):
        super().__init__(parent)
        self._worker = worker
        self._options = options
        self._cache: OrderedDict[Key, tuple[Span, ...]] = OrderedDict()
        self._asked: dict[int, Key] = {}
        self._latest: Key | None = None  # the sentence asked last, until its answer comes
        self.supported = True  # False once the loaded model said it cannot align
        self.reason = ""  # the engine's words for why not
        ready = getattr(worker, "alignment_ready", None)
        if ready is None or not hasattr(worker, "align"):  # a worker without alignment: sentences only
            self.supported = False
            return
        ready.connect(self._ready)
        worker.alignment_failed.connect(self._failed)
        worker.model_ready.connect(self._model_ready)

    def links(self, source: str, tokens: Sequence[int]) -> tuple[Span, ...] | None:
        """The sentence's alignment if it is known (per token, characters of `source`), else None."""
        key = (source, tuple(tokens))
        found = self._cache.get(key)
        if found is not None:
            self._cache.move_to_end(key)
        return found

    def want(self, source: str, tokens: Sequence[int]) -> bool:
        """Ask the worker for the sentence's alignment unless it is known, asked already, or the model cannot
        align; True when a request went out."""
        key = (source, tuple(tokens))
        if not self.supported or not key[1] or key in self._cache or key == self._latest:
            return False
        request_id = self._worker.align(source, key[1], self._options())
        # Latest wins on the worker: a request replaced while it waited is never answered (one already running is)
        self._asked[request_id] = self._latest = key
        while len(self._asked) > ASKED:
            del self._asked[next(iter(self._asked))]
        return True

    def _ready(self, request_id: int, spans: tuple[Span, ...]) -> None:
        key = self._asked.pop(request_id, None)
        if key is None:
            return
        if key == self._latest:
            self._latest = None
        self._cache[key] = tuple(spans)
        while len(self._cache) > CACHED:
            self._cache.popitem(last=False)
        self.changed.emit()

    def _failed(self, request_id: int, message: str, unsupported: bool) -> None:
        key = self._asked.pop(request_id, None)
        if key is None:
            return
        if key == self._latest:
            self._latest = None
        if unsupported:
            self.supported, self.reason = False, message
        else:
            self._cache[key] = ()  # no words for this sentence (asked once): its sentence tint stays

    def _model_ready(self, _info: object) -> None:
        """Another model (or precision): its alignments are its own, and it may align where the last one did not."""
        self._cache.clear()
        self._asked.clear()
        self._latest = None
        self.supported, self.reason = True, ""
