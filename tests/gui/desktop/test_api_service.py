"""WindowTranslationService: the API's service Protocol through the window's worker (one engine, one queue),
waited on from server threads, never from the UI thread."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from gui.desktop.api_service import Busy, TimedOut, UnsupportedLanguage, WindowTranslationService
from gui.worker.scheduler import WorkerThread
from tests.gui.fakes import FakeFactory, fake_translate_text, fixed_locator

pool = ThreadPoolExecutor(max_workers=32)


@pytest.fixture
def engine(tmp_path, qtbot):
    made = []

    def make(factory=None, loaded=True, **kwargs):
        factory = factory or FakeFactory()
        wt = WorkerThread(factory, fixed_locator(tmp_path), lambda pair=None: tmp_path, factory.verify)
        made.append(wt)
        ready = []
        wt.worker.model_ready.connect(ready.append)
        if loaded:
            wt.worker.load(None, "int8", None)
            qtbot.waitUntil(lambda: bool(ready), timeout=5000)
        service = WindowTranslationService(wt.worker, lambda: ready[-1].pair if ready else None, **kwargs)
        return wt, service, factory

    yield make
    for wt in made:
        assert wt.shutdown(5000)


def off_ui(qtbot, fn, *args, wait_ms=10_000, **kwargs):
    future = pool.submit(fn, *args, **kwargs)
    qtbot.waitUntil(future.done, timeout=wait_ms)
    return future.result()


def test_many_server_threads_get_each_their_own_answer(qtbot, engine):
    _wt, service, _factory = engine(FakeFactory(token_delay=0.001))
    texts = [["hello " * (i % 5 + 1), f"good morning {'world ' * (i % 3)}"] for i in range(30)]
    futures = [pool.submit(service.translate, t, "en", "zh") for t in texts]
    qtbot.waitUntil(lambda: all(f.done() for f in futures), timeout=20_000)
    for t, f in zip(texts, futures, strict=True):
        assert f.result() == [fake_translate_text(x) for x in t]


def test_the_window_and_the_api_share_the_engine_without_cancelling_each_other(qtbot, engine):
    wt, service, factory = engine(FakeFactory(token_delay=0.003))
    finished = []
    wt.worker.translation_finished.connect(lambda rid, r: finished.append(r.text))
    future = pool.submit(service.translate, [" ".join(["bridge"] * 60)], "en", "zh")
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 1, timeout=3000)
    wt.worker.translate("hello")
    wt.worker.translate("world")  # latest-wins for the window: "hello" is dropped, the API's request is not
    qtbot.waitUntil(future.done, timeout=5000)
    assert future.result() == ["桥" * 60]
    qtbot.waitUntil(lambda: finished == ["世界"], timeout=3000)
    assert len({id(t) for t in factory.built}) == 1, "one engine"


def test_a_direction_the_window_has_not_loaded_is_a_400_naming_the_loaded_one(qtbot, engine):
    _wt, service, _f = engine()
    with pytest.raises(UnsupportedLanguage, match="translates en-zh") as info:
        off_ui(qtbot, service.translate, ["你好"], "zh", "en")
    assert info.value.status == 400
    assert [p.key for p in service.languages()] == ["en-zh"]


def test_auto_source_is_detected_and_the_same_language_comes_back_unchanged(qtbot, engine):
    _wt, service, _f = engine()
    assert off_ui(qtbot, service.translate, ["hello world"], "auto", "zh-Hans") == ["你好世界"]
    assert off_ui(qtbot, service.translate, ["hello"], "en", "en") == ["hello"]
    assert off_ui(qtbot, service.translate, ["hello"], "en", "zh-TW") == ["你好"]


def test_no_model_loaded_is_busy_503(qtbot, engine):
    _wt, service, _f = engine(loaded=False)
    with pytest.raises(Busy) as info:
        off_ui(qtbot, service.translate, ["hello"], "en", "zh")
    assert info.value.status == 503 and "Retry-After" in info.value.headers
    assert service.languages() == []


def test_the_ui_thread_is_never_made_to_wait(engine):
    _wt, service, _f = engine()
    with pytest.raises(RuntimeError, match="server thread"):
        service.translate(["hello"], "en", "zh")


def test_stream_yields_the_deltas_of_the_translation(qtbot, engine):
    _wt, service, _f = engine()
    deltas = off_ui(qtbot, lambda: list(service.stream("hello world the model", "en", "zh")))
    assert "".join(deltas) == fake_translate_text("hello world the model") and len(deltas) >= 1


def test_a_stream_closed_early_stops_the_decoding(qtbot, engine):
    wt, service, _factory = engine(FakeFactory(token_delay=0.01))

    def first_then_close():
        it = service.stream(" ".join(["hello"] * 500), "en", "zh")
        first = next(it)
        it.close()
        return first

    assert off_ui(qtbot, first_then_close).startswith("你好")
    qtbot.waitUntil(lambda: wt.worker.ordered_pending() == 0, timeout=3000)
    assert off_ui(qtbot, service.translate, ["good"], "en", "zh") == ["好"]


def test_a_timeout_is_504_and_the_request_is_dropped(qtbot, engine):
    gate = threading.Event()
    wt, service, _f = engine(FakeFactory(gate=gate))
    with pytest.raises(TimedOut, match=r"did not finish within 0\.2 s") as info:
        off_ui(qtbot, service.translate, ["hello"], "en", "zh", timeout=0.2)
    assert info.value.status == 504
    gate.set()
    qtbot.waitUntil(lambda: wt.worker.ordered_pending() == 0, timeout=3000)
    assert off_ui(qtbot, service.translate, ["world"], "en", "zh") == ["世界"]
    assert service._waiters == {} and service._early == {}


def test_a_full_queue_is_busy(qtbot, engine):
    gate = threading.Event()
    _wt, service, _f = engine(FakeFactory(gate=gate), queue_size=2)
    futures = [pool.submit(service.translate, ["hello"], "en", "zh", timeout=5) for _ in range(2)]
    qtbot.waitUntil(lambda: len(service._waiters) == 2, timeout=3000)
    with pytest.raises(Busy, match="busy"):
        off_ui(qtbot, service.translate, ["hello"], "en", "zh")
    gate.set()
    qtbot.waitUntil(lambda: all(f.done() for f in futures), timeout=5000)
    assert [f.result() for f in futures] == [["你好"], ["你好"]]


def test_closing_the_window_answers_waiting_requests(qtbot, engine):
    gate = threading.Event()
    wt, service, _f = engine(FakeFactory(gate=gate))
    futures = [pool.submit(service.translate, ["hello"], "en", "zh") for _ in range(3)]
    qtbot.waitUntil(lambda: len(service._waiters) == 3, timeout=3000)
    wt.worker.stop()
    gate.set()
    qtbot.waitUntil(lambda: all(f.done() for f in futures), timeout=5000)
    for f in futures:
        with pytest.raises(Busy):
            f.result()
    with pytest.raises(Busy):
        off_ui(qtbot, service.translate, ["hello"], "en", "zh")


def test_an_html_page_that_names_its_language_is_translated_and_says_the_target(qtbot, engine):
    """format=html with <html lang="en">: the page's lang is set to the target's code (the window's service gave the
    loaded pair's Language object instead, and the page failed: "cannot write the translated document")."""
    _wt, service, _f = engine()
    page = '<html lang="en"><body><p>hello world</p></body></html>'
    [out] = off_ui(qtbot, service.translate, [page], "en", "zh", fmt="html")
    assert out == page.replace('lang="en"', 'lang="zh"').replace("hello world", fake_translate_text("hello world"))


def test_nbest_comes_back_as_text_and_alternatives(qtbot, engine):
    _wt, service, _f = engine()
    done = off_ui(qtbot, service.translate_nbest, ["hello", "world"], "en", "zh", 2)
    assert [text for text, _ in done] == ["你好", "世界"]
    assert all(isinstance(alts, list) and text not in alts for text, alts in done)
    assert off_ui(qtbot, service.translate_nbest, ["same"], "en", "en", 2) == [("same", [])]
