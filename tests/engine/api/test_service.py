"""EngineService: one worker, arrival order, a bounded queue, at most two models, and the real tiny model."""

from __future__ import annotations

import json
import threading
import time

import pytest

from engine.api.errors import ApiError, Busy, UnsupportedLanguage
from engine.api.languages import PairInfo, detect, parse_code, resolve
from engine.api.service import EngineService, installed_pairs
from engine.results import StreamEvent, Translation

from .fakes import PAIRS


class FakeTranslator:
    """Stands in for engine.pipeline.translator.Translator; `gate` holds the worker inside a translation."""

    def __init__(self, pair: str, log: list, gate: threading.Event | None = None) -> None:
        self.pair, self.log, self.gate = pair, log, gate

    def translate_segments(self, texts, options=None, *, cancel=None):
        if self.gate is not None:
            self.gate.wait(5)
        self.log.append((self.pair, list(texts), options.variant if options else None, threading.current_thread().name))
        for t in texts:
            yield Translation(text=f"{self.pair}:{t}", cancelled=bool(cancel and cancel.is_set()))

    def stream(self, text, options=None, *, cancel=None):
        for word in text.split():
            yield StreamEvent(word + " ", 0, 1)
        yield Translation(text=text)


def service_with(log: list, gate: threading.Event | None = None, **kwargs) -> tuple[EngineService, list[str]]:
    loads: list[str] = []

    def loader(pair: str):
        loads.append(pair)
        return FakeTranslator(pair, log, gate)

    return EngineService(pairs=list(PAIRS), loader=loader, **kwargs), loads


def test_requests_run_on_one_worker_in_arrival_order():
    log: list = []
    service, _ = service_with(log)
    try:
        results: dict[int, list[str]] = {}

        def client(i: int) -> None:
            results[i] = service.translate([f"t{i}"], "en", "zh")

        threads = []
        for i in range(20):
            threads.append(threading.Thread(target=client, args=(i,)))
            threads[-1].start()
            time.sleep(0.005)  # arrival order is the order started
        for t in threads:
            t.join(5)
        assert results == {i: [f"en-zh:t{i}"] for i in range(20)}
        assert {entry[3] for entry in log} == {"qiao-api-engine"}
    finally:
        service.close()


def test_fifo_order_is_kept_while_the_worker_is_busy():
    log: list = []
    gate = threading.Event()
    service, _ = service_with(log, gate)
    try:
        threads = [threading.Thread(target=service.translate, args=([f"t{i}"], "en", "zh")) for i in range(6)]
        for t in threads:
            t.start()
            time.sleep(0.02)
        gate.set()
        for t in threads:
            t.join(5)
        assert [entry[1] for entry in log] == [[f"t{i}"] for i in range(6)]
    finally:
        service.close()


def test_a_full_queue_is_busy_at_once():
    gate = threading.Event()
    service, _ = service_with([], gate, queue_size=2)
    try:
        threads = [threading.Thread(target=service.translate, args=(["x"], "en", "zh")) for _ in range(3)]
        for t in threads:  # one on the worker, two waiting: the queue is full
            t.start()
            time.sleep(0.05)
        began = time.monotonic()
        with pytest.raises(Busy) as info:
            service.translate(["y"], "en", "zh")
        assert time.monotonic() - began < 1
        assert info.value.status == 503 and info.value.headers["Retry-After"]
        gate.set()
        for t in threads:
            t.join(5)
    finally:
        service.close()


def test_a_request_that_waits_past_its_timeout_is_busy_and_skipped():
    log: list = []
    gate = threading.Event()
    service, _ = service_with(log, gate)
    try:
        first = threading.Thread(target=service.translate, args=(["first"], "en", "zh"))
        first.start()
        time.sleep(0.05)
        with pytest.raises(Busy):
            service.translate(["late"], "en", "zh", timeout=0.1)
        gate.set()
        first.join(5)
        assert service.translate(["after"], "en", "zh") == ["en-zh:after"]
        assert [entry[1] for entry in log] == [["first"], ["after"]]  # the timed-out one never ran
    finally:
        service.close()


def test_at_most_two_models_are_kept():
    service, loads = service_with([], max_loaded=2)
    pairs = [PAIRS[0], PAIRS[1], PairInfo("en", "fr", "English", "French")]
    service._pairs = pairs
    try:
        for src, tgt in (("en", "zh"), ("zh", "en"), ("en", "zh"), ("en", "fr"), ("zh", "en"), ("en", "zh")):
            service.translate(["x"], src, tgt)
        # en-zh stayed (recently used) when en-fr came; zh-en was dropped then and loaded again
        assert loads == ["en-zh", "zh-en", "en-fr", "zh-en", "en-zh"]
        assert len(service._loaded) == 2
    finally:
        service.close()


def test_variant_source_auto_and_same_language():
    log: list = []
    service, _ = service_with(log)
    try:
        assert service.translate(["x"], "en", "zh-Hant") == ["en-zh:x"]
        assert log[-1][2] == "hant"
        assert service.translate(["你好"], "auto", "en") == ["zh-en:你好"]
        assert service.translate(["same"], "en", "en") == ["same"]
        assert service.translate([], "en", "zh") == []
    finally:
        service.close()


def test_refusals():
    service, loads = service_with([])
    try:
        with pytest.raises(UnsupportedLanguage, match="ja is not supported"):
            service.translate(["x"], "en", "ja")
        with pytest.raises(ApiError, match="not supported"):
            service.translate(["x"], "en", "zh", fmt="xml")
        with pytest.raises(ApiError):
            service.translate("one string", "en", "zh")  # type: ignore[arg-type]
        with pytest.raises(ApiError):
            service.translate([1], "en", "zh")  # type: ignore[list-item]
        assert loads == []
    finally:
        service.close()
    with pytest.raises(Busy, match="shutting down"):
        service.translate(["x"], "en", "zh")


def test_a_load_failure_reaches_the_request_and_the_worker_goes_on():
    calls = []

    def loader(pair: str):
        calls.append(pair)
        if len(calls) == 1:
            from engine.errors import ModelNotFoundError

            raise ModelNotFoundError("no en-zh model installed")
        return FakeTranslator(pair, [])

    service = EngineService(pairs=list(PAIRS), loader=loader)
    try:
        with pytest.raises(Exception, match="no en-zh model"):
            service.translate(["x"], "en", "zh")
        assert service.translate(["x"], "en", "zh") == ["en-zh:x"]
    finally:
        service.close()


def test_stream_yields_deltas_and_closing_it_cancels():
    service, _ = service_with([])
    try:
        assert "".join(service.stream("a b c", "en", "zh")) == "a b c "
        it = service.stream("a b c d", "en", "zh")
        assert next(it) == "a "
        it.close()
        assert service.translate(["x"], "en", "zh") == ["en-zh:x"]  # the worker is free again
    finally:
        service.close()


def test_close_answers_the_waiting_requests():
    gate = threading.Event()
    service, _ = service_with([], gate)
    errors: list = []

    def client() -> None:
        try:
            service.translate(["x"], "en", "zh")
        except Busy as exc:
            errors.append(exc)

    threads = [threading.Thread(target=client) for _ in range(3)]
    for t in threads:
        t.start()
        time.sleep(0.03)
    closer = threading.Thread(target=service.close)
    closer.start()
    time.sleep(0.1)
    gate.set()
    closer.join(10)
    for t in threads:
        t.join(5)
    assert len(errors) == 2  # the one running finished; the two waiting were told


# -- language codes and detection ---------------------------------------------------------------------------------


def test_parse_code_and_detect():
    assert parse_code("zh-Hant", "target") == ("zh", "hant")
    assert parse_code("ZH_tw", "target") == ("zh", "hant")
    assert parse_code("zh-CN", "target") == ("zh", "hans")
    assert parse_code("en", "source") == ("en", None)
    with pytest.raises(ApiError, match="missing source"):
        parse_code(None, "source")
    assert detect("我喜欢 iPhone 手机")[0][0] == "zh"
    assert detect("I like 苹果 very much")[0][0] == "en"
    assert detect("12345 😀") == [("en", 0.0), ("zh", 0.0)]
    top = detect("Hello")
    assert top[0] == ("en", 100.0)
    assert resolve(PAIRS, ["x"], "auto", "zh").pair == PAIRS[0]


# -- the real engine ----------------------------------------------------------------------------------------------


def test_the_tiny_model_through_the_service(bundle_dir):
    service = EngineService(str(bundle_dir))
    try:
        assert [p.key for p in service.languages()] == ["en-zh"]
        assert service.translate(["Thank you very much.", "See you tomorrow."], "en", "zh") == [
            "非常感谢。",
            "明天见。",
        ]
        assert service.translate(["Thank you very much."], "en", "zh-Hant") == ["非常感謝。"]
        assert "".join(service.stream("Thank you very much.", "en", "zh")) == "非常感谢。"
        html = service.translate(["<p>Thank you very much.</p>"], "en", "zh", fmt="html")
        assert html == ["<p>非常感谢。</p>"]
        with pytest.raises(UnsupportedLanguage, match="no zh-en model"):
            service.translate(["你好"], "zh", "en")
    finally:
        service.close()


def test_installed_pairs_finds_both_fixture_directions(tmp_path, monkeypatch, bundle_dir, zh_en_bundle_dir):
    models = tmp_path / "data" / "models"
    models.mkdir(parents=True)
    (models / "opus-mt-en-zh").symlink_to(bundle_dir.resolve())
    (models / "opus-mt-zh-en").symlink_to(zh_en_bundle_dir.resolve())
    monkeypatch.setenv("QIAO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("QIAO_MODEL_DIR", raising=False)
    keys = [p.key for p in installed_pairs()]
    assert "en-zh" in keys and "zh-en" in keys
    assert [p.key for p in installed_pairs(str(zh_en_bundle_dir))] == ["zh-en"]
    service = EngineService()
    try:  # switching pairs loads the other bundle on the worker
        assert service.translate(["Thank you very much."], "en", "zh") == ["非常感谢。"]
        assert service.translate(["非常感谢。"], "auto", "en") == ["Thank you very much."]
        assert service.translate(["Thank you very much."], "auto", "zh") == ["非常感谢。"]
    finally:
        service.close()


def test_a_stream_that_fails_on_the_worker_raises_at_once():
    class Failing(FakeTranslator):
        def stream(self, text, options=None, *, cancel=None):
            yield StreamEvent("first ", 0, 1)
            raise RuntimeError("decoder broke")

    service = EngineService(pairs=list(PAIRS), loader=lambda pair: Failing(pair, []))
    try:
        it = service.stream("a b", "en", "zh", timeout=30)
        assert next(it) == "first "
        began = time.monotonic()
        with pytest.raises(RuntimeError, match="decoder broke"):
            next(it)
        assert time.monotonic() - began < 5
    finally:
        service.close()


class Endless(FakeTranslator):
    """A translation that never ends by itself (as a huge request on a slow machine): it stops only when
    cancelled, and says when it saw the cancel."""

    def __init__(self, pair: str, log: list, stopped: threading.Event) -> None:
        super().__init__(pair, log)
        self.stopped = stopped

    def translate_segments(self, texts, options=None, *, cancel=None):
        if texts != ["forever"]:
            yield from super().translate_segments(texts, options, cancel=cancel)
            return
        deadline = time.monotonic() + 10  # bounded: the test fails rather than hangs
        while not (cancel is not None and cancel.is_set()) and time.monotonic() < deadline:
            time.sleep(0.01)
        self.stopped.set()
        yield Translation(text="", cancelled=True)


def test_a_request_over_its_time_limit_is_504_and_the_engine_stops():
    """One 100,000-character request took 11.6 s; the limit is the whole request's (configurable), the answer
    a clear 504 JSON error, and the engine is told to stop (the next request is served)."""
    from engine.api import app as app_mod
    from engine.cli import serve as cli_serve

    from .fakes import call, make_app

    assert cli_serve.REQUEST_TIMEOUT_S == app_mod.REQUEST_TIMEOUT_S
    log: list = []
    stopped = threading.Event()
    service = EngineService(pairs=list(PAIRS), loader=lambda pair: Endless(pair, log, stopped))
    app, _ = make_app(service, timeout_s=0.5)  # type: ignore[arg-type]
    try:
        began = time.monotonic()
        queued: dict = {}
        behind = threading.Thread(  # waits behind it in the queue: 503 Busy, never started
            target=lambda: queued.update(
                r=call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": "zh"})
            )
        )
        reply_box: dict = {}
        first = threading.Thread(
            target=lambda: reply_box.update(
                r=call(app, "POST", "/translate", json_body={"q": "forever", "source": "en", "target": "zh"})
            )
        )
        first.start()
        time.sleep(0.1)
        behind.start()
        first.join(5)
        behind.join(5)
        reply = reply_box["r"]
        assert reply.status == 504
        assert "did not finish within 0.5 s" in reply.json()["error"] and "--request-timeout" in reply.json()["error"]
        assert time.monotonic() - began < 2.0
        assert stopped.wait(2), "the engine was not told to stop"
        assert queued["r"].status in (200, 503)  # the queued one: served after the stop, or refused as busy
        after = call(app, "POST", "/translate", json_body={"q": "x", "source": "en", "target": "zh"})
        assert (after.status, after.json()) == (200, {"translatedText": "en-zh:x"})
    finally:
        service.close()


def test_nbest_alternatives_are_whole_texts_with_each_sentence_replaced():
    from engine.api.service import text_alternatives
    from engine.results import Alternative, SentenceResult

    def alt(text: str) -> Alternative:
        return Alternative(text=text, tokens=(), score=0.0)

    text = "你好。再见。"
    sentences = [
        SentenceResult(0, "Hello.", (0, 6), (0, 3), alternatives=(alt("您好。"), alt("哈喽。"))),
        SentenceResult(1, "Bye.", (7, 11), (3, 6), alternatives=(alt("拜拜。"),)),
    ]
    out = text_alternatives(Translation(text=text, sentences=sentences), 3)
    assert out == ["您好。拜拜。", "哈喽。再见。"]
    assert text_alternatives(Translation(text=text, sentences=sentences), 1) == ["您好。拜拜。"]
    assert text_alternatives(Translation(text="x"), 3) == []


def test_nbest_alternatives_keep_a_sentence_left_empty_as_its_source():
    """An alternative never loses a sentence: where the sentence's text there is empty, its source stands in (as
    the translation itself comes back: documents.kept_texts); the translation with its sentence kept is not listed
    again as an alternative."""
    from engine.api.documents import kept_texts
    from engine.api.service import text_alternatives
    from engine.results import Alternative, SentenceResult

    def alt(text: str) -> Alternative:
        return Alternative(text=text, tokens=(), score=0.0)

    source = "Hello. Thank you."
    text = "你好。"  # the model gave the second sentence nothing
    sentences = [
        SentenceResult(0, "Hello.", (0, 6), (0, 3), alternatives=(alt("您好。"), alt("哈喽。"))),
        SentenceResult(1, "Thank you.", (7, 17), (3, 3), alternatives=(alt(""), alt("谢谢。"))),
    ]
    done = Translation(text=text, sentences=sentences)
    (kept,) = kept_texts([source], [done])
    assert kept == "你好。Thank you."
    assert text_alternatives(done, 3) == ["您好。Thank you.", "哈喽。谢谢。"]
    assert "" not in text_alternatives(Translation(text="", sentences=sentences[1:2]), 3)
    assert kept not in text_alternatives(done, 3)


def test_kept_texts_marks_only_what_it_put_back():
    from engine.api.documents import kept_sentences, kept_texts
    from engine.results import SentenceResult

    whole = Translation(text="你好。谢谢。", sentences=[
        SentenceResult(0, "Hello.", (0, 6), (0, 3)), SentenceResult(1, "Thanks.", (7, 14), (3, 6)),
    ])  # fmt: skip
    gap = Translation(text="你好。", sentences=[
        SentenceResult(0, "Hello.", (0, 6), (0, 3)), SentenceResult(1, "Thanks.", (7, 14), (3, 3)),
    ])  # fmt: skip
    nothing = Translation(text="", sentences=[SentenceResult(0, "Thanks.", (0, 7), (0, 0))])
    out = kept_texts(["Hello. Thanks.", "Hello. Thanks.", "Thanks."], [whole, gap, nothing])
    assert out == ["你好。谢谢。", "你好。Thanks.", ""]  # the whole-empty text is the caller's to keep
    assert [kept_sentences(t) for t in out] == [(), ("Thanks.",), ()]
    assert json.loads(json.dumps(out)) == out  # a plain JSON string
