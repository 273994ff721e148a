"""Stand-ins for the review side of the window: a translator with `alternatives` / `translate_sentence`, a worker
with the review signals, and a target pane with the sentence API (gui.window.target_pane's, brief interface 7) over a
real
QPlainTextEdit, so the alternatives controller is tested without the engine or the real pane.

Target "tokens" are ids into VOCAB (one Chinese word each); a sentence's text is its words joined.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QVBoxLayout, QWidget

from engine.options import TranslationOptions
from engine.results import Alternative, SentenceResult
from tests.gui.fakes import FakeFactory, FakeTranslator

VOCAB = ("我", "喜欢", "这", "座", "桥", "。", "爱", "那", "条", "河", "很", "大", "你好", "世界", "的", "！")
ID = {w: i for i, w in enumerate(VOCAB)}


def ids(*words: str) -> tuple[int, ...]:
    return tuple(ID[w] for w in words)


def text_of(tokens: Sequence[int]) -> str:
    return "".join(VOCAB[t] for t in tokens)


def sentence(source: str, tokens: Sequence[int], *, index: int = 0, start: int = 0, **extra) -> SentenceResult:
    """A SentenceResult whose spans follow its tokens (target_span from `start`)."""
    spans, at = [], 0
    for t in tokens:
        spans.append((at, at + len(VOCAB[t])))
        at += len(VOCAB[t])
    return SentenceResult(
        index=index,
        source=source,
        source_span=(0, len(source)),
        target_span=(start, start + at),
        tokens=tuple(tokens),
        logprobs=tuple(-0.1 for _ in tokens),
        token_spans=tuple(spans),
        score=-0.1,
        text=text_of(tokens),
        **extra,
    )


def fake_alternatives(tokens: Sequence[int], position: int, k: int) -> list[Alternative]:
    """What ReviewTranslator.alternatives returns: the next k words of VOCAB at `position`, and the rest
    "re-decoded" (the old rest reversed, so a test sees the rest change too)."""
    current = tokens[position]
    rest = tuple(reversed(tokens[position + 1 :]))
    out = []
    for step in range(1, len(VOCAB)):
        if len(out) == k:
            break
        word = (current + step) % len(VOCAB)
        new = (*tokens[:position], word, *rest)
        out.append(Alternative(text_of(new), new, -0.2 * step, position=position, word=VOCAB[word]))
    return out


def fake_alternative_steps(tokens: Sequence[int], position: int, k: int) -> list[list[Alternative]]:
    """What ReviewTranslator.iter_alternatives yields: the bare words (not complete), then each rest one token
    longer per step, then fake_alternatives' final list."""
    final = fake_alternatives(tokens, position, k)
    rest = len(tokens) - position - 1
    steps = []
    for grown in range(rest):  # the last partial step has all but the final token of the rest
        steps.append(
            [
                Alternative(
                    text_of(a.tokens[: position + 1 + grown]),
                    a.tokens[: position + 1 + grown],
                    a.score,
                    position=position,
                    word=a.word,
                    complete=False,
                )
                for a in final
            ]
        )
    return [*steps, final]


def fake_sentence(source: str, options: TranslationOptions | None, prefix: Sequence[int]) -> SentenceResult:
    """What ReviewTranslator.translate_sentence returns: the prefix kept, then "。" unless it ends the prefix;
    with options.alternatives, that many n-best entries (the prefix with another last word)."""
    tokens = tuple(prefix) or ids("我", "喜欢", "桥")
    if tokens[-1] != ID["。"]:
        tokens = (*tokens, ID["。"])
    n = options.alternatives if options is not None else 0
    nbest = tuple(
        Alternative(text_of(alt), alt, -0.3 * (j + 1))
        for j in range(n)
        for alt in [(*tokens[:-2], (tokens[-2] + j + 1) % len(VOCAB), tokens[-1])]
    )
    return sentence(source, tokens, alternatives=nbest)


class ReviewTranslator(FakeTranslator):
    """FakeTranslator with the engine's review methods; `review_gate` holds them (honouring cancel) until set."""

    def __init__(self, *args, review_gate: threading.Event | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.review_gate = review_gate
        self.review_calls: list[tuple] = []
        self.review_error: Exception | None = None
        self.cancelled: list[tuple] = []
        self.raise_on_cancel = False
        # When set to an Event, a cancel is noticed only once it is set too: a test can queue several requests
        # before the worker thread moves on (no race with the test's own thread)
        self.notice_cancel: threading.Event | None = None
        self.order: list[str] = []  # "stream:<text>" / "alternatives" / "sentence", in the order they ran
        # iter_alternatives waits for one release of `step_gate` before each list after the first (None: no wait)
        self.step_gate: threading.Semaphore | None = None
        self.steps_yielded: list[int] = []  # per iter_alternatives call: how many lists it gave
        self.prepare_gate: threading.Event | None = None  # holds prepare_alternatives (honouring cancel) until set
        self.prepared: list[tuple] = []  # (source, tokens, options) of every prepare_alternatives call
        self.prepare_cancelled: list[tuple] = []
        self.prepare_error: Exception | None = None

    def stream(self, text, options=None, *, cancel=None):
        self.order.append(f"stream:{text}")
        yield from super().stream(text, options, cancel=cancel)

    def _wait(self, call: tuple, cancel: threading.Event | None) -> bool:
        """False when cancelled while held."""
        self.threads_seen.add(threading.get_ident())
        self.review_calls.append(call)
        self.order.append(call[0])
        # The cancel is looked at before and after each wait: a test that cancels and then opens the gate at once
        # must see the call cancelled, whichever the waiting thread notices first.
        while True:
            released = self.review_gate is None or self.review_gate.wait(0.005)
            noticed = self.notice_cancel is None or self.notice_cancel.is_set()
            if cancel is not None and cancel.is_set() and noticed:
                self.cancelled.append(call)
                if self.raise_on_cancel:  # as engine.pipeline.alternatives does (SearchCancelled)
                    raise RuntimeError("cancelled")
                return False
            if released:
                break
        if self.review_error is not None:
            raise self.review_error
        return True

    def alternatives(self, source, tokens, position, options=None, *, k=5, cancel=None) -> list[Alternative]:
        if not self._wait(("alternatives", source, tuple(tokens), position, options, k), cancel):
            return []
        return fake_alternatives(tokens, position, k)

    def iter_alternatives(self, source, tokens, position, options=None, *, k=5, cancel=None):
        """fake_alternative_steps one by one (the engine's streaming form), `step_gate` pacing them; a cancel stops
        it before the next list (raising like the engine with `raise_on_cancel`)."""
        call = ("alternatives", source, tuple(tokens), position, options, k)
        self.steps_yielded.append(0)
        if not self._wait(call, cancel):
            return
        for i, step in enumerate(fake_alternative_steps(tokens, position, k)):
            while i and self.step_gate is not None and not self.step_gate.acquire(timeout=0.005):
                if cancel is not None and cancel.is_set():
                    break
            if cancel is not None and cancel.is_set():
                self.cancelled.append(call)
                if self.raise_on_cancel:
                    raise RuntimeError("cancelled")
                return
            self.steps_yielded[-1] += 1
            yield step

    def prepare_alternatives(self, source, tokens, options=None, *, cancel=None) -> None:
        call = (source, tuple(tokens), options)
        self.threads_seen.add(threading.get_ident())
        self.prepared.append(call)
        self.order.append("prepare")
        while self.prepare_gate is not None and not self.prepare_gate.wait(0.005):
            if cancel is not None and cancel.is_set():
                self.prepare_cancelled.append(call)
                raise RuntimeError("cancelled")  # as the engine does (SearchCancelled)
        if self.prepare_error is not None:
            raise self.prepare_error

    def translate_sentence(self, source, options=None, *, prefix=(), cancel=None) -> SentenceResult:
        if not self._wait(("sentence", source, options, tuple(prefix)), cancel):
            return sentence(source, ())
        return fake_sentence(source, options, prefix)


class ReviewFactory(FakeFactory):
    """Builds ReviewTranslators (same knobs as FakeFactory, plus the review gate)."""

    def __init__(self, *, review_gate: threading.Event | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self.review_gate = review_gate

    def __call__(self, bundle_dir: Path, precision: str, threads: int | None) -> ReviewTranslator:
        if self.fail is not None:
            raise self.fail
        tr = ReviewTranslator(
            bundle_dir, precision, threads, token_delay=self.token_delay, gate=self.gate, review_gate=self.review_gate
        )
        self.built.append(tr)
        return tr


class ReviewWorker(QObject):
    """The review part of TranslationWorker on the test's thread: records requests; the test emits the answers."""

    alternatives_progress = Signal(int, object)
    alternatives_ready = Signal(int, object)
    sentence_ready = Signal(int, object)
    review_failed = Signal(int, str)

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []
        self._next = 100

    def alternatives(self, source, tokens, position, options, k=5) -> int:
        self._next += 1
        self.calls.append(("alternatives", self._next, source, tuple(tokens), position, options, k))
        return self._next

    def sentence(self, source, options, prefix_tokens) -> int:
        self._next += 1
        self.calls.append(("sentence", self._next, source, options, tuple(prefix_tokens)))
        return self._next

    def prepare_alternatives(self, source, tokens, options) -> int:
        self._next += 1
        self.calls.append(("prepare", self._next, source, tuple(tokens), options))
        return self._next

    def cancel(self, channel: str = "window") -> None:
        self.calls.append(("cancel", channel))

    def of(self, name: str) -> list[tuple]:
        return [c[1:] for c in self.calls if c[0] == name]


class FakeTargetPane(QWidget):
    """The target pane's sentence API (interface 7) over a real QPlainTextEdit: sentences laid out one after the
    other; typing inside a sentence marks it edited (token_at → None there) and shifts the ones after it."""

    sentence_edited = Signal(int)
    sentence_replaced = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.editor = QPlainTextEdit(self)
        self.editor.setObjectName("target")
        QVBoxLayout(self).addWidget(self.editor)
        self._sentences: list[SentenceResult] = []
        self._ranges: list[tuple[int, int]] = []
        self._edited: set[int] = set()
        self._replacing = False
        self.replaced: list[tuple[int, SentenceResult, str]] = []
        self.editor.document().contentsChange.connect(self._changed)

    def show_sentences(self, rows: Sequence[tuple[str, Sequence[int]]], *, nbest: dict[int, tuple] | None = None):
        """Put these (source, tokens) sentences in the editor, as a finished translation would."""
        self._replacing = True
        self.editor.setPlainText("".join(text_of(t) for _, t in rows))
        self._replacing = False
        self._sentences, self._ranges, self._edited, at = [], [], set(), 0
        for i, (source, tokens) in enumerate(rows):
            result = sentence(source, tokens, index=i, start=at, alternatives=(nbest or {}).get(i, ()))
            self._sentences.append(result)
            self._ranges.append(result.target_span)
            at = result.target_span[1]

    def sentences(self) -> list[SentenceResult]:
        return list(self._sentences)

    def sentence_range(self, i: int) -> tuple[int, int]:
        return self._ranges[i]

    def sentence_at(self, pos: int) -> int | None:
        return next((i for i, (a, b) in enumerate(self._ranges) if a <= pos < b), None)

    def is_edited(self, i: int) -> bool:
        return i in self._edited

    def token_at(self, pos: int) -> tuple[int, int] | None:
        i = self.sentence_at(pos)
        if i is None or i in self._edited:
            return None
        offset = pos - self._ranges[i][0]
        t = next((t for t, (a, b) in enumerate(self._sentences[i].token_spans) if a <= offset < b), None)
        return None if t is None else (i, t)

    def replace_sentence(self, i: int, result: SentenceResult, *, origin: str) -> None:
        a, b = self._ranges[i]
        cursor = QTextCursor(self.editor.document())
        cursor.setPosition(a)
        cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
        self._replacing = True
        cursor.insertText(result.text)
        self._replacing = False
        self._shift(i, len(result.text) - (b - a))
        self._sentences[i] = replace(
            result, index=i, source=self._sentences[i].source, target_span=(a, a + len(result.text))
        )
        self.replaced.append((i, result, origin))
        self.sentence_replaced.emit(i)

    def _shift(self, i: int, delta: int) -> None:
        a, b = self._ranges[i]
        self._ranges[i] = (a, b + delta)
        for j in range(i + 1, len(self._ranges)):
            x, y = self._ranges[j]
            self._ranges[j] = (x + delta, y + delta)

    def _changed(self, pos: int, removed: int, added: int) -> None:
        if self._replacing:
            return
        i = self.sentence_at(pos)
        if i is None and self._ranges and pos == self._ranges[-1][1]:
            i = len(self._ranges) - 1
        if i is None:
            return
        self._edited.add(i)
        self._shift(i, added - removed)
        self.sentence_edited.emit(i)


class FakeReviewWindow(QWidget):
    """What attach_alternatives uses of MainWindow: `target` (the pane), `engine.worker`, `requests.options()`,
    `model.default_beams`."""

    def __init__(self, options: TranslationOptions | None = None, worker: QObject | None = None) -> None:
        super().__init__()
        self.target = FakeTargetPane()
        QVBoxLayout(self).addWidget(self.target)
        self.worker = worker or ReviewWorker()
        self.engine = SimpleNamespace(worker=self.worker)
        self.current_options = options or TranslationOptions(beams=2)
        self.requests = SimpleNamespace(options=lambda: self.current_options)
        self.model = SimpleNamespace(default_beams=4)
        self.resize(640, 320)
