"""The alternatives popup on its own: each row is the whole sentence as it would become (start plain, the word and
the changed rest emphasised), "Loading…" until rows come, Up/Down/Enter/click/Esc, accessible names."""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from engine.results import Alternative
from gui.review.alternatives_popup import AlternativesPopup, row_html, split_alternative
from tests.gui.review_fakes import fake_alternatives, ids, text_of

TOKENS = ids("我", "喜欢", "这", "座", "桥", "。")
CURRENT = text_of(TOKENS)  # 我喜欢这座桥。


def test_split_keeps_the_unchanged_start_and_finds_the_word():
    assert split_alternative(CURRENT, 3, "我喜欢那条河。", "那") == ("我喜欢", "那", "条河。")
    # the word is not where expected: the whole changed part is emphasised, nothing is lost
    assert split_alternative(CURRENT, 3, "我喜欢那条河。", "大") == ("我喜欢", "", "那条河。")
    # the start as re-decoded may differ from the shown one: only what both share counts as unchanged
    assert split_alternative(CURRENT, 3, "我爱那条河。", "那") == ("我", "", "爱那条河。")
    # an n-best entry (no word): changed from the first difference
    assert split_alternative(CURRENT, len(CURRENT), "我喜欢这条河。") == ("我喜欢这", "", "条河。")
    # spaces before a Latin word stay with the start
    assert split_alternative("I like it", 6, "I like them", "them") == ("I like ", "them", "")
    for alt in fake_alternatives(TOKENS, 3, 5):  # position 3 (座) starts at character 4
        head, word, rest = split_alternative(CURRENT, 4, alt.text, alt.word)
        assert (head, word) == ("我喜欢这", alt.word)
        assert head + word + rest == alt.text


def test_row_html_emphasises_the_word_and_the_rest_with_the_palettes_colours():
    palette = QApplication.palette()
    row = row_html(("我<喜欢", "那", "条河。"), palette, selected=False)
    link = palette.color(QPalette.ColorRole.Link).name()
    assert "我&lt;喜欢" in row, "escaped"
    assert f'color:{link}; font-weight:bold; font-size:large">那<' in row
    assert f'color:{link}; text-decoration:none">条河。<' in row
    selected = row_html(("我", "那", "条河。"), palette, selected=True)
    assert palette.color(QPalette.ColorRole.HighlightedText).name() in selected
    assert "underline" in selected


def make_popup(qtbot) -> tuple[AlternativesPopup, list, list]:
    popup = AlternativesPopup()
    qtbot.addWidget(popup)
    chosen, dismissed = [], []
    popup.chosen.connect(chosen.append)
    popup.dismissed.connect(lambda: dismissed.append(True))
    popup.open_at(QRect(100, 100, 20, 20), CURRENT, 9, "桥")
    return popup, chosen, dismissed


def test_loading_until_results_then_the_rows_best_first(qtbot):
    popup, chosen, _ = make_popup(qtbot)
    assert popup.isVisible()
    assert popup.list.count() == 1 and popup.list.item(0).text() == "Loading…"
    qtbot.keyClick(popup.list, Qt.Key.Key_Return)
    assert chosen == [] and popup.isVisible(), "the Loading… row cannot be taken"
    alternatives = fake_alternatives(TOKENS, 4, 3)
    popup.set_alternatives(alternatives)
    assert popup.alternatives() == alternatives
    assert popup.current() == alternatives[0]
    assert popup.list.item(1).data(Qt.ItemDataRole.UserRole + 1) == ("我喜欢这座", alternatives[1].word, "。")
    assert popup.y() >= 120, "under the word"


def test_rows_equal_to_the_shown_sentence_are_left_out_and_none_says_so(qtbot):
    popup, _, _ = make_popup(qtbot)
    popup.set_alternatives([Alternative(CURRENT, TOKENS, -0.1, position=4, word="桥")])
    assert popup.alternatives() == []
    assert popup.list.item(0).text() == "No alternatives found"


def test_up_down_choose_and_enter_takes(qtbot):
    popup, chosen, dismissed = make_popup(qtbot)
    alternatives = fake_alternatives(TOKENS, 4, 4)
    popup.set_alternatives(alternatives)
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    qtbot.keyClick(popup.list, Qt.Key.Key_Up)
    qtbot.keyClick(popup.list, Qt.Key.Key_Enter)
    assert chosen == [alternatives[1]]
    assert dismissed == [] and not popup.isVisible()


def test_a_click_takes_the_row(qtbot):
    popup, chosen, _ = make_popup(qtbot)
    alternatives = fake_alternatives(TOKENS, 4, 3)
    popup.set_alternatives(alternatives)
    rect = popup.list.visualItemRect(popup.list.item(2))
    qtbot.mouseClick(popup.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert chosen == [alternatives[2]]


def test_escape_closes_without_a_choice(qtbot):
    popup, chosen, dismissed = make_popup(qtbot)
    popup.set_alternatives(fake_alternatives(TOKENS, 4, 3))
    qtbot.keyClick(popup.list, Qt.Key.Key_Escape)
    assert not popup.isVisible()
    assert chosen == [] and dismissed == [True]


def test_accessible_names_say_what_the_list_is_for(qtbot):
    popup, _, _ = make_popup(qtbot)
    assert popup.accessibleName() == "Alternatives"
    assert popup.list.accessibleName() == "Alternatives for “桥”"
    assert popup.heading.text() == "Instead of “桥”:"
    alternatives = fake_alternatives(TOKENS, 4, 2)
    popup.set_alternatives(alternatives)
    item = popup.list.item(0)
    assert item.data(Qt.ItemDataRole.AccessibleTextRole) == alternatives[0].text
    assert item.data(Qt.ItemDataRole.AccessibleDescriptionRole) == f"“{alternatives[0].word}”"
    popup.open_at(QRect(0, 0, 5, 5), CURRENT, len(CURRENT))
    assert popup.list.accessibleName() == "Other translations of this sentence"


def test_the_popup_stays_on_screen_and_goes_above_a_word_at_the_bottom(qtbot):
    popup, _, _ = make_popup(qtbot)
    area = popup.screen().availableGeometry()
    popup.open_at(QRect(area.right() - 10, area.bottom() - 30, 10, 20), CURRENT, 9, "桥")
    popup.set_alternatives(fake_alternatives(TOKENS, 4, 5))
    assert popup.geometry().right() <= area.right()
    assert popup.geometry().bottom() < area.bottom() - 30, "above the word"
