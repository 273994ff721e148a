"""Kept sentences (the user's edits and choices, given back by the translation memory) never silently contradict the
settings: after a switch to Traditional, a new glossary term or a swap of direction, a kept sentence made under the
old settings is marked in the target pane, says why, is announced once, and is translated again on request (one
sentence from its context menu, or all of them from the notice). The real window, worker and engine on the tiny
fixture models (en→zh has Simplified and Traditional variants)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import TINY_BUNDLE
from PySide6.QtWidgets import QMenu

from engine.glossary import Glossary, GlossaryEntry
from engine.results import ORIGIN_MEMORY
from gui.records.glossary_dialog import attach_glossary
from gui.records.glossary_store import GlossaryStore
from gui.records.memory_chain import MemoryChain
from gui.review.edit_memory import EditMemory, KeptContext
from gui.review.review_editor import MARK_STALE
from gui.review.review_kept import (
    BY_EARLIER_MODEL,
    BY_MODEL,
    BY_SETTING,
    DIRECTION,
    GLOSSARY,
    SCRIPT,
    Stale,
    describe,
    stale_reasons,
)
from gui.sentence_view import EDIT_ORIGIN_MEMORY
from gui.settings import Key

ZH_EN_BUNDLE = TINY_BUNDLE.parents[1] / "tiny_marian_zh_en" / "bundle"
SOURCE = "Thank you very much. I like green tea."


def finish(qtbot, window, action=None) -> None:
    """Run `action` (or Translate) and wait for the real engine's result to be shown."""
    before = window.last_result
    (action or window.translate)()
    qtbot.waitUntil(
        lambda: window.last_result is not before and not window.translating and len(window.target_pane.ranges) > 0,
        timeout=20_000,
    )


def type_in_sentence(qtbot, window, i: int, keys: str, offset: int = 1) -> None:
    cursor = window.target.textCursor()
    cursor.setPosition(window.target_pane.sentence_range(i)[0] + offset)
    window.target.setTextCursor(cursor)
    window.target.setFocus()
    window.target.textCursor().insertText(keys)  # what typing does (QTest cannot type CJK characters)


def stale_marks(window) -> list:
    return [m for m, _, _ in window.target.visible_marks() if m.kind == MARK_STALE]


def context_menu_at(window, i: int) -> QMenu:
    """The target's context menu as the alternatives controller builds it, for sentence i."""
    menu = window.target.createStandardContextMenu()
    char = window.target_pane.sentence_range(i)[0] + 1
    for extend in window.target_pane.menu_extenders:
        extend(menu, char)
    return menu


def test_stale_reasons_judge_only_what_is_known():
    now = KeptContext("en-zh", "hant")
    glossary = Glossary((GlossaryEntry("tea", "茶叶"), GlossaryEntry("Qiao")))
    source = "I like green tea."
    assert stale_reasons(source, "我喜欢绿茶。", KeptContext("en-zh", "hans"), now, None) == [
        Stale(SCRIPT, "hans", "hant", cause=BY_SETTING)
    ]
    assert stale_reasons(source, "我喜歡綠茶。", KeptContext("en-zh", "hant"), now, None) == []
    assert stale_reasons(source, "我喜欢绿茶。", None, now, None) == [], "an unknown variant is not guessed"
    assert stale_reasons(source, "I like green tea.", KeptContext("zh-en", None), now, None) == [
        Stale(DIRECTION, "zh-en", "en-zh")
    ]
    assert stale_reasons(source, "我喜歡綠茶。", KeptContext("en-zh", "hant"), now, glossary) == [
        Stale(GLOSSARY, term="tea", target="茶叶")
    ], "a term the sentence has but the kept text lacks; entries the source does not have are no concern"
    assert stale_reasons(source, "我喜歡茶叶。", KeptContext("en-zh", "hant"), now, glossary) == []


def test_a_script_reason_says_whether_the_setting_or_a_model_made_it(qapp):
    """The script recorded is the one the model wrote; what the setting asked tells who changed: the user (setting),
    the model in use (cannot write the script asked) or the model the sentence was kept from (could not)."""
    from engine.languages import default_pair

    pair = default_pair("en", "zh", (">>cmn_Hans<<", ">>cmn_Hant<<"))
    source, text = "I like green tea.", "我喜欢绿茶。"

    def reason(kept: str, now: str, asked_then: str | None, asked_now: str | None) -> Stale:
        [found] = stale_reasons(
            source, text, KeptContext("en-zh", kept), KeptContext("en-zh", now), None,
            asked_then=asked_then, asked_now=asked_now,
        )  # fmt: skip
        return found

    switched = reason("hans", "hant", "hans", "hant")
    assert switched.cause == BY_SETTING
    assert describe(switched, pair) == "Kept from before you switched to Traditional: it is still in Simplified."
    assert reason("hans", "hant", None, "hant").cause == BY_SETTING, "not known (from the history): the setting"
    # Traditional kept with opus-mt, then Firefox's en→zh (Simplified only) in use, Traditional still chosen
    limited = reason("hant", "hans", "hant", "hant")
    assert limited.cause == BY_MODEL and reason("hant", "hans", None, "hant").cause == BY_MODEL
    assert describe(limited, pair) == (
        "Kept in Traditional; the model in use cannot write Traditional, so the translation around it is in Simplified."
    )
    # Simplified kept from Firefox's en→zh while Traditional was chosen, then opus-mt in use
    earlier = reason("hans", "hant", "hant", "hant")
    assert earlier.cause == BY_EARLIER_MODEL
    assert describe(earlier, pair) == (
        "Kept from a model that wrote Simplified; the model in use writes Traditional, as your script setting asks."
    )


def test_the_chain_says_what_its_answer_was_made_under_and_honours_a_release():
    edits, later = EditMemory(), EditMemory()
    chain = MemoryChain()
    chain.add(later)
    chain.add(edits, first=True)
    edits.remember("Hello.", "你好！", KeptContext("en-zh", "hans"))
    later.remember("Bye.", "再见！")
    later.remember("Hello.", "哈喽！", KeptContext("en-zh", "hant"))
    assert chain.kept("Hello.") == ("你好！", ("en-zh", "hans"))
    assert chain.kept("Bye.") == ("再见！", None)
    edits.release("Hello.")
    assert chain.lookup("Hello.") is None, "released: the history's older fix must not answer instead"
    edits.remember("Hello.", "您好！", KeptContext("en-zh", "hant"))
    assert chain.kept("Hello.") == ("您好！", ("en-zh", "hant")), "made theirs again"


def test_switching_to_traditional_marks_the_kept_simplified_sentence_and_translates_it_again(
    qtbot, make_window, settings
):
    window = make_window()
    window.source.setPlainText(SOURCE)
    finish(qtbot, window)
    assert window.target.toPlainText() == "非常感谢。我喜欢绿茶。"
    type_in_sentence(qtbot, window, 1, "真")
    mine = "我真喜欢绿茶。"
    assert window.target_pane.sentences()[1].text == mine
    assert window.target_pane.edits.made_with("I like green tea.") == KeptContext("en-zh", "hans")
    assert stale_marks(window) == [] and window.notice.isHidden()

    finish(qtbot, window, lambda: settings.set(Key.VARIANT, "hant"))  # Settings → Traditional redoes it
    pane = window.target_pane
    assert window.target.toPlainText() == "非常感謝。" + mine, "the edit is kept (the README's promise) ..."
    assert window.last_result.sentences[1].origin == ORIGIN_MEMORY
    # ... but never silently: marked in the pane, with why, and announced once with the way out
    assert list(pane.stale()) == [1] and pane.edit_origin(1) == EDIT_ORIGIN_MEMORY
    [mark] = stale_marks(window)
    assert (mark.start, mark.end) == pane.sentence_range(1)
    assert mark.tooltip == "Kept from before you switched to Traditional: it is still in Simplified."
    assert window.target.margin_tooltip(window.target.line_span(mark.start, mark.end)[0] + 1).startswith(
        "Kept from before you switched to Traditional"
    )
    owned = {(s.cursor.selectionStart(), s.cursor.selectionEnd()) for s in window.target.layers.get("owned")}
    assert pane.sentence_range(1) in owned, "tinted in the pane"
    assert not window.notice.isHidden()
    assert "does not match the current settings" in window.notice.messages()[0]
    assert window.notice.action_button.text() == "Translate it again"
    # Its context menu offers the same for this one sentence; not on a sentence that is not stale
    labels = [a.text() for a in context_menu_at(window, 1).actions()]
    assert "Translate this sentence again" in labels
    assert "Translate this sentence again" not in [a.text() for a in context_menu_at(window, 0).actions()]

    finish(qtbot, window, window.notice.action_button.click)
    assert window.target.toPlainText() == "非常感謝。我喜歡綠茶。", "the model's Traditional, no mixed script"
    assert pane.stale() == {} and stale_marks(window) == [] and window.notice.isHidden()
    assert pane.edit_origin(1) is None and window.requests.memory.lookup("I like green tea.") is None

    finish(qtbot, window, lambda: settings.set(Key.VARIANT, "hans"))
    assert window.target.toPlainText() == "非常感谢。我喜欢绿茶。", "a released edit does not come back later"


def test_the_kept_notice_goes_with_its_translation_and_gives_the_bar_back_to_the_notice_before(
    qtbot, make_window, settings
):
    """Another notice with its action is showing (a Firefox model that writes Simplified only offers "Use
    opus-mt-en-zh"): the kept-sentence notice joins it, and once a translation with no stale kept sentence is shown
    it is taken back, with its action, and the other notice's button works again (it used to stay, its button
    translating nothing)."""
    window = make_window()
    window.source.setPlainText(SOURCE)
    finish(qtbot, window)
    type_in_sentence(qtbot, window, 1, "真")
    used: list[str] = []
    other = "Chinese script is set to Traditional, but this model writes Simplified only."
    window.notice.show_message(other, ("Use another model", lambda: used.append("other")))

    finish(qtbot, window, lambda: settings.set(Key.VARIANT, "hant"))
    assert window.target_pane.stale() != {}
    assert len(window.notice.messages()) == 2 and window.notice.action_button.text() == "Translate it again"

    window.source.setPlainText("Thank you very much.")  # no kept sentence in it: nothing is stale any more
    finish(qtbot, window)
    assert window.target_pane.stale() == {}
    assert window.notice.messages() == [other], "the kept notice went with the translation it spoke of"
    assert not window.notice.isHidden() and window.notice.action_button.text() == "Use another model"
    window.notice.action_button.click()
    assert used == ["other"]


def test_an_edit_made_in_traditional_is_not_marked_in_traditional(qtbot, make_window, settings):
    settings.set(Key.VARIANT, "hant")
    window = make_window()
    window.source.setPlainText(SOURCE)
    finish(qtbot, window)
    type_in_sentence(qtbot, window, 0, "常")
    finish(qtbot, window)  # translate again with nothing changed: the edit comes back, matching
    assert window.target_pane.sentences()[0].text == "非常常感謝。" and window.target_pane.stale() == {}
    assert stale_marks(window) == [] and window.notice.isHidden()


def _two_kept_edits_with_a_glossary(qtbot, make_window, tmp_path):
    """A window with Tools → Glossary attached and SOURCE translated, both sentences edited by the user (kept)."""
    window = make_window()
    store = GlossaryStore(tmp_path / "glossary.tsv")
    attach_glossary(window, store)
    store.changed.connect(window.requests.glossary_changed)
    window.source.setPlainText(SOURCE)
    finish(qtbot, window)
    type_in_sentence(qtbot, window, 1, "真")
    type_in_sentence(qtbot, window, 0, "常")
    return window, store


def test_a_new_glossary_term_marks_the_kept_sentences_that_lack_it(qtbot, make_window, tmp_path):
    window, store = _two_kept_edits_with_a_glossary(qtbot, make_window, tmp_path)

    # Tools → Glossary…: "tea" must be "茶叶"; the redo keeps both edits, but only the tea sentence lacks the term
    finish(qtbot, window, lambda: store.save(Glossary((GlossaryEntry("tea", "茶叶"),))))
    pane = window.target_pane
    assert window.target.toPlainText() == "非常常感谢。我真喜欢绿茶。"
    assert pane.stale() == {1: "The glossary asks for “茶叶” for “tea”; this kept version does not have it."}
    assert [(m.start, m.end) for m in stale_marks(window)] == [pane.sentence_range(1)]

    # One sentence from its context menu: the other kept sentence stays the user's
    [action] = [a for a in context_menu_at(window, 1).actions() if a.text() == "Translate this sentence again"]
    finish(qtbot, window, action.trigger)
    assert pane.stale() == {} and window.notice.isHidden()
    assert pane.sentences()[0].text == "非常常感谢。" and pane.edit_origin(0) == EDIT_ORIGIN_MEMORY
    assert pane.edit_origin(1) is None, "the model's translation, under the glossary"
    assert window.last_result.sentences[1].origin != ORIGIN_MEMORY


def test_a_document_uses_a_kept_sentence_only_where_it_matches_the_settings(qtbot, make_window, tmp_path):
    """The window marks a kept sentence that lacks a new glossary term and asks; a document translated then has
    no one to ask: it used the kept sentence silently (seen in the real app: a .docx and a .txt got the kept
    version of "The weather is nice today." without the glossary's 天气). Now the model translates that sentence
    under the glossary, and a kept sentence that matches the settings still comes back in the document."""
    window, store = _two_kept_edits_with_a_glossary(qtbot, make_window, tmp_path)
    finish(qtbot, window, lambda: store.save(Glossary((GlossaryEntry("tea", "茶叶"),))))
    assert window.target.toPlainText() == "非常常感谢。我真喜欢绿茶。" and list(window.target_pane.stale()) == [1]

    document = tmp_path / "notes.txt"
    document.write_text("Thank you very much.\n\nI like green tea.\n", encoding="utf-8")
    window.add_documents([document])
    qtbot.waitUntil(lambda: all(e.state.ended for e in window.documents.entries.values()), timeout=20_000)
    [entry] = window.documents.entries.values()
    assert entry.output is not None and entry.output.exists(), entry.reason
    first, second = [line for line in entry.output.read_text(encoding="utf-8").splitlines() if line]
    assert first == "非常常感谢。", "a kept sentence that matches the settings is the user's"
    assert "茶叶" in second and second != "我真喜欢绿茶。", "the stale kept sentence is translated under the glossary"


@pytest.fixture
def both_directions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's models folder holds the en→zh and zh→en fixture bundles, so the window can swap."""
    models = tmp_path / "data" / "Qiao" / "models"
    models.mkdir(parents=True)
    os.symlink(TINY_BUNDLE, models / "opus-mt-en-zh")
    os.symlink(ZH_EN_BUNDLE, models / "opus-mt-zh-en")
    monkeypatch.setenv("QIAO_DATA_DIR", str(tmp_path / "data" / "Qiao"))


def test_a_sentence_kept_in_the_other_direction_is_marked_after_a_swap(qtbot, settings, tmp_path, both_directions):
    from gui.window.main_window import MainWindow
    from gui.worker.engine import local_engine

    window = MainWindow(settings, tmp_path / "state" / "source.txt", None, engine=local_engine())
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: window.model is not None and window.swap_action.isEnabled(), timeout=20_000)
        window.source.setPlainText("See you tomorrow.")
        finish(qtbot, window)
        assert window.target.toPlainText() == "明天见。"
        type_in_sentence(qtbot, window, 0, "再")  # 明再天见。: the user's en→zh fix of "See you tomorrow."

        finish(qtbot, window, window.swap)
        assert window.model.pair.key == "zh-en" and window.target_pane.stale() == {}
        # A Chinese text with that English sentence in it: the en→zh fix comes back, in the English translation
        window.source.setPlainText("今天在下雨。See you tomorrow.")
        finish(qtbot, window)
        pane = window.target_pane
        assert pane.sentences()[1].text == "明再天见。" and pane.edit_origin(1) == EDIT_ORIGIN_MEMORY
        assert pane.stale() == {1: "Kept from before you switched the direction: it was written for English → Chinese."}
        assert len(stale_marks(window)) == 1 and not window.notice.isHidden()
        finish(qtbot, window, window.kept_review.retranslate_all)
        assert pane.stale() == {} and "明再天见" not in window.target.toPlainText()
    finally:
        window.shutdown()


def test_a_fix_from_the_history_is_judged_by_the_variant_it_was_written_in(qtbot, make_window, settings, tmp_path):
    from engine.history.store import HistoryStore
    from gui.records.history_recorder import HistoryRecorder

    window = make_window()
    with HistoryStore(tmp_path / "history.sqlite3") as store:
        recorder = HistoryRecorder(store, window)
        window.source.setPlainText(SOURCE)
        finish(qtbot, window)
        recorder.wait()
        type_in_sentence(qtbot, window, 1, "真")
        recorder.flush()
        recorder.wait()
        assert store.memory("en-zh").made_with("I like green tea.") == ("en-zh", "hans")
        window.target_pane.edits.clear()  # a later session: only the history remembers the fix

        finish(qtbot, window, lambda: settings.set(Key.VARIANT, "hant"))
        pane = window.target_pane
        assert window.target.toPlainText() == "非常感謝。我真喜欢绿茶。"
        assert pane.stale() == {1: "Kept from before you switched to Traditional: it is still in Simplified."}
        recorder.wait()
        assert store.count() == 1, "the redo after the switch replaced the entry instead of adding a near-duplicate"
        recorder.close()


def test_a_word_chosen_in_simplified_is_marked_after_switching_to_traditional(qtbot, make_window, settings):
    """The issue's first case: a word choice (not an edit), then Settings → Traditional."""
    from PySide6.QtCore import Qt

    window = make_window()
    window.source.setPlainText(SOURCE)
    finish(qtbot, window)
    pane = window.target_pane
    sentence = pane.sentences()[1]
    assert window.alternatives.open_at_char(pane.sentence_range(1)[0] + sentence.token_spans[1][0])
    popup = window.alternatives.popup
    qtbot.waitUntil(lambda: len(popup.alternatives()) > 1, timeout=20_000)
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    qtbot.keyClick(popup.list, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: pane.edit_origin(1) == "alternative", timeout=20_000)
    chosen = pane.sentences()[1].text
    assert chosen != sentence.text
    assert pane.edits.made_with("I like green tea.") == KeptContext("en-zh", "hans")

    finish(qtbot, window, lambda: settings.set(Key.VARIANT, "hant"))
    assert window.target.toPlainText() == "非常感謝。" + chosen, "the choice is kept ..."
    assert pane.stale() == {1: "Kept from before you switched to Traditional: it is still in Simplified."}
    assert len(stale_marks(window)) == 1 and not window.notice.isHidden()  # ... marked and announced
    [action] = [a for a in context_menu_at(window, 1).actions() if a.text() == "Translate this sentence again"]
    finish(qtbot, window, action.trigger)
    assert window.target.toPlainText() == "非常感謝。我喜歡綠茶。" and pane.stale() == {}
