"""The worker's review requests (click-a-word alternatives, one sentence re-decoded): answered by id on the UI
thread, latest wins on the "review" channel (the older one cancelled through the engine's event), errors reported,
the window's own translation first, and no model → NO_MODEL."""

from __future__ import annotations

import threading

import pytest

from engine.errors import QiaoError
from engine.options import TranslationOptions
from gui.worker.review import alternatives_request, run_review
from gui.worker.scheduler import CANCELLED, INTERNAL, NO_MODEL
from tests.gui.review_fakes import ReviewFactory, fake_alternative_steps, fake_alternatives, fake_sentence, ids
from tests.gui.worker.test_worker import Recorder, _Sink
from tests.gui.worker.workers import started_workers

REVIEW = ("alternatives_ready", "sentence_ready", "review_failed")
TOKENS = ids("我", "喜欢", "这", "座", "桥", "。")


class Rec(Recorder):
    def __init__(self, worker) -> None:
        super().__init__(worker)
        for name in (*REVIEW, "alternatives_progress"):
            sink = _Sink(name, self)
            self.sinks.append(sink)
            getattr(worker, name).connect(sink.hit)

    def answers(self) -> list[tuple]:
        return [e for e in self.events if e[0] in REVIEW]

    def review_events(self, request_id: int) -> list[tuple]:
        """(signal name, payload) of everything the review channel said about `request_id`, in order."""
        names = (*REVIEW, "alternatives_progress")
        return [(e[0], e[2]) for e in self.events if e[0] in names and e[1] == request_id]


@pytest.fixture
def engine(tmp_path, qtbot):
    with started_workers(tmp_path, qtbot, ReviewFactory, Rec) as make:
        yield make


def test_alternatives_arrive_by_id_from_the_worker_thread(qtbot, engine):
    wt, rec, factory = engine()
    options = TranslationOptions(beams=3, variant="hant")
    rid = wt.worker.alternatives("I like this bridge.", TOKENS, 4, options, k=3)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert rec.answers() == [("alternatives_ready", rid, fake_alternatives(TOKENS, 4, 3))]
    tr = factory.translator
    assert tr.review_calls == [("alternatives", "I like this bridge.", TOKENS, 4, options, 3)]
    assert rec.handler_threads == {rec.ui_thread}
    assert threading.get_ident() not in tr.threads_seen, "the engine is only called on the worker thread"


def test_sentence_arrives_by_id_with_its_prefix_forced(qtbot, engine):
    wt, rec, factory = engine()
    prefix = ids("我", "爱", "那")
    rid = wt.worker.sentence("I love that.", TranslationOptions(), prefix)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    ((name, got_id, result),) = rec.answers()
    assert (name, got_id) == ("sentence_ready", rid)
    assert result == fake_sentence("I love that.", TranslationOptions(), prefix)
    assert result.tokens[:3] == prefix
    assert factory.translator.review_calls == [("sentence", "I love that.", TranslationOptions(), prefix)]


def test_ids_are_unique_across_kinds_and_channels(qtbot, engine):
    wt, rec, _factory = engine()
    a = wt.worker.translate("hello")
    b = wt.worker.sentence("x", None, ())
    qtbot.waitUntil(lambda: bool(rec.answers()) and bool(rec.of("translation_finished")), timeout=5000)
    c = wt.worker.alternatives("x", TOKENS, 0, None)
    assert len({a, b, c}) == 3


def test_a_newer_review_request_cancels_the_running_one_and_replaces_the_waiting_one(qtbot, engine):
    gate = threading.Event()
    wt, rec, factory = engine(ReviewFactory(review_gate=gate))
    first = wt.worker.alternatives("one", TOKENS, 1, None)
    qtbot.waitUntil(lambda: len(factory.translator.review_calls) == 1, timeout=5000)
    assert wt.worker.is_busy("review")
    factory.translator.notice_cancel = threading.Event()  # `first` goes on until both requests below are queued
    second = wt.worker.alternatives("two", TOKENS, 2, None)  # cancels `first` through its event
    third = wt.worker.sentence("three", None, TOKENS[:2])  # replaces `second` before it ever starts
    factory.translator.notice_cancel.set()
    qtbot.waitUntil(lambda: len(factory.translator.cancelled) == 1, timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    qtbot.waitUntil(lambda: not wt.worker.is_busy("review"), timeout=5000)
    tr = factory.translator
    assert [c[1] for c in tr.review_calls] == ["one", "three"], "the replaced request never ran"
    assert [c[1] for c in tr.cancelled] == ["one"]
    assert [(e[0], e[1]) for e in rec.answers()] == [("sentence_ready", third)]
    assert all(e[1] not in (first, second) for e in rec.answers())


def test_engine_errors_are_reported_with_the_engines_wording(qtbot, engine):
    wt, rec, factory = engine()
    factory.translator.review_error = QiaoError("the sentence is too long for alternatives")
    rid = wt.worker.alternatives("x", TOKENS, 0, None)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert rec.answers() == [("review_failed", rid, "the sentence is too long for alternatives")]
    factory.translator.review_error = RuntimeError("boom")
    rid2 = wt.worker.sentence("x", None, ())
    qtbot.waitUntil(lambda: len(rec.answers()) == 2, timeout=5000)
    assert rec.answers()[1] == ("review_failed", rid2, f"{INTERNAL}RuntimeError: boom")
    factory.translator.review_error = None
    rid3 = wt.worker.sentence("x", None, ())  # the worker goes on after a bug
    qtbot.waitUntil(lambda: len(rec.answers()) == 3, timeout=5000)
    assert rec.answers()[2][:2] == ("sentence_ready", rid3)


def test_without_a_model_review_fails_with_no_model(qtbot, engine):
    wt, rec, _factory = engine(loaded=False)
    rid = wt.worker.alternatives("x", TOKENS, 0, None)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert rec.answers() == [("review_failed", rid, NO_MODEL)]


@pytest.mark.parametrize("raises", [False, True], ids=["returns", "raises"])
def test_cancel_review_reports_cancelled_and_leaves_the_window_alone(qtbot, engine, raises):
    gate = threading.Event()
    wt, rec, factory = engine(ReviewFactory(review_gate=gate))
    factory.translator.raise_on_cancel = raises  # the engine raises SearchCancelled; either way it is CANCELLED
    rid = wt.worker.alternatives("x", TOKENS, 0, None)
    qtbot.waitUntil(lambda: len(factory.translator.review_calls) == 1, timeout=5000)
    window = wt.worker.translate("hello")
    wt.worker.cancel("review")
    qtbot.waitUntil(lambda: bool(rec.answers()) and bool(rec.of("translation_finished")), timeout=5000)
    assert rec.answers() == [("review_failed", rid, CANCELLED)]
    assert [e[0] for e in rec.of("translation_finished")] == [window]
    assert not rec.of("translation_finished")[0][1].cancelled


def test_the_windows_translation_runs_first_then_review_then_the_popup(qtbot, engine):
    gate = threading.Event()
    wt, rec, factory = engine(ReviewFactory(gate=gate))
    blocker = wt.worker.translate("the", channel="popup")  # holds the engine until the gate opens
    qtbot.waitUntil(lambda: factory.translator.order == ["stream:the"], timeout=5000)
    wt.worker.translate_ordered(["language"])
    review = wt.worker.alternatives("x", TOKENS, 0, None)
    window = wt.worker.translate("hello")
    # last: it cancels the blocker (same channel), so everything waits before the worker chooses what runs next
    popup = wt.worker.translate("bridge", channel="popup")
    gate.set()
    qtbot.waitUntil(lambda: len(factory.translator.order) == 5, timeout=5000)
    qtbot.waitUntil(lambda: len(rec.of("translation_finished")) == 2 and bool(rec.answers()), timeout=5000)
    assert factory.translator.order == [
        "stream:the",
        "stream:hello",
        "alternatives",
        "stream:bridge",
        "stream:language",
    ]
    assert [e[0] for e in rec.of("translation_finished")] == [window, popup]
    assert blocker not in [e[0] for e in rec.of("translation_finished")]
    assert rec.answers()[0][:2] == ("alternatives_ready", review)


def test_a_window_translation_does_not_cancel_a_running_review(qtbot, engine):
    gate = threading.Event()
    wt, rec, factory = engine(ReviewFactory(review_gate=gate))
    rid = wt.worker.sentence("x", None, TOKENS[:1])
    qtbot.waitUntil(lambda: len(factory.translator.review_calls) == 1, timeout=5000)
    window = wt.worker.translate("hello")
    gate.set()
    qtbot.waitUntil(lambda: bool(rec.answers()) and bool(rec.of("translation_finished")), timeout=5000)
    assert rec.answers()[0][:2] == ("sentence_ready", rid)
    assert factory.translator.cancelled == []
    assert rec.of("translation_finished")[0][0] == window


def test_a_precision_switch_reruns_the_review_request_once_in_the_new_precision(qtbot, engine):
    gate = threading.Event()
    wt, rec, factory = engine(ReviewFactory(review_gate=gate))
    rid = wt.worker.alternatives("x", TOKENS, 3, None, k=2)
    qtbot.waitUntil(lambda: len(factory.translator.review_calls) == 1, timeout=5000)
    wt.worker.set_precision("fp32")
    qtbot.waitUntil(lambda: len(factory.translator.review_calls) == 2, timeout=5000)
    assert factory.translator.precision == "fp32"
    gate.set()
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    qtbot.waitUntil(lambda: not wt.worker.is_busy("review"), timeout=5000)
    assert rec.answers() == [("alternatives_ready", rid, fake_alternatives(TOKENS, 3, 2))]


def test_a_position_outside_the_sentence_is_refused(engine):
    wt, _rec, _factory = engine(loaded=False)
    with pytest.raises(ValueError, match="outside"):
        wt.worker.alternatives("x", TOKENS, len(TOKENS), None)
    with pytest.raises(ValueError, match="unknown channel"):
        wt.worker.translate("x", channel="review")


# ---- the words first, the rests after (alternatives_progress) ------------------------------------------------


def gated(engine):
    """A worker whose translator yields its first list (the words) at once and every later one on a release."""
    wt, rec, factory = engine()
    factory.translator.step_gate = threading.Semaphore(0)
    return wt, rec, factory


def test_the_words_come_before_the_rests_and_the_final_list_last(qtbot, engine):
    wt, rec, factory = gated(engine)
    rid = wt.worker.alternatives("I like this bridge.", TOKENS, 1, None, k=3)
    steps = fake_alternative_steps(TOKENS, 1, 3)
    qtbot.waitUntil(lambda: bool(rec.review_events(rid)), timeout=5000)
    assert rec.review_events(rid) == [("alternatives_progress", steps[0])], "the words, while the rests wait"
    assert all(not a.complete and len(a.tokens) == 2 for a in steps[0])
    factory.translator.step_gate.release(len(steps))
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    events = rec.review_events(rid)
    assert events[-1] == ("alternatives_ready", fake_alternatives(TOKENS, 1, 3))
    progress = [payload for name, payload in events[:-1]]
    assert all(name == "alternatives_progress" for name, _ in events[:-1])
    assert progress == [s for s in steps[:-1] if s in progress], "updates in order, at most one per frame"
    assert progress[0] == steps[0]
    assert factory.translator.steps_yielded == [len(steps)]


def test_a_newer_request_stops_the_updates_of_the_older_one(qtbot, engine):
    wt, rec, factory = gated(engine)
    first = wt.worker.alternatives("one", TOKENS, 1, None, k=3)
    qtbot.waitUntil(lambda: bool(rec.review_events(first)), timeout=5000)
    second = wt.worker.alternatives("two", TOKENS, 3, None, k=2)  # cancels `first` while its rests wait
    qtbot.waitUntil(lambda: len(factory.translator.cancelled) == 1, timeout=5000)
    factory.translator.step_gate.release(100)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    qtbot.waitUntil(lambda: not wt.worker.is_busy("review"), timeout=5000)
    assert rec.review_events(first) == [("alternatives_progress", fake_alternative_steps(TOKENS, 1, 3)[0])]
    assert rec.answers() == [("alternatives_ready", second, fake_alternatives(TOKENS, 3, 2))]
    assert rec.review_events(second)[0] == ("alternatives_progress", fake_alternative_steps(TOKENS, 3, 2)[0])
    assert factory.translator.steps_yielded[0] == 1, "the older one stopped before its next step"


@pytest.mark.parametrize("raises", [False, True], ids=["returns", "raises"])
def test_cancel_after_the_words_reports_cancelled_and_nothing_more(qtbot, engine, raises):
    wt, rec, factory = gated(engine)
    factory.translator.raise_on_cancel = raises
    rid = wt.worker.alternatives("x", TOKENS, 0, None, k=2)
    qtbot.waitUntil(lambda: bool(rec.review_events(rid)), timeout=5000)
    wt.worker.cancel("review")
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    factory.translator.step_gate.release(100)  # too late: nothing runs any more
    qtbot.waitUntil(lambda: not wt.worker.is_busy("review"), timeout=5000)
    assert rec.review_events(rid) == [
        ("alternatives_progress", fake_alternative_steps(TOKENS, 0, 2)[0]),
        ("review_failed", CANCELLED),
    ]


def test_run_review_sends_the_unfinished_lists_and_returns_the_final_one():
    class Blocking:
        def alternatives(self, source, tokens, position, options, *, k, cancel):
            return fake_alternatives(tokens, position, k)[:1]  # told apart from the stream's final list

    class Streaming(Blocking):
        def iter_alternatives(self, source, tokens, position, options, *, k, cancel):
            yield from fake_alternative_steps(tokens, position, k)

    request = alternatives_request(1, "x", TOKENS, 2, None, 4)
    seen: list = []
    steps = fake_alternative_steps(TOKENS, 2, 4)
    assert run_review(Streaming(), request, threading.Event(), seen.append) == steps[-1]
    assert seen == steps[:-1] and all(not all(a.complete for a in s) for s in seen)
    seen.clear()
    assert run_review(Blocking(), request, threading.Event(), seen.append) == fake_alternatives(TOKENS, 2, 4)[:1]
    assert seen == [], "a translator without the streaming form gives the final list only"
    assert run_review(Streaming(), request, threading.Event()) == fake_alternatives(TOKENS, 2, 4)[:1], "blocking"


# ---- prepare_alternatives: a sentence's start decoded before the click -----------------------------------------


def test_prepare_runs_on_the_worker_thread_and_reports_nothing(qtbot, engine):
    wt, rec, factory = engine()
    options = TranslationOptions(beams=2)
    wt.worker.prepare_alternatives("I like this bridge.", TOKENS, options)
    qtbot.waitUntil(lambda: bool(factory.translator.prepared), timeout=5000)
    rid = wt.worker.sentence("x", None, ())  # runs after it: the worker went on
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert factory.translator.prepared == [("I like this bridge.", TOKENS, options)]
    assert [(e[0], e[1]) for e in rec.answers()] == [("sentence_ready", rid)], "the prepare itself said nothing"
    assert threading.get_ident() not in factory.translator.threads_seen


def test_a_click_stops_a_running_prepare_and_drops_a_waiting_one(qtbot, engine):
    wt, rec, factory = engine()
    tr = factory.translator
    tr.prepare_gate = threading.Event()
    wt.worker.prepare_alternatives("one", TOKENS, None)
    qtbot.waitUntil(lambda: len(tr.prepared) == 1, timeout=5000)
    assert not wt.worker.is_busy("review"), "a prepare is nobody's request to wait for"
    wt.worker.prepare_alternatives("two", TOKENS, None)  # replaces the running one (stopped) and waits
    qtbot.waitUntil(lambda: len(tr.prepare_cancelled) == 1, timeout=5000)
    qtbot.waitUntil(lambda: len(tr.prepared) == 2, timeout=5000)
    wt.worker.prepare_alternatives("three", TOKENS, None)  # waits behind nothing: replaces "two" (stopped)
    rid = wt.worker.alternatives("one", TOKENS, 2, None, k=2)  # the click: "three" is dropped or stopped
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert rec.answers() == [("alternatives_ready", rid, fake_alternatives(TOKENS, 2, 2))]
    tr.prepare_gate.set()
    qtbot.waitUntil(lambda: not wt.worker.is_busy("review"), timeout=5000)
    assert [c[0] for c in tr.prepared][:2] == ["one", "two"]
    assert [c[0] for c in tr.prepare_cancelled] == [c[0] for c in tr.prepared], "every prepare gave way"
    assert tr.order[-1] == "alternatives", "nothing prepared after the click (it would replace the click's start)"


def test_a_window_translation_stops_a_running_prepare(qtbot, engine):
    wt, rec, factory = engine()
    tr = factory.translator
    tr.prepare_gate = threading.Event()
    wt.worker.prepare_alternatives("one", TOKENS, None)
    qtbot.waitUntil(lambda: len(tr.prepared) == 1, timeout=5000)
    window = wt.worker.translate("hello")
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=5000)
    assert rec.of("translation_finished")[0][0] == window
    assert tr.prepare_cancelled == [("one", TOKENS, TranslationOptions())]
    assert tr.order == ["prepare", "stream:hello"]


def test_a_failing_prepare_is_dropped_silently(qtbot, engine):
    wt, rec, factory = engine()
    factory.translator.prepare_error = RuntimeError("boom")
    wt.worker.prepare_alternatives("x", TOKENS, None)
    qtbot.waitUntil(lambda: bool(factory.translator.prepared), timeout=5000)
    rid = wt.worker.alternatives("x", TOKENS, 0, None, k=1)
    qtbot.waitUntil(lambda: bool(rec.answers()), timeout=5000)
    assert rec.answers() == [("alternatives_ready", rid, fake_alternatives(TOKENS, 0, 1))]
    assert not rec.of("error")
    with pytest.raises(ValueError):
        wt.worker.prepare_alternatives("x", (), None)
