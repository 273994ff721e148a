"""Sentence ranges follow edits: the pure bookkeeping, then the target pane with real typing, deleting,
replacing, and the read-only stream."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from engine.results import SentenceResult
from gui.sentence_view import EDIT_ORIGIN_ALTERNATIVE, EDIT_ORIGIN_USER, SentenceRanges, narrow_change
from gui.window.target_pane import TargetPane
from tests.gui.fakes import FakeFactory, FakeTranslator

SOURCE = "Hello world. The model is good. Good morning."


def ranges_of(text: str, spans: list[tuple[int, int]]) -> SentenceRanges:
    r = SentenceRanges()
    r.reset(text, [SentenceResult(i, f"s{i}", (0, 0), span) for i, span in enumerate(spans)], spans)
    return r


def edit(r: SentenceRanges, pos: int, removed: int, insert: str) -> list[int]:
    new = r.text[:pos] + insert + r.text[pos + removed :]
    return r.apply(pos, removed, len(insert), new)


def test_narrow_change_finds_the_characters_that_really_changed():
    assert narrow_change("你好世界。", "你好大世界。") == (2, 0, 1)
    assert narrow_change("abc", "abc") == (3, 0, 0)
    assert narrow_change("abcdef", "abXYef") == (2, 2, 2)


def test_ranges_follow_insertions_deletions_and_cuts_across_sentences():
    r = ranges_of("你好。世界。\n早上好。", [(0, 3), (3, 6), (7, 11)])
    assert edit(r, 1, 0, "们") == [0]  # typed inside sentence 0
    assert [r.span(i) for i in range(3)] == [(0, 4), (4, 7), (8, 12)]
    assert r.current(0) == "你们好。" and r.current(1) == "世界。" and r.current(2) == "早上好。"
    assert edit(r, 4, 0, "大") == [0], "typed at a boundary: it extends the sentence before"
    assert edit(r, 8, 0, "X") == [1], "typed right after sentence 1, before the line break: it extends it"
    assert r.span(1) == (5, 9) and r.span(2) == (10, 14)
    # Cut from inside sentence 0 to inside sentence 1: both touched, the rest moves back
    before = r.text
    touched = edit(r, 2, 4, "")
    assert touched == [0, 1]
    assert r.text == before[:2] + before[6:]
    assert r.current(0) + r.current(1) == "你们界。X"
    assert r.current(2) == "早上好。"


def test_a_whole_block_reported_as_changed_is_narrowed_to_the_real_change():
    r = ranges_of("你好。世界。", [(0, 3), (3, 6)])
    # QTextDocument may report the whole block replaced although only one character was typed in sentence 1
    new = "你好。世大界。"
    assert r.apply(0, 6, 7, new) == [1]
    assert r.span(0) == (0, 3) and r.current(1) == "世大界。"


def test_index_at_holds_the_end_of_a_sentence_and_skips_gaps():
    r = ranges_of("你好。\n世界。", [(0, 3), (4, 7)])
    assert [r.index_at(p) for p in range(8)] == [0, 0, 0, 0, 1, 1, 1, 1]
    r2 = ranges_of("ab  cd", [(0, 2), (4, 6)])
    assert r2.index_at(3) is None
    assert edit(r2, 3, 0, "X") == [], "typed in the space between two sentences: neither changed"
    assert r2.span(0) == (0, 2) and r2.span(1) == (5, 7)


def finished_pane(qtbot, text: str = SOURCE) -> tuple[TargetPane, object]:
    pane = TargetPane()
    qtbot.addWidget(pane)
    pane.resize(500, 300)
    pane.show()
    result = FakeTranslator(".").translate(text)
    pane.begin_stream()
    pane.append(result.text)
    pane.editor.setPlainText(result.text)  # as the window does when the stream is done
    pane.set_result(result, text)
    return pane, result


def type_at(qtbot, pane: TargetPane, pos: int, keys: str) -> None:
    cursor = pane.editor.textCursor()
    cursor.setPosition(pos)
    pane.editor.setTextCursor(cursor)
    pane.editor.setFocus()
    qtbot.keyClicks(pane.editor, keys)


def test_typing_in_a_sentence_moves_the_later_ranges_and_marks_only_that_sentence(qtbot):
    pane, result = finished_pane(qtbot)
    assert [s.text for s in pane.sentences()] == ["你好世界。", "这模型词好。", "好早上。"]
    assert not pane.editor.isReadOnly(), "a finished translation is the user's to edit"
    edited: list[int] = []
    pane.sentence_edited.connect(edited.append)
    start1, _ = pane.sentence_range(1)
    type_at(qtbot, pane, start1 + 2, "AB")
    assert edited == [1, 1]
    assert pane.sentences()[1].text == "这模AB型词好。"
    assert pane.sentence_range(2) == (result.sentences[2].target_span[0] + 2, result.sentences[2].target_span[1] + 2)
    assert pane.sentences()[2].text == "好早上。" and pane.sentences()[0].text == "你好世界。"
    assert pane.is_edited(1) and not pane.is_edited(0) and not pane.is_edited(2)
    assert pane.edit_origin(1) == EDIT_ORIGIN_USER
    assert pane.edits.lookup("The model is good.") == "这模AB型词好。"
    assert pane.token_at(start1 + 1) is None, "an edited sentence has no tokens to offer"
    # Typing the model's text back makes it the model's again
    qtbot.keyClick(pane.editor, Qt.Key.Key_Backspace)
    qtbot.keyClick(pane.editor, Qt.Key.Key_Backspace)
    assert not pane.is_edited(1) and pane.edits.lookup("The model is good.") is None


def test_a_selection_deleted_across_two_sentences_edits_both(qtbot):
    pane, _ = finished_pane(qtbot)
    a = pane.sentence_range(0)[1] - 2
    b = pane.sentence_range(1)[0] + 2
    cursor = pane.editor.textCursor()
    cursor.setPosition(a)
    cursor.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
    pane.editor.setTextCursor(cursor)
    qtbot.keyClick(pane.editor, Qt.Key.Key_Delete)
    assert pane.is_edited(0) and pane.is_edited(1) and not pane.is_edited(2)
    assert pane.sentences()[2].text == "好早上。"
    assert pane.editor.toPlainText()[slice(*pane.sentence_range(2))] == "好早上。"


def test_sentence_at_and_token_at_name_the_sentence_and_its_token(qtbot):
    pane, result = finished_pane(qtbot)
    start, end = pane.sentence_range(1)
    assert pane.sentence_at(start) == 1 and pane.sentence_at(end - 1) == 1
    assert pane.sentence_at(0) == 0
    # "这模型词好。": tokens 这 | 模型 | 词 | 好 | 。
    assert pane.token_at(start) == (1, 0)
    assert pane.token_at(start + 2) == (1, 1)
    assert pane.token_at(start + 3) == (1, 2)
    assert result.sentences[1].tokens[2] == pane.sentences()[1].tokens[2]


def test_replace_sentence_changes_only_that_sentence(qtbot):
    pane, result = finished_pane(qtbot)
    text = pane.editor.toPlainText()
    start, end = pane.sentence_range(1)
    replaced: list[int] = []
    edited: list[int] = []
    pane.sentence_replaced.connect(replaced.append)
    pane.sentence_edited.connect(edited.append)
    choice = SentenceResult(
        0,
        "The model is good.",
        (0, 18),
        (0, 6),
        tokens=(10, 11, 12),
        logprobs=(-0.1, -2.0, -0.1),
        token_spans=((0, 2), (2, 5), (5, 6)),
        text="那模型很好。",
    )
    pane.replace_sentence(1, choice, origin=EDIT_ORIGIN_ALTERNATIVE)
    new = pane.editor.toPlainText()
    assert new == text[:start] + "那模型很好。" + text[end:]
    assert replaced == [1] and edited == [], "a choice is not an edit"
    assert pane.sentence_range(1) == (start, start + 6)
    assert pane.sentence_range(2) == (end + 0, end + 4), "the same length: the next sentence stays"
    s = pane.sentences()[1]
    assert s.index == 1 and s.source_span == result.sentences[1].source_span and s.text == "那模型很好。"
    assert pane.edit_origin(1) == EDIT_ORIGIN_ALTERNATIVE and not pane.is_edited(1)
    assert pane.token_at(start + 3) == (1, 1)
    assert pane.edits.lookup("The model is good.") == "那模型很好。", "a chosen alternative survives re-translation"
    assert pane.sentences()[0].text == "你好世界。" and pane.sentences()[2].text == "好早上。"
    # A longer replacement moves the later sentences
    pane.replace_sentence(0, SentenceResult(0, "Hello world.", (0, 12), (0, 7), text="大家好，世界。"), origin="memory")
    assert pane.editor.toPlainText()[slice(*pane.sentence_range(2))] == "好早上。"
    with pytest.raises(ValueError):
        pane.replace_sentence(0, choice, origin="typed")


def test_the_target_is_read_only_while_streaming_and_a_keystroke_types_nothing(qtbot, make_window):
    gate = threading.Event()
    window = make_window(FakeFactory(gate=gate))
    window.source.setPlainText(SOURCE)
    window.translate()
    qtbot.waitUntil(lambda: window.translating)
    assert window.target.isReadOnly()
    window.target.setFocus()
    qtbot.keyClicks(window.target, "x")
    assert window.target.toPlainText() == ""
    assert "still being written" in window.status_message()
    gate.set()
    qtbot.waitUntil(lambda: not window.translating, timeout=5000)
    assert not window.target.isReadOnly()
    assert len(window.target_pane.sentences()) == 3


def test_old_results_without_sentences_stay_editable_and_harmless(qtbot):
    pane = TargetPane()
    qtbot.addWidget(pane)
    from engine.results import Translation

    pane.editor.setPlainText("旧的翻译。")
    pane.set_result(Translation(text="旧的翻译。"), "An old translation.")
    assert pane.sentences() == [] and pane.sentence_at(0) is None and pane.token_at(0) is None
    assert not pane.editor.isReadOnly()
    type_at(qtbot, pane, 0, "X")
    assert pane.editor.toPlainText() == "X旧的翻译。"
    assert pane.unsure_ranges() == [] and pane.editor.visible_marks() == []


def test_a_sentence_split_in_parts_is_remembered_whole_and_aligned_to_one_source(qtbot):
    from engine.results import Translation
    from gui.window.source_pane import SourcePane

    source_text = "A very long sentence. Short."
    text = "第一部分，第二部分。短。"
    rows = [
        SentenceResult(0, "A very long sentence.", (0, 21), (0, 5)),
        SentenceResult(1, "A very long sentence.", (0, 21), (5, 10)),
        SentenceResult(2, "Short.", (22, 28), (10, 12)),
    ]
    pane = TargetPane()
    qtbot.addWidget(pane)
    pane.editor.setPlainText(text)
    pane.set_result(Translation(text=text, sentences=rows), source_text)
    type_at(qtbot, pane, 7, "X")
    assert pane.is_edited(1) and not pane.is_edited(0)
    assert pane.edits.lookup("A very long sentence.") == "第一部分，第二X部分。", "both parts: the whole sentence"
    source = SourcePane()
    qtbot.addWidget(source)
    source.editor.setPlainText(source_text)
    source.set_sentences(rows, source_text)
    assert source.sentence_count() == 3
    assert source.sentence_range(0) == source.sentence_range(1) == (0, 21)
    assert source.sentence_at(3) == 0 and source.sentence_at(24) == 2
