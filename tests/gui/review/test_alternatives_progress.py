"""The popup fills progressively: the candidate words as soon as the worker has them (their rest "…"), each row
filled in as updates come (the row the user is on stays current), the final list last; a row taken before its rest
is complete forces the sentence's start up to its word; updates for an old, dismissed or outdated request change
nothing."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor

from engine.results import Alternative
from gui.review.alternatives_controller import forced_tokens
from gui.review.alternatives_popup import PARTS_ROLE, PENDING, AlternativesPopup
from tests.gui.review.test_alternatives_controller import BRIDGE, FIRST, SECOND, SHOWN, THIRD, click, window  # noqa: F401
from tests.gui.review_fakes import fake_alternative_steps, fake_alternatives, fake_sentence, ids, text_of

LIKE = SHOWN.index("喜")  # token 1 (喜欢) of sentence 1, 我喜欢这座桥。
STEPS = fake_alternative_steps(SECOND[1], 1, 3)  # the words, the rest growing by one token three times, the final


def open_on_like(qtbot, w) -> int:
    click(qtbot, w, LIKE)
    return w.worker.of("alternatives")[-1][0]


def rows(popup) -> list[tuple[str, str, str]]:
    return [popup.list.item(i).data(PARTS_ROLE) for i in range(popup.list.count())]


def test_the_words_show_first_with_their_rest_pending(qtbot, window):  # noqa: F811
    rid = open_on_like(qtbot, window)
    popup = window.alternatives.popup
    window.worker.alternatives_progress.emit(rid, STEPS[0])
    assert popup.alternatives() == STEPS[0]
    assert [r[1] for r in rows(popup)] == [a.word for a in STEPS[0]], "each row's word, emphasised"
    assert all(r[0] == "我" and r[2] == PENDING for r in rows(popup)), "nothing of the rest yet: …"
    assert popup.list.item(0).text() == STEPS[0][0].text + PENDING
    assert popup.list.currentRow() == 0


def test_updates_fill_the_rows_in_place_and_keep_the_current_one(qtbot, window):  # noqa: F811
    rid = open_on_like(qtbot, window)
    popup = window.alternatives.popup
    window.worker.alternatives_progress.emit(rid, STEPS[0])
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    items = [popup.list.item(i) for i in range(popup.list.count())]
    for step in STEPS[1:-1]:
        window.worker.alternatives_progress.emit(rid, step)
        assert popup.alternatives() == step
        assert popup.list.currentRow() == 1, "the user's row stays current while the rests come"
    window.worker.alternatives_ready.emit(rid, STEPS[-1])
    assert popup.alternatives() == fake_alternatives(SECOND[1], 1, 3)
    assert [popup.list.item(i) for i in range(popup.list.count())] == items, "the same rows, filled in"
    assert popup.list.currentRow() == 1
    assert all(PENDING not in "".join(r) for r in rows(popup)), "complete rows have no …"
    assert [r[1] for r in rows(popup)] == [a.word for a in STEPS[-1]]


def test_a_row_taken_before_its_rest_is_complete_forces_its_start_and_word(qtbot, window):  # noqa: F811
    rid = open_on_like(qtbot, window)
    popup = window.alternatives.popup
    window.worker.alternatives_progress.emit(rid, STEPS[1])
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    qtbot.keyClick(popup.list, Qt.Key.Key_Return)
    chosen = STEPS[1][1]
    assert not chosen.complete and len(chosen.tokens) == 3
    ((sid, source, options, prefix),) = window.worker.of("sentence")
    assert (source, options) == (SECOND[0], window.current_options)
    assert prefix == (SECOND[1][0], chosen.tokens[1]), "the start and the chosen word, the rest decoded anew"
    window.worker.alternatives_ready.emit(rid, STEPS[-1])  # the older answer, after the choice: ignored
    assert not popup.isVisible() and window.target.replaced == []
    result = fake_sentence(source, options, prefix)
    window.worker.sentence_ready.emit(sid, result)
    assert window.target.replaced == [(1, result, "alternative")]
    assert window.target.editor.toPlainText() == text_of(FIRST[1]) + result.text + text_of(THIRD[1])


def test_forced_tokens_of_complete_and_unfinished_alternatives():
    done = Alternative("我爱你。", (0, 6, 12, 5), -0.5, position=1, word="爱")
    assert forced_tokens(done) == done.tokens
    assert forced_tokens(Alternative("我爱你", (0, 6, 12), -0.5, position=1, word="爱", complete=False)) == (0, 6)
    assert forced_tokens(Alternative("我爱你", (0, 6, 12), -0.5)) == (0, 6, 12), "n-best: the whole sentence"


def test_updates_for_another_request_are_ignored(qtbot, window):  # noqa: F811
    rid = open_on_like(qtbot, window)
    popup = window.alternatives.popup
    window.worker.alternatives_progress.emit(rid - 1, STEPS[0])
    assert popup.alternatives() == [] and popup.list.item(0).text() == "Loading…"
    click(qtbot, window, SHOWN.index("河"))  # a second click: the first request's updates are stale
    ((newer, *_),) = window.worker.of("alternatives")[1:]
    window.worker.alternatives_progress.emit(rid, STEPS[0])
    assert popup.alternatives() == []
    third = fake_alternative_steps(THIRD[1], 2, 3)
    window.worker.alternatives_progress.emit(newer, third[0])
    assert popup.alternatives() == third[0]


def test_an_empty_first_list_keeps_loading_until_the_final_answer(qtbot, window):  # noqa: F811
    rid = open_on_like(qtbot, window)
    popup = window.alternatives.popup
    window.worker.alternatives_progress.emit(rid, [])
    assert popup.list.item(0).text() == "Loading…"
    window.worker.alternatives_ready.emit(rid, [])
    assert popup.list.item(0).text() == "No alternatives found"


def test_updates_after_escape_or_after_the_sentence_changed_do_nothing(qtbot, window):  # noqa: F811
    rid = open_on_like(qtbot, window)
    popup = window.alternatives.popup
    window.worker.alternatives_progress.emit(rid, STEPS[0])
    qtbot.keyClick(popup.list, Qt.Key.Key_Escape)
    assert window.worker.of("cancel") == [("review",)]
    window.worker.alternatives_progress.emit(rid, STEPS[1])
    assert not popup.isVisible()
    rid = open_on_like(qtbot, window)
    cursor = QTextCursor(window.target.editor.document())
    cursor.setPosition(BRIDGE)
    cursor.insertText("大")  # the sentence changed while its rests were being decoded
    window.worker.alternatives_progress.emit(rid, STEPS[0])
    assert not popup.isVisible()
    assert window.worker.of("sentence") == []


def test_a_rebuilt_list_keeps_the_current_row_by_its_word(qtbot):
    popup = AlternativesPopup()
    qtbot.addWidget(popup)
    popup.open_at(popup.geometry(), text_of(SECOND[1]), 1, "喜欢")
    popup.set_alternatives(STEPS[0])
    popup.list.setCurrentRow(2)
    final = list(STEPS[-1])
    final.insert(0, Alternative("我爱这座桥。", (SECOND[1][0], 6, *SECOND[1][2:]), -0.1, position=1, word="爱"))
    popup.set_alternatives(final)  # another row came in front: the user's row is found by its word
    assert popup.current() == STEPS[-1][2]
    popup.close()


def test_the_popup_is_sized_for_the_sentence_at_once_and_does_not_widen_as_rests_come(qtbot, window):  # noqa: F811
    long = ("Hello world, hello world.", ids(*["你好", "世界"] * 8, "。"))  # wider than the popup's minimum
    window.target.show_sentences([long])
    click(qtbot, window, text_of(long[1]).index("世"))
    rid = window.worker.of("alternatives")[-1][0]
    popup = window.alternatives.popup
    steps = fake_alternative_steps(long[1], 1, 3)
    window.worker.alternatives_progress.emit(rid, steps[0])
    width = popup.list.width()
    assert width >= popup.list.fontMetrics().horizontalAdvance(text_of(long[1])), "room for the sentence's length"
    for step in steps[1:-1]:
        window.worker.alternatives_progress.emit(rid, step)
        assert popup.list.width() == width, "the popup does not widen under the pointer as the rests come"
    window.worker.alternatives_ready.emit(rid, steps[-1])
    assert popup.alternatives() == steps[-1]
