"""The request controller alone, no window: the latest request wins, a superseded request's reports are ignored,
a batch of settings changes redoes what is shown at most once, and typing's timer decides when to translate."""

from __future__ import annotations

from dataclasses import replace

import pytest

from engine.options import TranslationOptions
from engine.results import Translation
from gui.settings import Key
from gui.window.request_controller import RequestController
from gui.worker.scheduler import ModelInfo, ModelProblem, WorkerThread
from tests.gui.fakes import EN_ZH, EN_ZH_HANS_ONLY, FakeFactory, FakeWorker, fake_translate_text, fixed_locator

MODEL = ModelInfo("/b", "fake", "CC-BY-4.0", "", "int8", ("int8", "fp32"), 4, 0.1, pair=EN_ZH)


class Source:
    """The text a window's source pane would hold."""

    def __init__(self, text: str = "") -> None:
        self.text = text

    def __call__(self) -> str:
        return self.text


class Seen:
    """Every signal the controller sends, in order."""

    def __init__(self, controller: RequestController) -> None:
        self.events: list[tuple] = []
        for name in ("requested", "redone", "emptied", "started", "progress", "finished", "failed"):
            getattr(controller, name).connect(lambda *args, name=name: self.events.append((name, *args)))

    def of(self, name: str) -> list[tuple]:
        return [e[1:] for e in self.events if e[0] == name]


@pytest.fixture
def made(settings):
    """A controller on a FakeWorker whose model is loaded; returns (controller, worker, source, seen)."""
    kept: list[tuple] = []  # a test may drop the controller: it must stay alive to hear the settings

    def make(text: str = "hello world"):
        worker = FakeWorker()
        source = Source(text)
        controller = RequestController(worker, settings, source)
        worker.model_ready.emit(MODEL)
        kept.append((controller, worker, source, Seen(controller)))
        return kept[-1]

    return make


def settle(qtbot) -> None:
    """Let the zero-delay decision after a batch of settings changes run."""
    qtbot.wait(20)


def finish(worker: FakeWorker, request_id: int, text: str = "你好世界", cancelled: bool = False) -> Translation:
    result = Translation(text=text, cancelled=cancelled)
    worker.translation_finished.emit(request_id, result)
    return result


def test_a_finished_result_of_a_superseded_request_is_ignored(made):
    controller, worker, _, seen = made()
    first = controller.request("hello")
    second = controller.request("hello world")
    worker.translation_started.emit(first)
    worker.translation_progress.emit(first, "你好", 1, 1)
    finish(worker, first, "你好")
    assert controller.translating and controller.last_result is None
    assert seen.of("started") == seen.of("progress") == seen.of("finished") == []
    result = finish(worker, second)
    assert seen.of("finished") == [(second, result)] and controller.last_result is result
    assert not controller.translating and controller.current_id == second


def test_the_latest_request_wins_and_its_reports_are_forwarded(made):
    controller, worker, _, seen = made()
    ids = [controller.request(text) for text in ("hello", "hello world", "good morning")]
    assert seen.of("requested") == [(i,) for i in ids] and controller.translated_source == "good morning"
    worker.translation_started.emit(ids[-1])
    worker.translation_progress.emit(ids[-1], "早上", 1, 2)
    worker.translation_failed.emit(ids[0], "boom")  # the old one's failure is not ours to show
    assert seen.of("started") == [(ids[-1],)] and seen.of("progress") == [(ids[-1], "早上", 1, 2)]
    assert seen.of("failed") == [] and controller.sentences == (1, 2) and controller.translating
    worker.translation_failed.emit(ids[-1], "boom")
    assert seen.of("failed") == [(ids[-1], "boom")] and not controller.translating


def test_request_settings_changed_together_redo_the_shown_translation_once(qtbot, made, settings):
    controller, worker, _, seen = made()
    rid = controller.request("hello world")
    finish(worker, rid)
    settings.set(Key.VARIANT, "hant")
    settings.set(Key.BEAMS, 2)
    settings.set(Key.PRECISION, "fp32")
    settings.set(Key.NORMALIZE_PUNCTUATION, False)
    assert len(worker.of("translate")) == 1, "nothing is decided before the batch ends"
    settle(qtbot)
    (redo,) = worker.of("translate")[1:]
    options = TranslationOptions(beams=2, variant="hant", join_wrapped_lines=True, normalize_punctuation=False)
    assert redo[1:] == ("hello world", options, "fp32"), "one request, every change applied, precision switched first"
    assert seen.of("redone") == [(redo[0],)] and controller.made.precision == "fp32"
    assert worker.of("set_precision") == []
    finish(worker, rid)  # the replaced request's late result changes nothing
    assert controller.translating and seen.of("finished") == [(rid, controller.last_result)]


def test_a_result_of_the_request_a_redo_replaced_is_ignored(qtbot, made, settings):
    controller, worker, _, seen = made()
    rid = controller.request("hello world")
    settings.set(Key.VARIANT, "hant")  # while it is translating: redone with the new script
    settle(qtbot)
    redo_id = seen.of("redone")[0][0]
    finish(worker, rid, "你好世界")
    assert seen.of("finished") == [] and controller.translating
    result = finish(worker, redo_id, "你好世界")
    assert seen.of("finished") == [(redo_id, result)]


def test_no_redo_when_the_settings_end_where_they_started_or_the_source_moved_on(qtbot, made, settings):
    controller, worker, source, seen = made()
    finish(worker, controller.request("hello world"))
    settings.set(Key.VARIANT, "hant")
    settings.set(Key.VARIANT, "hans")
    settle(qtbot)
    assert len(worker.of("translate")) == 1 and seen.of("redone") == []
    source.text = "hello world, edited"  # what is shown is no longer the source's translation
    settings.set(Key.BEAMS, 2)
    settle(qtbot)
    assert len(worker.of("translate")) == 1 and seen.of("redone") == []


def test_a_precision_change_with_nothing_to_redo_only_switches(qtbot, made, settings):
    _, worker, _, seen = made()
    settings.set(Key.PRECISION, "fp32")
    settings.set(Key.THREADS, 2)
    settle(qtbot)
    assert worker.of("set_precision") == [("fp32",)] and worker.of("set_threads") == [(2,)]
    assert worker.of("translate") == [] and seen.of("redone") == []


def test_a_precision_change_without_a_model_loads_it(qtbot, made, settings):
    controller, worker, _, _ = made()
    worker.model_failed.emit(ModelProblem("invalid", "bad", (), "/b", "/e", precision="int8"))
    assert controller.model is None and controller.problem is not None
    settings.set(Key.PRECISION, "fp32")
    settle(qtbot)
    assert worker.of("load") == [(None, "fp32", None, "en-zh")] and worker.of("set_precision") == []


def test_after_a_failed_switch_the_request_counts_as_made_in_the_old_precision(qtbot, made, settings):
    controller, worker, _, seen = made()
    finish(worker, controller.request("hello world"))
    settings.set(Key.PRECISION, "fp32")
    settle(qtbot)
    assert len(seen.of("redone")) == 1 and controller.made.precision == "fp32"
    worker.switch_failed.emit("fp32", ModelProblem("invalid", "bad", (), "/b", "", precision="fp32"))
    assert controller.made.precision == "int8"
    settings.set(Key.PRECISION, "int8")  # what the window does next: the setting names what runs
    settle(qtbot)
    assert len(seen.of("redone")) == 1, "what runs already matches: no second redo"


def test_an_adopted_translation_is_redone_like_a_fresh_one(qtbot, made, settings):
    controller, worker, _, seen = made()
    controller.adopt("hello world", "你好世界")
    assert controller.translated_source == "hello world" and controller.last_result.text == "你好世界"
    settings.set(Key.VARIANT, "hant")
    settle(qtbot)
    assert [c[1] for c in worker.of("translate")] == ["hello world"] and len(seen.of("redone")) == 1


def test_reset_forgets_the_request_and_ignores_its_late_result(made):
    controller, worker, _, seen = made()
    rid = controller.request("hello world")
    controller.reset()
    assert worker.of("cancel") == [()] and not controller.translating and controller.current_id is None
    finish(worker, rid, cancelled=True)
    assert seen.of("finished") == [] and controller.last_result is None and controller.made is None


def test_options_fall_back_to_a_script_the_model_writes(made, settings):
    controller, worker, _, _ = made()
    settings.set(Key.VARIANT, "hant")
    assert controller.options().variant == "hant"
    worker.model_ready.emit(replace(MODEL, pair=EN_ZH_HANS_ONLY))
    assert controller.options().variant == "hans"


def test_typing_translates_once_it_pauses_and_only_when_live_is_on(qtbot, made, settings):
    controller, worker, source, seen = made("hello")
    controller.source_changed()
    assert not controller.live_pending, "translate-as-you-type is off by default"
    settings.set(Key.LIVE_DELAY_MS, 200)  # the shortest allowed
    settings.set(Key.LIVE_TRANSLATE, True)
    assert controller.live_pending, "turning it on translates what is there"
    for text in ("hello w", "hello wo", "hello world"):
        source.text = text
        controller.source_changed()
    qtbot.waitUntil(lambda: bool(worker.of("translate")), timeout=2000)
    qtbot.wait(250)
    assert [c[1] for c in worker.of("translate")] == ["hello world"]
    finish(worker, worker.of("translate")[0][0])
    controller.source_changed()  # an edit that left the text as it was
    qtbot.wait(300)
    assert len(worker.of("translate")) == 1
    source.text = "  "
    controller.source_changed()
    qtbot.waitUntil(lambda: bool(seen.of("emptied")), timeout=2000)
    assert len(worker.of("translate")) == 1 and controller.translated_source == "  "
    settings.set(Key.LIVE_TRANSLATE, False)
    source.text = "good morning"
    controller.source_changed()
    assert not controller.live_pending


def test_on_the_real_worker_only_the_latest_request_is_reported(qtbot, tmp_path, settings):
    factory = FakeFactory(token_delay=0.01)
    engine = WorkerThread(factory, fixed_locator(tmp_path), lambda pair=None: tmp_path, factory.verify)
    try:
        controller = RequestController(engine.worker, settings, Source())
        seen = Seen(controller)
        controller.load_model()
        qtbot.waitUntil(lambda: controller.model is not None, timeout=5000)
        controller.request("the language model bridge")
        last = controller.request("good morning")
        qtbot.waitUntil(lambda: bool(seen.of("finished")), timeout=5000)
        qtbot.wait(100)
        ((rid, result),) = seen.of("finished")
        assert rid == last and result.text == fake_translate_text("good morning")
        assert {e[1] for e in seen.events if e[0] in ("started", "progress", "finished")} == {last}
    finally:
        assert engine.shutdown(5000)


def test_a_swap_drops_the_old_request_loads_the_other_pair_and_translates_after(made, settings):
    controller, worker, _, seen = made()
    old = controller.request("hello world")
    worker.translation_started.emit(old)
    controller.swap("zh-en", "你好世界")
    new = controller.current_id
    assert new != old and settings.get(Key.DIRECTION) == "zh-en"
    calls = [c[0] for c in worker.calls]
    assert calls[-2:] == ["load", "translate"], "the load is queued before the new request"
    assert worker.of("load")[-1][3] == "zh-en" and worker.of("translate")[-1][1] == "你好世界"
    worker.translation_progress.emit(old, "你好", 1, 2)  # late reports of the old direction
    finish(worker, old, "你好", cancelled=True)
    assert [p[0] for p in seen.of("progress")] == [] and seen.of("finished") == []
    worker.translation_progress.emit(new, "hello ", 1, 1)
    assert [p[0] for p in seen.of("progress")] == [new]


def test_options_follow_the_loaded_pair_after_a_swap(made, settings):
    from tests.gui.fakes import ZH_EN

    controller, worker, _, _ = made()
    settings.set(Key.VARIANT, "hant")
    assert controller.options().variant == "hant"
    controller.swap("zh-en", "")
    worker.model_ready.emit(replace(MODEL, pair=ZH_EN))
    assert controller.options().variant is None, "a pair without variants gets none"
    assert settings.get(Key.VARIANT) == "hant", "the stored choice waits for a pair that has it"
