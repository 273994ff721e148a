"""Click a word of the translation → the popup asks for that token's alternatives; taking one re-decodes the sentence
with its tokens forced and replaces exactly that sentence; Esc leaves everything; stale answers are dropped;
Alt+Down opens at the text cursor; right-click lists the sentence's n-best (or asks for more)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QContextMenuEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QMenu

from engine.options import TranslationOptions
from engine.results import Alternative
from gui.review.alternatives_controller import K, attach_alternatives, char_at
from tests.gui.review_fakes import FakeReviewWindow, fake_alternatives, fake_sentence, ids, text_of

FIRST = ("Hello world!", ids("你好", "世界", "！"))
SECOND = ("I like this bridge.", ids("我", "喜欢", "这", "座", "桥", "。"))
THIRD = ("That river is big.", ids("那", "条", "河", "很", "大", "。"))
SHOWN = text_of(FIRST[1]) + text_of(SECOND[1]) + text_of(THIRD[1])  # 你好世界！我喜欢这座桥。那条河很大。
BRIDGE = SHOWN.index("桥")  # token 4 of sentence 1


@pytest.fixture
def window(qtbot):
    w = FakeReviewWindow(TranslationOptions(beams=2, variant="hans"))
    qtbot.addWidget(w)
    w.target.show_sentences([FIRST, SECOND, THIRD])
    w.show()
    qtbot.waitExposed(w)
    attach_alternatives(w)
    return w


def point_of(editor, char: int) -> QPoint:
    """The middle of character `char` in the editor's viewport."""
    a, b = QTextCursor(editor.document()), QTextCursor(editor.document())
    a.setPosition(char)
    b.setPosition(char + 1)
    left, right = editor.cursorRect(a), editor.cursorRect(b)
    return QPoint((left.x() + right.x()) // 2, left.center().y())


def click(qtbot, window, char: int) -> None:
    editor = window.target.editor
    qtbot.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=point_of(editor, char))


def open_on_bridge(qtbot, window):
    click(qtbot, window, BRIDGE)
    ((rid, *_),) = window.worker.of("alternatives")
    return rid


def test_char_at_is_the_character_under_the_pointer_and_none_beside_the_text(window):
    editor = window.target.editor
    for c in (0, 3, BRIDGE, len(SHOWN) - 1):
        assert char_at(editor, point_of(editor, c)) == c
    end = QTextCursor(editor.document())
    end.setPosition(len(SHOWN))
    assert char_at(editor, editor.cursorRect(end).center() + QPoint(40, 0)) is None, "past the line's end"


def test_a_click_on_a_word_asks_for_that_tokens_alternatives_and_shows_loading(qtbot, window):
    click(qtbot, window, BRIDGE)
    source, tokens = SECOND
    ((_rid, got_source, got_tokens, position, options, k),) = window.worker.of("alternatives")
    assert (got_source, got_tokens, position, k) == (source, tokens, 4, K)
    assert options == window.current_options
    popup = window.alternatives.popup
    assert popup.isVisible()
    assert popup.list.item(0).text() == "Loading…"
    assert popup.heading.text() == "Instead of “桥”:"
    word = window.target.editor.viewport().mapToGlobal(point_of(window.target.editor, BRIDGE))
    assert popup.y() > word.y() and abs(popup.x() - word.x()) < 40, "the popup is just under the clicked word"


def test_results_fill_the_popup(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    alternatives = fake_alternatives(SECOND[1], 4, 3)
    window.worker.alternatives_ready.emit(rid, alternatives)
    assert window.alternatives.popup.alternatives() == alternatives


def test_an_answer_for_another_request_is_ignored(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    window.worker.alternatives_ready.emit(rid - 1, fake_alternatives(SECOND[1], 4, 3))
    assert window.alternatives.popup.alternatives() == []
    assert window.alternatives.popup.list.item(0).text() == "Loading…"


def test_enter_replaces_exactly_that_sentence_with_the_chosen_alternative(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    alternatives = fake_alternatives(SECOND[1], 4, 3)
    window.worker.alternatives_ready.emit(rid, alternatives)
    popup = window.alternatives.popup
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    qtbot.keyClick(popup.list, Qt.Key.Key_Return)
    assert not popup.isVisible()
    ((sid, source, options, prefix),) = window.worker.of("sentence")
    assert (source, options, prefix) == (SECOND[0], window.current_options, alternatives[1].tokens)
    assert window.target.replaced == [], "nothing changes before the sentence is decoded"
    result = fake_sentence(source, options, prefix)
    window.worker.sentence_ready.emit(sid, result)
    assert window.target.replaced == [(1, result, "alternative")]
    editor_text = window.target.editor.toPlainText()
    assert editor_text == text_of(FIRST[1]) + result.text + text_of(THIRD[1]), "the other sentences are untouched"
    assert result.text.startswith("我喜欢这座") and result.text != text_of(SECOND[1])
    # the text cursor stays in the rewritten sentence, after the word that changed (not after the whole sentence,
    # where the alignment would tint the next one)
    cursor = window.target.editor.textCursor().position()
    start = window.target.sentence_range(1)[0]
    changed = next(k for k, (a, b) in enumerate(zip(SECOND[1], result.tokens)) if a != b)
    assert cursor == start + result.token_spans[changed][1]
    assert window.target.sentence_at(cursor - 1) == 1


def test_a_click_on_a_row_takes_it(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    alternatives = fake_alternatives(SECOND[1], 4, 3)
    window.worker.alternatives_ready.emit(rid, alternatives)
    popup = window.alternatives.popup
    rect = popup.list.visualItemRect(popup.list.item(2))
    qtbot.mouseClick(popup.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    ((_sid, _source, _options, prefix),) = window.worker.of("sentence")
    assert prefix == alternatives[2].tokens


def test_escape_leaves_everything_and_cancels_the_request(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    popup = window.alternatives.popup
    qtbot.keyClick(popup.list, Qt.Key.Key_Escape)
    assert not popup.isVisible()
    assert window.worker.of("cancel") == [("review",)]
    window.worker.alternatives_ready.emit(rid, fake_alternatives(SECOND[1], 4, 3))  # late: nobody wants it
    assert not popup.isVisible()
    assert window.worker.of("sentence") == [] and window.target.replaced == []
    assert window.target.editor.toPlainText() == SHOWN


def test_typing_while_the_popup_is_open_goes_on_in_the_text(qtbot, window):
    open_on_bridge(qtbot, window)
    popup = window.alternatives.popup
    editor = window.target.editor
    assert editor.textCursor().position() in (BRIDGE, BRIDGE + 1), "the click put the cursor at the word"
    at = editor.textCursor().position()
    qtbot.keyClick(popup.list, Qt.Key.Key_Shift)  # a modifier alone changes nothing
    assert popup.isVisible()
    qtbot.keyClicks(popup.list, "X")
    assert not popup.isVisible()
    assert editor.toPlainText() == SHOWN[:at] + "X" + SHOWN[at:]
    assert window.worker.of("cancel") == [("review",)]


def test_alternatives_for_a_sentence_changed_since_are_ignored(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    cursor = QTextCursor(window.target.editor.document())
    cursor.setPosition(BRIDGE)
    cursor.insertText("大")  # the user (or a new translation) changed the sentence meanwhile
    window.worker.alternatives_ready.emit(rid, fake_alternatives(SECOND[1], 4, 3))
    assert not window.alternatives.popup.isVisible()
    assert window.worker.of("sentence") == []


def test_a_choice_decoded_after_the_sentence_changed_is_not_applied(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    alternatives = fake_alternatives(SECOND[1], 4, 3)
    window.worker.alternatives_ready.emit(rid, alternatives)
    qtbot.keyClick(window.alternatives.popup.list, Qt.Key.Key_Return)
    ((sid, source, options, prefix),) = window.worker.of("sentence")
    window.target.show_sentences([FIRST, THIRD, SECOND])  # re-translated meanwhile: sentence 1 is another one
    window.worker.sentence_ready.emit(sid, fake_sentence(source, options, prefix))
    assert window.target.replaced == []
    assert window.target.editor.toPlainText() == text_of(FIRST[1]) + text_of(THIRD[1]) + text_of(SECOND[1])


def test_a_new_translation_under_the_open_popup_closes_it(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    window.worker.alternatives_ready.emit(rid, fake_alternatives(SECOND[1], 4, 3))
    window.target.show_sentences([FIRST, SECOND, THIRD])  # the same sentences again: the popup stays
    assert window.alternatives.popup.isVisible()
    window.target.show_sentences([FIRST, THIRD, SECOND])
    assert not window.alternatives.popup.isVisible()
    assert window.worker.of("cancel") == [("review",)]
    assert window.worker.of("sentence") == []


def test_no_popup_in_an_edited_sentence_nor_after_a_drag_selection(qtbot, window):
    editor = window.target.editor
    cursor = QTextCursor(editor.document())
    cursor.setPosition(1)
    cursor.insertText("们")  # sentence 0 is the user's now
    click(qtbot, window, 0)
    assert window.worker.of("alternatives") == []
    start, end = point_of(editor, BRIDGE - 3), point_of(editor, BRIDGE + 1)
    qtbot.mousePress(editor.viewport(), Qt.MouseButton.LeftButton, pos=start)
    qtbot.mouseMove(editor.viewport(), end)
    qtbot.mouseRelease(editor.viewport(), Qt.MouseButton.LeftButton, pos=end)
    assert window.worker.of("alternatives") == []
    assert not window.alternatives.popup.isVisible()
    click(qtbot, window, BRIDGE + 1)  # a plain click in an untouched sentence still works (one character later now)
    assert [(c[1], c[3]) for c in window.worker.of("alternatives")] == [(SECOND[0], 4)]


def test_alt_down_opens_the_list_at_the_text_cursor(qtbot, window):
    editor = window.target.editor
    cursor = editor.textCursor()
    cursor.setPosition(SHOWN.index("河"))  # before 河: token 2 of sentence 2
    editor.setTextCursor(cursor)
    editor.setFocus()
    qtbot.keyClick(editor, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    ((_rid, source, tokens, position, _options, _k),) = window.worker.of("alternatives")
    assert (source, tokens, position) == (THIRD[0], THIRD[1], 2)
    assert window.alternatives.popup.isVisible()
    assert editor.textCursor().position() == SHOWN.index("河"), "Alt+Down does not move the cursor"


def test_alt_down_at_the_end_of_the_text_takes_the_last_token(qtbot, window):
    editor = window.target.editor
    cursor = editor.textCursor()
    cursor.movePosition(QTextCursor.MoveOperation.End)
    editor.setTextCursor(cursor)
    qtbot.keyClick(editor, Qt.Key.Key_Down, Qt.KeyboardModifier.AltModifier)
    assert [(c[1], c[3]) for c in window.worker.of("alternatives")] == [(THIRD[0], 5)]


def nbest_of(source_tokens, n=2) -> tuple[Alternative, ...]:
    return tuple(Alternative(text_of(t), t, -0.5 - i) for i, t in enumerate(source_tokens[:n]))


def test_right_click_menu_lists_the_sentences_n_best_and_taking_one_replaces_it(qtbot, window):
    other = (ids("我", "爱", "这", "座", "桥", "。"), ids("我", "喜欢", "那", "座", "桥", "。"))
    window.target.show_sentences([FIRST, SECOND, THIRD], nbest={1: nbest_of(other)})
    menu = QMenu()
    menu.addAction("Copy")
    window.alternatives.extend_menu(menu, BRIDGE)
    texts = [a.text() for a in menu.actions()]
    assert texts[:3] == ["Other translations", "我爱这座桥。", "我喜欢那座桥。"]
    assert texts[-1] == "Copy" and menu.actions()[3].isSeparator()
    assert not menu.actions()[0].isEnabled()
    menu.actions()[2].trigger()
    ((sid, source, options, prefix),) = window.worker.of("sentence")
    assert (source, options, prefix) == (SECOND[0], window.current_options, other[1])
    result = fake_sentence(source, options, prefix)
    window.worker.sentence_ready.emit(sid, result)
    assert window.target.replaced == [(1, result, "alternative")]
    assert window.target.editor.toPlainText() == text_of(FIRST[1]) + "我喜欢那座桥。" + text_of(THIRD[1])


def test_the_real_context_menu_event_shows_them_before_the_editors_own_actions(qtbot, window):
    window.target.show_sentences(
        [FIRST, SECOND, THIRD], nbest={2: nbest_of((ids("那", "条", "河", "很", "大", "！"),))}
    )
    editor = window.target.editor
    pos = point_of(editor, SHOWN.index("河"))
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, editor.viewport().mapToGlobal(pos))
    QApplication.sendEvent(editor.viewport(), event)
    menus = [w for w in QApplication.topLevelWidgets() if isinstance(w, QMenu) and w.isVisible()]
    assert len(menus) == 1
    texts = [a.text() for a in menus[0].actions()]
    assert texts[:2] == ["Other translations", "那条河很大！"]
    assert any("Copy" in t for t in texts[2:]), "the editor's own actions stay"
    menus[0].close()


def test_more_translations_asks_for_n_best_then_lists_them_in_the_popup(qtbot, window):
    menu = QMenu()
    window.alternatives.extend_menu(menu, BRIDGE)
    (more,) = [a for a in menu.actions() if a.text() == "More translations…"]
    more.trigger()
    ((sid, source, options, prefix),) = window.worker.of("sentence")
    assert (source, prefix) == (SECOND[0], ())
    assert options == window.current_options.replace(alternatives=4, beams=5)
    popup = window.alternatives.popup
    assert popup.isVisible() and popup.list.item(0).text() == "Loading…"
    result = fake_sentence(source, options, SECOND[1])  # best = the shown sentence, plus 4 n-best
    window.worker.sentence_ready.emit(sid, result)
    assert [a.text for a in popup.alternatives()] == [a.text for a in result.alternatives], "the shown one is left out"
    qtbot.keyClick(popup.list, Qt.Key.Key_Return)
    (_, (sid2, source2, options2, prefix2)) = window.worker.of("sentence")
    assert (source2, options2, prefix2) == (SECOND[0], window.current_options, result.alternatives[0].tokens)
    window.worker.sentence_ready.emit(sid2, fake_sentence(source2, options2, prefix2))
    assert [r[0] for r in window.target.replaced] == [1]


def test_more_translations_uses_the_models_beams_when_the_setting_is_default(qtbot, window):
    window.current_options = TranslationOptions(beams=None)
    window.model.default_beams = 6
    window.alternatives.more_translations(0)
    ((_sid, _source, options, _prefix),) = window.worker.of("sentence")
    assert (options.beams, options.alternatives) == (6, 4)


def test_a_failure_is_shown_in_the_popup(qtbot, window):
    rid = open_on_bridge(qtbot, window)
    window.worker.review_failed.emit(rid, "no-model")
    assert window.alternatives.popup.list.item(0).text() == "No alternatives: no translation model is loaded."
    assert window.alternatives.popup.alternatives() == []
