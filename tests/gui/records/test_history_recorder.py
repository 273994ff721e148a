"""HistoryRecorder: finished translations recorded (not cancelled ones, not with the history off), the size limit,
the memory in the window's chain for the loaded pair, and the user's sentence edits written and remembered."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.history.records import HistoryEntry, SentenceRecord
from engine.history.store import HistoryStore
from engine.results import ORIGIN_MEMORY, Translation
from gui.records.history_recorder import HistoryRecorder
from gui.settings import Key
from tests.gui.history_fakes import ZH_EN_MODEL, HistoryWindow

SOURCE = "I like the bridge. Hello world."
PAIRS = [("I like the bridge.", "我喜欢这座桥。"), ("Hello world.", "你好世界。")]


@pytest.fixture
def store(tmp_path: Path):
    with HistoryStore(tmp_path / "history.sqlite3") as s:
        yield s


@pytest.fixture
def window(qtbot, settings):
    w = HistoryWindow(settings)
    qtbot.addWidget(w)
    return w


def test_a_finished_translation_is_recorded(window, store, qtbot) -> None:
    recorder = HistoryRecorder(store, window)
    with qtbot.waitSignal(recorder.recorded) as signal:
        window.finish(SOURCE, PAIRS)
    entry = store.get(signal.args[0])
    assert entry is not None and recorder.entry_id == entry.id
    assert (entry.source, entry.output) == (SOURCE, "我喜欢这座桥。你好世界。")
    assert (entry.pair, entry.model, entry.precision, entry.variant, entry.beams) == (
        "en-zh",
        "Helsinki-NLP/opus-mt-en-zh",
        "fp32",
        "hans",
        4,
    )
    assert entry.sentences == tuple(SentenceRecord(s, o) for s, o in PAIRS)


def test_cancelled_empty_and_switched_off_are_not_recorded(window, store, settings) -> None:
    recorder = HistoryRecorder(store, window)
    window.finish(SOURCE, PAIRS, cancelled=True)
    window.finish("   ", [])
    settings.set(Key.HISTORY_ENABLED, False)
    window.finish(SOURCE, PAIRS)
    recorder.wait()
    assert store.count() == 0
    settings.set(Key.HISTORY_ENABLED, True)
    window.finish(SOURCE, PAIRS)
    recorder.wait()
    assert store.count() == 1


def test_a_translation_without_sentences_is_recorded_whole(window, store) -> None:
    """Older fakes and restored results carry no sentences: the entry still has source and output."""
    recorder = HistoryRecorder(store, window)
    window.finish("Hello.", [])  # sets what the request was made with
    window.requests.finished.emit(2, Translation(text="你好。"))
    recorder.wait()
    [entry] = store.recent()
    assert (entry.source, entry.output, entry.sentences) == ("Hello.", "你好。", ())
    assert entry.precision == "fp32"  # no stats: the precision the request was made in


def test_memory_sentences_are_recorded_as_the_users(window, store) -> None:
    recorder = HistoryRecorder(store, window)
    window.finish(SOURCE, PAIRS, origins=(ORIGIN_MEMORY,))
    recorder.wait()
    [entry] = store.recent()
    assert entry.sentences[0] == SentenceRecord("I like the bridge.", "我喜欢这座桥。", edited="我喜欢这座桥。")
    assert entry.sentences[1].edited is None


def test_the_size_limit_follows_the_setting(window, store, settings) -> None:
    for i in range(105):
        store.add(HistoryEntry(f"Text {i}.", f"文本{i}。", "en-zh", "m", "int8"))
    settings.set(Key.HISTORY_LIMIT, 100)
    recorder = HistoryRecorder(store, window)
    recorder.wait()
    assert store.max_entries == 100 and store.count() == 100  # applied at once, the oldest gone
    assert store.get(5) is None and store.get(6) is not None
    settings.set(Key.HISTORY_LIMIT, 1000)
    recorder.wait()
    assert store.max_entries == 1000


def test_the_memory_joins_the_chain_for_the_loaded_pair(window, store) -> None:
    store.remember("en-zh", "Hello world.", "您好，世界。")
    store.remember("zh-en", "你好世界。", "Hi, world.")
    recorder = HistoryRecorder(store, window)
    chain = window.requests.memory
    assert len(chain) == 1
    assert chain.lookup("Hello world.") == "您好，世界。"
    window.model = ZH_EN_MODEL  # the direction was swapped
    window.engine.worker.model_ready.emit(ZH_EN_MODEL)
    assert len(chain) == 1
    assert chain.lookup("Hello world.") is None and chain.lookup("你好世界。") == "Hi, world."
    recorder.close()
    assert len(chain) == 0


def test_no_model_yet_means_no_memory_until_one_loads(window, store) -> None:
    window.model = None
    HistoryRecorder(store, window)
    assert len(window.requests.memory) == 0
    window.model = ZH_EN_MODEL
    window.engine.worker.model_ready.emit(ZH_EN_MODEL)
    assert len(window.requests.memory) == 1


def test_a_sentence_edit_is_written_and_remembered(window, store, qtbot) -> None:
    recorder = HistoryRecorder(store, window)
    window.finish(SOURCE, PAIRS)
    qtbot.waitUntil(lambda: recorder.entry_id is not None)
    pane = window.target_pane
    pane.rewrite(1, "您好")
    pane.sentence_edited.emit(1)
    pane.rewrite(1, "您好，世界。")  # still typing: one write once it pauses
    pane.sentence_edited.emit(1)
    with qtbot.waitSignal(recorder.changed, timeout=3000):
        pass
    entry = store.get(recorder.entry_id)
    assert entry is not None
    assert entry.sentences[1] == SentenceRecord("Hello world.", "你好世界。", "您好，世界。", None)
    assert entry.output == "我喜欢这座桥。您好，世界。"
    assert window.requests.memory.lookup("Hello world.") == "您好，世界。"


def test_a_chosen_alternative_is_written_as_chosen(window, store, qtbot) -> None:
    recorder = HistoryRecorder(store, window)
    window.finish(SOURCE, PAIRS)
    window.target_pane.rewrite(0, "我爱这座桥。")  # before the add was even written: the edit queues after it
    window.target_pane.sentence_replaced.emit(0)
    recorder.flush()
    recorder.wait()
    qtbot.waitUntil(lambda: recorder.entry_id is not None)
    entry = store.get(recorder.entry_id)
    assert entry is not None and entry.sentences[0].chosen == "我爱这座桥。" and entry.sentences[0].edited is None
    window.target_pane.rewrite(0, "我真爱这座桥。")  # then edited by hand: the choice stays on record
    window.target_pane.sentence_edited.emit(0)
    recorder.flush()
    recorder.wait()
    entry = store.get(recorder.entry_id)
    assert entry is not None and entry.sentences[0] == SentenceRecord(
        "I like the bridge.", "我喜欢这座桥。", "我真爱这座桥。", "我爱这座桥。"
    )


def test_pending_edits_go_to_their_own_entry_when_a_new_request_starts(window, store, qtbot) -> None:
    recorder = HistoryRecorder(store, window)
    window.finish(SOURCE, PAIRS)
    qtbot.waitUntil(lambda: recorder.entry_id is not None)
    first = recorder.entry_id
    window.target_pane.rewrite(1, "您好！")
    window.target_pane.sentence_edited.emit(1)
    window.finish("The river.", [("The river.", "河。")])  # flushes before the new entry
    recorder.wait()
    qtbot.waitUntil(lambda: recorder.entry_id not in (None, first))
    entry = store.get(first)
    assert entry is not None and entry.sentences[1].edited == "您好！"
    later = store.get(recorder.entry_id)
    assert later is not None and later.source == "The river." and later.sentences[0].edited is None


def test_an_edit_of_an_unrecorded_translation_is_still_remembered(window, store, settings) -> None:
    settings.set(Key.HISTORY_ENABLED, False)
    recorder = HistoryRecorder(store, window)
    window.finish(SOURCE, PAIRS)  # shown, not recorded (as a translation restored after a restart)
    settings.set(Key.HISTORY_ENABLED, True)
    window.target_pane.rewrite(0, "我爱桥。")
    window.target_pane.sentence_edited.emit(0)
    recorder.flush()
    recorder.wait()
    assert store.count() == 0
    assert store.memory("en-zh").lookup("I like the bridge.") == "我爱桥。"


def test_a_refused_write_is_reported_not_raised(window, tmp_path, qtbot) -> None:
    store = HistoryStore(tmp_path / "h.sqlite3")
    recorder = HistoryRecorder(store, window)
    store.close()
    with qtbot.waitSignal(recorder.failed) as signal:
        window.finish(SOURCE, PAIRS)
    assert "closed" in signal.args[0] and recorder.problem == signal.args[0]
    assert window.requests.memory.lookup("Hello world.") is None  # the engine's lookup does not fail either


def test_writes_run_off_the_window_thread(window, store, monkeypatch) -> None:
    import threading

    threads: list[int] = []
    add = store.add

    def spy(entry):
        threads.append(threading.get_ident())
        return add(entry)

    monkeypatch.setattr(store, "add", spy)
    recorder = HistoryRecorder(store, window)
    window.finish(SOURCE, PAIRS)
    recorder.wait()
    assert len(threads) == 1 and threads[0] != threading.get_ident()


def test_close_waits_for_queued_writes(window, store) -> None:
    recorder = HistoryRecorder(store, window)
    window.finish(SOURCE, PAIRS)
    window.target_pane.rewrite(1, "您好。")
    window.target_pane.sentence_edited.emit(1)
    recorder.close()  # the window is closing: the add and the pending edit are written first
    [entry] = store.recent()
    assert entry.sentences[1].edited == "您好。"
