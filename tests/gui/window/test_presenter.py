"""What a request shows, on its own: the Presenter given a stub request controller (its signals and a few fields),
real panes and recording callbacks; no worker, no window."""

from __future__ import annotations

import contextlib

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QProgressBar, QWidget

from gui.notice_bar import NoticeBar
from gui.window.alignment import Alignment
from gui.window.presenter import Presenter
from gui.window.source_pane import SourcePane
from gui.window.target_pane import TargetPane
from gui.worker.messages import INTERNAL, NO_MODEL
from tests.gui.fakes import EN_ZH


class Requests(QObject):
    """The request controller's signals and the fields the presenter reads."""

    requested = Signal(int)
    emptied = Signal()
    translating_changed = Signal(bool)
    started = Signal(int)
    progress = Signal(int, str, int, int)
    finished = Signal(int, object)
    failed = Signal(int, str)

    def __init__(self) -> None:
        super().__init__()
        self.model = object()
        self.problem = None
        self.translating = False
        self.asked: list[str] = []
        self.cancelled = 0

    def request(self, text: str) -> None:
        self.asked.append(text)

    def cancel(self) -> None:
        self.cancelled += 1


@pytest.fixture
def presenter(qtbot):
    host = QWidget()
    qtbot.addWidget(host)
    source, target = SourcePane(host), TargetPane(host)
    said, switch = [], {"now": False}
    presenter = Presenter(
        host,
        Requests(),
        source_pane=source,
        target_pane=target,
        alignment=Alignment(source, target, host),
        progress=QProgressBar(host),
        size_progress=lambda: None,
        notice=NoticeBar(host),
        show_status=lambda render: said.append(render()),
        update_actions=lambda: None,
        switch_language=lambda: switch["now"],
        language_paused=contextlib.nullcontext,
        pair=lambda: EN_ZH,
        loading=lambda: False,
        closed=lambda: False,
    )
    presenter.follow()
    presenter.said, presenter.switch, presenter.host = said, switch, host  # the test holds the widgets
    return presenter


def test_an_empty_source_is_not_sent_and_the_status_says_what_to_do(presenter):
    presenter.source_pane.editor.setPlainText("   \n")
    presenter.target.setPlainText("old translation")
    presenter.translate()
    assert presenter.requests.asked == [] and presenter.requests.cancelled == 1
    assert presenter.target.toPlainText() == ""
    assert presenter.said[-1] == "Nothing to translate: type or paste English text on the left."


def test_text_in_the_other_language_is_left_to_the_switch(presenter):
    presenter.source_pane.editor.setPlainText("你好")
    presenter.switch["now"] = True
    presenter.translate()
    assert presenter.requests.asked == []
    presenter.switch["now"] = False
    presenter.translate()
    assert presenter.requests.asked == ["你好"]


def test_streamed_text_and_progress_are_shown(presenter):
    presenter.requests.requested.emit(1)
    assert presenter.said[-1] == "Translating…"
    presenter.requests.progress.emit(1, "你好。", 1, 3)
    assert presenter.target.toPlainText() == "你好。"
    assert presenter.progress.maximum() == 3 and presenter.progress.value() == 1
    presenter.requests.translating_changed.emit(False)
    assert presenter.progress.isHidden()


def test_failures_are_worded_for_a_person_and_a_bugs_detail_goes_to_the_log(presenter, capsys):
    presenter.requests.failed.emit(1, NO_MODEL)
    assert presenter.said[-1] == "No translation model is loaded." and presenter.notice.messages() == []
    presenter.requests.failed.emit(2, f"{INTERNAL}KeyError: 'x'")
    assert presenter.said[-1] == "Translation failed."
    assert "unexpected error in the engine" in presenter.notice.messages()[-1]
    assert "KeyError: 'x'" not in presenter.notice.messages()[-1]
    assert "KeyError: 'x'" in capsys.readouterr().err
