"""The worker thread contract: off the UI thread, latest request wins, cancel keeps the partial text, streamed
text is coalesced and in order, precision switches idle and mid-translation, load failures reported."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QObject

from engine.errors import ModelNotFoundError
from engine.options import TranslationOptions
from gui.worker.scheduler import NO_MODEL, ModelInfo, ModelProblem, WorkerThread
from tests.gui.fakes import (
    BrokenManifest,
    FakeFactory,
    bundle_error,
    fake_translate_text,
    fixed_locator,
    missing_locator,
)


class _Sink(QObject):
    """A receiver living on the UI thread, so cross-thread signals are queued to it (as they are to the window)."""

    def __init__(self, name: str, recorder: Recorder) -> None:
        super().__init__()
        self.name, self.recorder = name, recorder

    def hit(self, *args: object) -> None:
        self.recorder.add(self.name, args)


class Recorder:
    """Collects every worker signal, in arrival order, on the UI thread."""

    def __init__(self, worker) -> None:
        self.events: list[tuple] = []
        self.sinks: list[_Sink] = []
        self.ui_thread = threading.get_ident()
        self.handler_threads: set[int] = set()
        for name in (
            "model_loading",
            "model_ready",
            "model_failed",
            "error",
            "translation_started",
            "translation_progress",
            "translation_finished",
            "translation_failed",
            "switch_failed",
        ):
            sink = _Sink(name, self)
            self.sinks.append(sink)
            getattr(worker, name).connect(sink.hit)

    def add(self, name: str, args: tuple) -> None:
        self.handler_threads.add(threading.get_ident())
        self.events.append((name, *args))

    def of(self, name: str) -> list[tuple]:
        return [e[1:] for e in self.events if e[0] == name]


@pytest.fixture
def engine_thread(tmp_path):
    threads: list[WorkerThread] = []

    def make(factory=None, locator=None) -> tuple[WorkerThread, Recorder]:
        factory = factory or FakeFactory()
        expected = lambda pair=None: tmp_path / "expected"  # noqa: E731
        wt = WorkerThread(factory, locator or fixed_locator(tmp_path), expected, factory.verify)
        threads.append(wt)
        return wt, Recorder(wt.worker)

    yield make
    for wt in threads:
        assert wt.shutdown(5000)


def load(qtbot, wt: WorkerThread, rec: Recorder, precision: str = "int8") -> ModelInfo:
    wt.worker.load(None, precision, None)
    qtbot.waitUntil(lambda: bool(rec.of("model_ready") or rec.of("model_failed")), timeout=5000)
    assert rec.of("model_ready"), rec.events
    return rec.of("model_ready")[-1][0]


def test_load_and_translate_run_on_the_worker_thread_and_signals_arrive_on_the_ui_thread(qtbot, engine_thread):
    factory = FakeFactory()
    wt, rec = engine_thread(factory)
    info = load(qtbot, wt, rec)
    assert info.precision == "int8" and info.default_beams == 4 and info.license == "CC-BY-4.0"
    options = TranslationOptions(beams=2, variant="hans")
    rid = wt.worker.translate("Hello world.", options)
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=5000)
    ((fid, result),) = rec.of("translation_finished")
    assert fid == rid and result.text == "你好世界。" and not result.cancelled
    tr = factory.translator
    assert tr.calls == [{"text": "Hello world.", "beams": 2, "script": "hans", "precision": "int8", "options": options}]
    assert threading.get_ident() not in tr.threads_seen | set(factory.load_threads)
    assert rec.handler_threads == {rec.ui_thread}


def test_streamed_text_is_in_order_coalesced_and_equals_the_result(qtbot, engine_thread):
    wt, rec = engine_thread(FakeFactory())
    load(qtbot, wt, rec)
    text = "\n".join(["hello world the language model is good bridge morning."] * 400)  # 3600 deltas, no delay
    rid = wt.worker.translate(text)
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=10_000)
    chunks = [p for p in rec.of("translation_progress") if p[0] == rid]
    ((_, result),) = rec.of("translation_finished")
    assert "".join(c[1] for c in chunks) == result.text == fake_translate_text(text)
    assert len(chunks) < 3600 / 10, "deltas must be coalesced, not one signal per token"
    done = [c[2] for c in chunks]
    assert done == sorted(done) and chunks[-1][3] == 400
    names = [e[0] for e in rec.events if e[0].startswith("translation")]
    assert names[0] == "translation_started" and names[-1] == "translation_finished"


def test_latest_request_wins_and_cancels_the_running_one(qtbot, engine_thread):
    factory = FakeFactory(token_delay=0.01)
    wt, rec = engine_thread(factory)
    load(qtbot, wt, rec)
    wt.worker.translate(" ".join(["hello"] * 500))  # ~5 s if it were allowed to finish
    qtbot.waitUntil(lambda: bool(rec.of("translation_progress")), timeout=5000)
    second = wt.worker.translate("good morning")
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=3000)
    finished = rec.of("translation_finished")
    assert [f[0] for f in finished] == [second], "the superseded request reports nothing"
    assert finished[0][1].text == "好早上"
    assert len(factory.translator.calls) == 2


def test_cancel_keeps_the_part_already_translated(qtbot, engine_thread):
    wt, rec = engine_thread(FakeFactory(token_delay=0.01))
    load(qtbot, wt, rec)
    rid = wt.worker.translate(" ".join(["bridge"] * 1000))
    qtbot.waitUntil(lambda: bool(len("".join(p[1] for p in rec.of("translation_progress"))) >= 3), timeout=5000)
    wt.worker.cancel()
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=2000)
    ((fid, result),) = rec.of("translation_finished")
    assert fid == rid and result.cancelled
    assert 3 <= len(result.text) < 1000 and set(result.text) == {"桥"}
    assert "".join(p[1] for p in rec.of("translation_progress")) == result.text


def test_precision_switch_while_idle_applies_without_reloading(qtbot, engine_thread):
    factory = FakeFactory()
    wt, rec = engine_thread(factory)
    load(qtbot, wt, rec)
    wt.worker.set_precision("fp32")
    qtbot.waitUntil(lambda: bool(len(rec.of("model_ready")) == 2), timeout=5000)
    info = rec.of("model_ready")[-1][0]
    assert info.precision == "fp32" and info.switched
    assert ("switch", "fp32") in rec.of("model_loading")
    assert len(factory.built) == 1 and factory.translator.precision_switches == ["fp32"]
    wt.worker.translate("hello")
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=5000)
    assert rec.of("translation_finished")[0][1].stats.precision == "fp32"


def test_precision_switch_while_translating_restarts_the_request_in_the_new_precision(qtbot, engine_thread):
    gate = threading.Event()
    factory = FakeFactory(gate=gate)
    wt, rec = engine_thread(factory)
    load(qtbot, wt, rec)
    rid = wt.worker.translate("hello world")
    qtbot.waitUntil(lambda: bool(rec.of("translation_started")), timeout=5000)
    wt.worker.set_precision("fp32")  # the request is blocked inside the engine right now
    qtbot.waitUntil(lambda: bool(len(rec.of("translation_started")) == 2), timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=5000)
    finished = rec.of("translation_finished")
    assert [f[0] for f in finished] == [rid]
    assert finished[0][1].text == "你好世界" and finished[0][1].stats.precision == "fp32"
    assert [c["precision"] for c in factory.translator.calls] == ["int8", "fp32"]


def test_missing_model_is_reported_with_where_it_looked(qtbot, engine_thread, tmp_path):
    wt, rec = engine_thread(FakeFactory(), missing_locator(["/a/models", "/b/models"]))
    wt.worker.load(None, "int8", None)
    qtbot.waitUntil(lambda: bool(rec.of("model_failed")), timeout=5000)
    problem: ModelProblem = rec.of("model_failed")[0][0]
    assert problem.kind == "missing"
    assert problem.details == ("/a/models", "/b/models")
    assert problem.expected_dir == str(tmp_path / "expected")
    rid = wt.worker.translate("hello")
    qtbot.waitUntil(lambda: bool(rec.of("translation_failed")), timeout=5000)
    assert rec.of("translation_failed") == [(rid, NO_MODEL)]


def test_bundle_failing_its_manifest_check_is_reported_with_the_problems(qtbot, engine_thread, tmp_path):
    broken = str(tmp_path / "bundle")
    factory = FakeFactory(fail=bundle_error(broken, ["encoder.onnx: sha256 mismatch", "tokenizer.json: missing"]))
    wt, rec = engine_thread(factory)
    wt.worker.load(None, "int8", None)
    qtbot.waitUntil(lambda: bool(rec.of("model_failed")), timeout=5000)
    problem: ModelProblem = rec.of("model_failed")[0][0]
    assert problem.kind == "invalid" and problem.bundle_dir == broken
    assert problem.details == ("encoder.onnx: sha256 mismatch", "tokenizer.json: missing")


def test_explicit_model_dir_is_passed_to_the_locator(qtbot, engine_thread, tmp_path):
    seen: list = []

    def locator(explicit, pair=None):
        seen.append(explicit)
        raise ModelNotFoundError("nope", [explicit])

    wt, rec = engine_thread(FakeFactory(), locator)
    wt.worker.load("/my/model", "int8", None)
    qtbot.waitUntil(lambda: bool(rec.of("model_failed")), timeout=5000)
    assert seen == ["/my/model"]


def test_threads_setting_reaches_the_translator_on_the_worker_thread(qtbot, engine_thread):
    factory = FakeFactory()
    wt, rec = engine_thread(factory)
    load(qtbot, wt, rec)
    wt.worker.set_threads(3)
    qtbot.waitUntil(lambda: bool(factory.translator.threads == 3), timeout=5000)
    assert threading.get_ident() not in factory.translator.threads_seen


def test_shutdown_mid_translation_stops_promptly(qtbot, engine_thread):
    wt, rec = engine_thread(FakeFactory(token_delay=0.01))
    load(qtbot, wt, rec)
    wt.worker.translate(" ".join(["hello"] * 5000))
    qtbot.waitUntil(lambda: bool(rec.of("translation_progress")), timeout=5000)
    assert wt.shutdown(2000), "cancel must stop the engine within a decoder step"


def test_options_travel_whole_to_the_translator(qtbot, engine_thread):
    factory = FakeFactory()
    wt, rec = engine_thread(factory)
    load(qtbot, wt, rec)
    options = TranslationOptions(beams=6, variant="hant", join_wrapped_lines=False, normalize_punctuation=False)
    wt.worker.translate("hello", options)
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=5000)
    assert factory.translator.calls[0]["options"] == options
    assert rec.of("translation_finished")[0][1].text == "你好"


def test_translate_with_a_precision_switches_first_and_runs_only_the_new_request(qtbot, engine_thread):
    gate = threading.Event()
    factory = FakeFactory(gate=gate)
    wt, rec = engine_thread(factory)
    load(qtbot, wt, rec)
    wt.worker.translate("hello world")
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 1, timeout=5000)
    rid = wt.worker.translate("hello world", TranslationOptions(variant="hant"), precision="fp32")
    qtbot.waitUntil(lambda: len(factory.translator.calls) == 2, timeout=5000)
    gate.set()
    qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=5000)
    assert [(c["precision"], c["script"]) for c in factory.translator.calls] == [("int8", "hans"), ("fp32", "hant")]
    assert [r[0] for r in rec.of("translation_finished")] == [rid], "the replaced request is not reported"


def _hash_problem(precision: str):
    from engine.errors import FileProblem

    file = f"{precision}/decoder.onnx"
    return bundle_error("/b", [FileProblem("hash", file, f"{file}: sha256 mismatch")])


def test_a_broken_precision_reports_the_intact_one(qtbot, engine_thread):
    factory = FakeFactory(fail_for={"int8": _hash_problem("int8")})
    wt, rec = engine_thread(factory)
    wt.worker.load(None, "int8", None)
    qtbot.waitUntil(lambda: bool(rec.of("model_failed")), timeout=5000)
    problem: ModelProblem = rec.of("model_failed")[0][0]
    assert problem.kind == "invalid" and problem.precision == "int8"
    assert problem.alternatives == ("fp32",) and factory.verified == ["fp32"]
    assert [(i.kind, i.file) for i in problem.issues] == [("hash", "int8/decoder.onnx")]


def test_no_alternative_when_every_precision_is_broken(qtbot, engine_thread):
    factory = FakeFactory(fail_for={"int8": _hash_problem("int8"), "fp32": _hash_problem("fp32")})
    wt, rec = engine_thread(factory)
    wt.worker.load(None, "int8", None)
    qtbot.waitUntil(lambda: bool(rec.of("model_failed")), timeout=5000)
    assert rec.of("model_failed")[0][0].alternatives == ()


@pytest.mark.parametrize(
    "factory_kwargs",
    [
        {"fail": KeyError("id")},
        {"fail": TypeError("string indices must be integers, not 'str'")},
        {"manifest": BrokenManifest(KeyError("id"))},
        {"manifest": BrokenManifest(TypeError("string indices must be integers, not 'str'"))},
    ],
    ids=["load-keyerror", "load-typeerror", "info-no-id", "info-model-is-a-string"],
)
def test_any_exception_while_loading_or_describing_the_model_is_reported(qtbot, engine_thread, factory_kwargs):
    wt, rec = engine_thread(FakeFactory(**factory_kwargs))
    wt.worker.load(None, "int8", None)
    qtbot.waitUntil(lambda: bool(rec.of("model_failed")), timeout=5000)
    problem: ModelProblem = rec.of("model_failed")[0][0]
    assert problem.kind == "error" and not rec.of("model_ready")
    assert problem.message.startswith(("KeyError", "TypeError"))
    rid = wt.worker.translate("hello")
    qtbot.waitUntil(lambda: bool(rec.of("translation_failed")), timeout=5000)
    assert rec.of("translation_failed") == [(rid, NO_MODEL)], "the worker lives on and says there is no model"


def test_a_failed_precision_switch_keeps_the_old_one_and_says_why(qtbot, engine_thread):
    factory = FakeFactory()
    wt, rec = engine_thread(factory)
    load(qtbot, wt, rec)
    factory.translator.fail_for["fp32"] = _hash_problem("fp32")
    wt.worker.set_precision("fp32")
    qtbot.waitUntil(lambda: bool(rec.of("switch_failed")), timeout=5000)
    precision, problem = rec.of("switch_failed")[0]
    assert precision == "fp32" and problem.issues[0].file == "fp32/decoder.onnx"
    assert factory.translator.precision == "int8"


def test_the_pair_asked_for_reaches_the_locator(qtbot, engine_thread, tmp_path):
    asked: list = []

    def locator(explicit, pair=None):
        asked.append((explicit, pair))
        return tmp_path

    wt, rec = engine_thread(FakeFactory(), locator)
    wt.worker.load(None, "int8", None, "zh-en")
    qtbot.waitUntil(lambda: bool(rec.of("model_ready")), timeout=5000)
    assert asked == [(None, "zh-en")]


def test_model_info_carries_the_pair_and_a_failure_the_direction_asked_for(qtbot, engine_thread):
    from tests.gui.fakes import EN_ZH

    wt, rec = engine_thread(FakeFactory())
    info = load(qtbot, wt, rec)
    assert info.pair == EN_ZH and info.variants == ("hans", "hant")
    assert info.pairs == ("en-zh",), "at least the loaded bundle's pair, when the store lists nothing"
    wt2, rec2 = engine_thread(FakeFactory(), missing_locator(["/nowhere"]))
    wt2.worker.load(None, "int8", None, "zh-en")
    qtbot.waitUntil(lambda: bool(rec2.of("model_failed")), timeout=5000)
    assert rec2.of("model_failed")[0][0].pair_key == "zh-en"


class StreamOnly:
    """A translator with `stream()` and no `translate()`: the worker must iterate the stream itself."""

    def __init__(self) -> None:
        from tests.gui.fakes import FakeManifest

        self.precision = "int8"
        self.available_precisions = ("int8",)
        self.manifest = FakeManifest()
        self.threads: set[int] = set()

    def set_precision(self, precision: str) -> None:
        self.precision = precision

    def set_threads(self, threads) -> None:
        pass

    def stream(self, text, options=None, *, cancel=None):
        from engine.results import StreamEvent, Translation

        self.threads.add(threading.get_ident())
        parts = ["你好", "世界"]
        for i, part in enumerate(parts, 1):
            yield StreamEvent(part, i, len(parts))
        yield Translation(text="".join(parts))


def test_the_worker_iterates_the_stream_itself(qtbot, tmp_path):
    tr = StreamOnly()
    wt = WorkerThread(lambda *a: tr, fixed_locator(tmp_path), lambda pair=None: tmp_path, lambda *a: None)
    rec = Recorder(wt.worker)
    try:
        load(qtbot, wt, rec)
        rid = wt.worker.translate("hello world")
        qtbot.waitUntil(lambda: bool(rec.of("translation_finished")), timeout=5000)
        assert rec.of("translation_failed") == []
        assert rec.of("translation_finished")[0][0] == rid and rec.of("translation_finished")[0][1].text == "你好世界"
        assert "".join(p[1] for p in rec.of("translation_progress")) == "你好世界"
        assert tr.threads and threading.get_ident() not in tr.threads
    finally:
        assert wt.shutdown(5000)


class _Port:
    """One EnginePort object (gui.worker.model_load): what the worker asks of the engine, logged by name."""

    def __init__(self, tmp_path) -> None:
        self.factory = FakeFactory()
        self.tmp_path = tmp_path
        self.asked: list[str] = []

    def open(self, bundle, precision, threads):
        self.asked.append("open")
        return self.factory(bundle, precision, threads)

    def locate(self, explicit, pair):
        self.asked.append("locate")
        return self.tmp_path

    def expected_dir(self, pair):
        self.asked.append("expected_dir")
        return self.tmp_path / "expected"

    def verify(self, bundle, precision):
        self.asked.append("verify")

    def pairs(self, explicit):
        self.asked.append("pairs")
        return ("en-zh", "zh-en")

    def document_job(self, source, options, translation, *, target_lang, model_key):
        raise AssertionError("no document was queued")


def test_the_worker_reaches_the_engine_through_one_port(qtbot, tmp_path):
    port = _Port(tmp_path)
    wt = WorkerThread(engine=port)
    rec = Recorder(wt.worker)
    try:
        info = load(qtbot, wt, rec)
        assert info.pairs == ("en-zh", "zh-en") and info.bundle_dir == str(tmp_path)
        assert sorted(port.asked) == ["expected_dir", "locate", "open", "pairs"]
        with pytest.raises(TypeError):
            WorkerThread(port.factory, engine=port)  # one or the other, never a mix
    finally:
        assert wt.shutdown(5000)
