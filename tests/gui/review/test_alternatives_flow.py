"""The whole click-a-word flow on the real worker thread (a fake translator behind it): click → the popup fills
from the worker's answer → Enter → the worker re-decodes the sentence with the chosen tokens forced → exactly that
sentence is replaced. A second click before the first answer shows only the second word's alternatives."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt

from engine.options import TranslationOptions
from gui.review.alternatives_controller import attach_alternatives
from gui.worker.scheduler import WorkerThread
from tests.gui.fakes import fixed_locator
from tests.gui.review.test_alternatives_controller import BRIDGE, FIRST, SECOND, SHOWN, THIRD, click
from tests.gui.review_fakes import (
    FakeReviewWindow,
    ReviewFactory,
    fake_alternative_steps,
    fake_alternatives,
    fake_sentence,
    text_of,
)


@pytest.fixture
def setup(qtbot, tmp_path):
    made = []

    def make(factory):
        wt = WorkerThread(factory, fixed_locator(tmp_path), lambda pair=None: tmp_path, factory.verify)
        made.append(wt)
        ready = []
        wt.worker.model_ready.connect(ready.append)
        wt.worker.load(None, "int8", None)
        qtbot.waitUntil(lambda: bool(ready), timeout=5000)
        window = FakeReviewWindow(TranslationOptions(beams=3), worker=wt.worker)
        qtbot.addWidget(window)
        window.target.show_sentences([FIRST, SECOND, THIRD])
        window.show()
        qtbot.waitExposed(window)
        attach_alternatives(window)
        return window, factory

    yield make
    for wt in made:
        assert wt.shutdown(5000)


def test_click_choose_and_the_sentence_is_rewritten_from_the_word_on(qtbot, setup):
    window, factory = setup(ReviewFactory())
    click(qtbot, window, BRIDGE)
    popup = window.alternatives.popup
    expected = fake_alternatives(SECOND[1], 4, 5)
    qtbot.waitUntil(lambda: popup.alternatives() == expected, timeout=5000)
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    qtbot.keyClick(popup.list, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: bool(window.target.replaced), timeout=5000)
    result = fake_sentence(SECOND[0], window.current_options, expected[1].tokens)
    assert window.target.replaced == [(1, result, "alternative")]
    assert window.target.editor.toPlainText() == text_of(FIRST[1]) + result.text + text_of(THIRD[1])
    assert [c[0] for c in factory.translator.review_calls] == ["alternatives", "sentence"]


def test_a_second_click_before_the_answer_wins(qtbot, setup):
    gate = threading.Event()
    window, factory = setup(ReviewFactory(review_gate=gate))
    click(qtbot, window, BRIDGE)
    qtbot.waitUntil(lambda: len(factory.translator.review_calls) == 1, timeout=5000)
    window.alternatives.popup.close()  # a click elsewhere closes the popup (Qt does it for a popup)…
    click(qtbot, window, SHOWN.index("河"))  # …and opens it for the new word
    gate.set()
    popup = window.alternatives.popup
    expected = fake_alternatives(THIRD[1], 2, 5)
    qtbot.waitUntil(lambda: popup.alternatives() == expected, timeout=5000)
    assert [c[1] for c in factory.translator.cancelled] == [SECOND[0]]


def test_the_words_show_while_the_rests_are_decoded_then_fill_in(qtbot, setup):
    window, factory = setup(ReviewFactory())
    factory.translator.step_gate = threading.Semaphore(0)  # the rests wait until the test lets them go
    click(qtbot, window, SHOWN.index("喜"))
    popup = window.alternatives.popup
    steps = fake_alternative_steps(SECOND[1], 1, 5)
    qtbot.waitUntil(lambda: popup.alternatives() == steps[0], timeout=5000)
    assert popup.list.item(0).text().endswith("…") and popup.list.currentRow() == 0
    qtbot.keyClick(popup.list, Qt.Key.Key_Down)
    factory.translator.step_gate.release(len(steps))
    qtbot.waitUntil(lambda: popup.alternatives() == steps[-1], timeout=5000)
    assert popup.list.currentRow() == 1, "the row chosen while the rests came is still the current one"
    assert not any(popup.list.item(i).text().endswith("…") for i in range(popup.list.count()))
