"""Worker channels: latest-wins per channel (window and popup never cancel each other), the API's ordered FIFO path
that no newer request cancels, and the priority window > popup > API > documents."""

from __future__ import annotations

import threading

import pytest

from gui.worker.scheduler import CANCELLED, NO_MODEL, STOPPED
from tests.gui.fakes import FakeFactory, fake_translate_text
from tests.gui.worker.test_worker import Recorder, _Sink
from tests.gui.worker.workers import started_workers

ORDERED = ("ordered_progress", "ordered_finished", "ordered_failed")


class Rec(Recorder):
    def __init__(self, worker) -> None:
        super().__init__(worker)
        for name in ORDERED:
            sink = _Sink(name, self)
            self.sinks.append(sink)
            getattr(worker, name).connect(sink.hit)


@pytest.fixture
def engine(tmp_path, qtbot):
    with started_workers(tmp_path, qtbot, FakeFactory, Rec) as make:
        yield make


def finished_ids(rec) -> list[int]:
    return [e[0] for e in rec.of("translation_finished")]


def test_a_popup_request_does_not_cancel_the_windows_translation_nor_the_reverse(qtbot, engine):
    wt, rec, _factory = engine(FakeFactory(token_delay=0.005))
    window = wt.worker.translate(" ".join(["hello"] * 60))
    qtbot.waitUntil(lambda: bool(rec.of("translation_progress")), timeout=5000)
    popup = wt.worker.translate("good morning", channel="popup")
    qtbot.waitUntil(lambda: len(rec.of("translation_finished")) == 2, timeout=5000)
    results = dict(rec.of("translation_finished"))
    assert set(results) == {window, popup}
    assert not results[window].cancelled and results[window].text == "你好" * 60
    assert results[popup].text == "好早上"
    assert finished_ids(rec) == [window, popup], "one engine: the running window request finishes first"
    # and the reverse: a window request while the popup translates leaves the popup's alone
    popup2 = wt.worker.translate(" ".join(["bridge"] * 40), channel="popup")
    qtbot.waitUntil(lambda: any(p[0] == popup2 for p in rec.of("translation_progress")), timeout=5000)
    window2 = wt.worker.translate("hello")
    qtbot.waitUntil(lambda: len(rec.of("translation_finished")) == 4, timeout=5000)
    results = dict(rec.of("translation_finished"))
    assert results[popup2].text == "桥" * 40 and not results[popup2].cancelled
    assert results[window2].text == "你好"


def test_latest_wins_within_the_popup_channel(qtbot, engine):
    wt, rec, _factory = engine(FakeFactory(token_delay=0.01))
    first = wt.worker.translate(" ".join(["hello"] * 300), channel="popup")
    qtbot.waitUntil(lambda: bool(rec.of("translation_progress")), timeout=5000)
    second = wt.worker.translate("world", channel="popup")
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=3000)
    assert finished_ids(rec) == [second]
    assert all(e[0] != first for e in rec.of("translation_failed"))
    assert not wt.worker.is_busy("popup")


def test_cancel_touches_only_its_channel(qtbot, engine):
    gate = threading.Event()
    wt, rec, _factory = engine(FakeFactory(gate=gate))
    window = wt.worker.translate("hello")
    qtbot.waitUntil(lambda: wt.worker.is_busy("window"), timeout=2000)
    popup = wt.worker.translate("world", channel="popup")
    wt.worker.cancel("popup")
    gate.set()
    qtbot.waitUntil(lambda: not wt.worker.is_busy("window"), timeout=3000)
    qtbot.wait(100)
    assert finished_ids(rec) == [window]
    assert popup not in finished_ids(rec)


def test_an_unknown_channel_is_refused(engine):
    wt, _rec, _factory = engine(loaded=False)
    with pytest.raises(ValueError, match="unknown channel"):
        wt.worker.translate("hello", channel="api")


def test_ordered_requests_are_served_in_arrival_order_and_never_superseded(qtbot, engine):
    wt, rec, _factory = engine(FakeFactory(token_delay=0.002))
    texts = [f"hello {'world ' * i}".strip() for i in range(8)]
    ids = [wt.worker.translate_ordered([t, "good morning"]) for t in texts]
    wt.worker.translate("bridge")  # the window's request cuts in between steps, cancelling none of the API's
    wt.worker.translate("model")
    qtbot.waitUntil(lambda: len(rec.of("ordered_finished")) == len(ids), timeout=10_000)
    done = rec.of("ordered_finished")
    assert [d[0] for d in done] == ids
    for (_, results), text in zip(done, texts, strict=True):
        assert [r.text for r in results] == [fake_translate_text(text), "好早上"]
    assert rec.of("ordered_failed") == []
    assert wt.worker.ordered_pending() == 0


def test_window_then_popup_then_api_then_documents(qtbot, engine, tmp_path):
    gate = threading.Event()
    wt, rec, factory = engine(FakeFactory(gate=gate))
    blocker = wt.worker.translate("the", channel="popup")  # holds the engine until the gate opens
    qtbot.waitUntil(lambda: wt.worker.is_busy("popup") and factory.translator.calls != [], timeout=2000)
    api = wt.worker.translate_ordered(["language"])
    popup = wt.worker.translate("bridge", channel="popup")
    window = wt.worker.translate("hello")
    gate.set()
    qtbot.waitUntil(lambda: bool(rec.of("ordered_finished")), timeout=5000)
    texts = [c["text"] for c in factory.translator.calls]
    assert texts == ["the", "hello", "bridge", "language"]
    assert blocker not in finished_ids(rec), "superseded by the newer popup request"
    assert finished_ids(rec) == [window, popup]
    assert rec.of("ordered_finished")[0][0] == api


def test_streamed_ordered_request_reports_each_items_text(qtbot, engine):
    wt, rec, _factory = engine()
    rid = wt.worker.translate_ordered(["hello world", "good morning"], stream=True)
    qtbot.waitUntil(lambda: bool(rec.of("ordered_finished")), timeout=5000)
    progress = [p for p in rec.of("ordered_progress") if p[0] == rid]
    by_item = {i: "".join(p[2] for p in progress if p[1] == i) for i in (0, 1)}
    assert by_item == {0: "你好世界", 1: "好早上"}
    unstreamed = wt.worker.translate_ordered(["hello"])
    qtbot.waitUntil(lambda: len(rec.of("ordered_finished")) == 2, timeout=5000)
    assert not [p for p in rec.of("ordered_progress") if p[0] == unstreamed]


def test_cancel_ordered_waiting_and_running(qtbot, engine):
    wt, rec, factory = engine(FakeFactory(token_delay=0.01))
    running = wt.worker.translate_ordered([" ".join(["hello"] * 500)])
    waiting = wt.worker.translate_ordered(["world"])
    after = wt.worker.translate_ordered(["good"])
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 1, timeout=2000)
    wt.worker.cancel_ordered(waiting)
    wt.worker.cancel_ordered(running)
    qtbot.waitUntil(lambda: bool(rec.of("ordered_finished")), timeout=5000)
    assert sorted(rec.of("ordered_failed")) == sorted([(waiting, CANCELLED), (running, CANCELLED)])
    assert [d[0] for d in rec.of("ordered_finished")] == [after]
    wt.worker.cancel_ordered(12345)  # unknown: nothing happens


def test_ordered_without_a_model_fails_with_no_model(qtbot, engine):
    wt, rec, _factory = engine(loaded=False)
    rid = wt.worker.translate_ordered(["hello"])
    qtbot.waitUntil(lambda: bool(rec.of("ordered_failed")), timeout=3000)
    assert rec.of("ordered_failed") == [(rid, NO_MODEL)]


def test_stop_reports_every_waiting_ordered_request_so_no_caller_hangs(qtbot, engine):
    gate = threading.Event()
    wt, rec, factory = engine(FakeFactory(gate=gate))
    ids = [wt.worker.translate_ordered(["hello"]) for _ in range(3)]
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 1, timeout=2000)
    wt.worker.stop()
    late = wt.worker.translate_ordered(["world"])
    gate.set()
    qtbot.waitUntil(lambda: len(rec.of("ordered_failed")) == 4, timeout=3000)
    qtbot.wait(100)
    assert sorted(rec.of("ordered_failed")) == sorted((i, STOPPED) for i in [*ids, late])
    assert rec.of("ordered_finished") == []


def test_a_precision_switch_does_not_restart_an_api_request(qtbot, engine):
    wt, rec, factory = engine(FakeFactory(token_delay=0.005))
    rid = wt.worker.translate_ordered([" ".join(["hello"] * 40)])
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 1, timeout=2000)
    wt.worker.set_precision("fp32")
    qtbot.waitUntil(lambda: bool(rec.of("ordered_finished")), timeout=5000)
    assert rec.of("ordered_finished")[0][0] == rid
    assert rec.of("ordered_finished")[0][1][0].text == "你好" * 40
    assert len([c for c in factory.translator.calls if c["text"].startswith("hello")]) == 1
