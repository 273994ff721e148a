"""The worker's alignment requests (gui.worker.alignment): run on the worker thread, answered by id on the UI
thread, latest wins while waiting, a model that cannot align (NotSupported, or a translator without `alignment`)
answered `unsupported`, other problems worded, no model → NO_MODEL."""

from __future__ import annotations

import threading

import pytest

from engine.errors import NotSupported, QiaoError
from engine.options import TranslationOptions
from gui.worker.alignment import UNSUPPORTED
from gui.worker.scheduler import INTERNAL, NO_MODEL
from tests.gui.fakes import FakeFactory, FakeTranslator
from tests.gui.worker.test_worker import Recorder, _Sink
from tests.gui.worker.workers import started_workers

ANSWERS = ("alignment_ready", "alignment_failed")


class AligningTranslator(FakeTranslator):
    """Aligns token k to the k-th character of the source; `problem` raised instead when set."""

    problem: Exception | None = None
    gate: threading.Event | None = None

    def alignment(self, source, tokens, options=None):
        self.calls.append((threading.get_ident(), source, tuple(tokens), options))
        if self.gate is not None:
            assert self.gate.wait(5)
        if self.problem is not None:
            raise self.problem
        return tuple((k, k + 1) for k in range(len(tokens)))


class AligningFactory(FakeFactory):
    def __init__(self, aligns: bool = True, problem: Exception | None = None, gate=None) -> None:
        super().__init__()
        self.aligns, self.problem, self.gate = aligns, problem, gate

    def __call__(self, bundle_dir, precision, threads):
        tr = super().__call__(bundle_dir, precision, threads)
        if self.aligns:
            tr.__class__ = AligningTranslator
            tr.calls, tr.problem, tr.gate = [], self.problem, self.gate
        return tr


class Rec(Recorder):
    def __init__(self, worker) -> None:
        super().__init__(worker)
        for name in ANSWERS:
            sink = _Sink(name, self)
            self.sinks.append(sink)
            getattr(worker, name).connect(sink.hit)

    def answers(self) -> list[tuple]:
        return [e for e in self.events if e[0] in ANSWERS]


@pytest.fixture
def engine(tmp_path, qtbot):
    with started_workers(tmp_path, qtbot, AligningFactory, Rec) as make:
        yield make


def test_an_alignment_is_computed_on_the_worker_thread_and_answered_by_id(qtbot, engine):
    wt, rec, factory = engine()
    options = TranslationOptions(beams=2)
    rid = wt.worker.align("See you.", [5, 6, 7], options)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert rec.answers() == [("alignment_ready", rid, ((0, 1), (1, 2), (2, 3)))]
    [(thread, source, tokens, asked)] = factory.translator.calls
    assert thread != rec.ui_thread and (source, tokens, asked) == ("See you.", (5, 6, 7), options)
    assert rec.handler_threads == {rec.ui_thread}


def test_a_newer_request_replaces_the_waiting_one(qtbot, engine):
    gate = threading.Event()
    wt, rec, factory = engine(AligningFactory(gate=gate))
    first = wt.worker.align("one", [1], None)
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 1, timeout=5000)  # running, held by the gate
    wt.worker.align("two", [2], None)  # waits…
    third = wt.worker.align("three", [3, 4], None)  # …and is replaced
    gate.set()
    qtbot.waitUntil(lambda: len(rec.answers()) == 2, timeout=5000)
    assert [c[1] for c in factory.translator.calls] == ["one", "three"]
    assert [(e[0], e[1]) for e in rec.answers()] == [("alignment_ready", first), ("alignment_ready", third)]


@pytest.mark.parametrize(
    ("factory", "message", "unsupported"),
    [
        (AligningFactory(problem=NotSupported("alignment", "no attention here")), "no attention here", True),
        (AligningFactory(aligns=False), UNSUPPORTED, True),
        (AligningFactory(problem=QiaoError("too long")), "too long", False),
        (AligningFactory(problem=RuntimeError("boom")), f"{INTERNAL}RuntimeError: boom", False),
    ],
    ids=["not-supported", "no-method", "engine-error", "bug"],
)
def test_why_there_is_no_alignment(qtbot, engine, factory, message, unsupported):
    wt, rec, _ = engine(factory)
    rid = wt.worker.align("See you.", [5], None)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert rec.answers() == [("alignment_failed", rid, message, unsupported)]


def test_without_a_model_the_answer_is_no_model(qtbot, engine, tmp_path):
    wt, rec, _ = engine(loaded=False)
    rid = wt.worker.align("See you.", [5], None)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert rec.answers() == [("alignment_failed", rid, NO_MODEL, False)]


def test_a_sentence_without_tokens_is_refused_at_once(engine):
    wt, _, _ = engine(loaded=False)
    with pytest.raises(ValueError):
        wt.worker.align("See you.", [], None)
