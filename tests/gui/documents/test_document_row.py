"""One Documents row on its own, painted from a queue entry (no queue, no panel, no worker): what it says and which
buttons it offers in each state, and that its buttons name their file by key."""

from __future__ import annotations

import pytest

from gui.documents.document_queue import Entry, Problem, State
from gui.documents.document_row import DocumentRow
from gui.documents.wording import state_label
from gui.i18n import install_translators
from tests.gui.document_fakes import progress, result


@pytest.fixture
def row(qtbot):
    row = DocumentRow(7)
    qtbot.addWidget(row)
    row.show()
    return row


def offered(row: DocumentRow) -> set[str]:
    buttons = {"cancel": row.cancel_button, "retry": row.retry_button, "open": row.open_button}
    buttons["folder"] = row.folder_button
    return {name for name, button in buttons.items() if button.isVisibleTo(row)}


def test_a_file_being_translated_shows_parts_time_left_and_cancel(row, tmp_path):
    source = tmp_path / "notes.docx"
    entry = Entry(7, source, "docx", "en-zh", State.TRANSLATING, output=tmp_path / "notes.zh.docx")
    entry.progress = progress(source, 3, 12, eta=150.0)
    row.paint(entry, output_exists=False)
    assert row.name.text() == "notes.docx" and row.kind.text() == "Word document"
    assert row.state.text() == "Translating" and row.bar.text() == "3 / 12 parts"
    assert row.eta.text() == "About 3 min left" and row.detail.text() == "Will be saved as notes.zh.docx"
    assert offered(row) == {"cancel"}


def test_a_finished_file_offers_open_and_its_folder(row, tmp_path):
    source, output = tmp_path / "a.txt", tmp_path / "a.zh.txt"
    row.paint(Entry(7, source, "txt", "en-zh", State.DONE, output=output, result=result(source, output)), False)
    assert row.detail.text() == "Saved as a.zh.txt" and row.eta.text() == "Took 3 s"
    assert offered(row) == {"open", "folder"}


def test_a_failure_over_an_earlier_result_offers_to_replace_it(row, tmp_path):
    output = tmp_path / "a.zh.txt"
    entry = Entry(7, tmp_path / "a.txt", "txt", "en-zh", State.FAILED, output=output, reason="exists")
    row.paint(entry, output_exists=True)
    assert "already there (a.zh.txt)" in row.detail.text()
    assert row.retry_button.text() == "Replace the earlier result" and "a.zh.txt" in row.retry_button.toolTip()
    assert offered(row) == {"retry"}
    entry.problem = Problem.MISSING  # a file that is gone cannot be tried again
    row.paint(entry, output_exists=False)
    assert row.detail.text() == "The file is no longer there." and offered(row) == set()


def test_each_button_names_the_rows_file_by_its_key(row, qtbot):
    for button, signal in (
        (row.cancel_button, row.cancel_requested),
        (row.retry_button, row.retry_requested),
        (row.open_button, row.open_requested),
        (row.folder_button, row.folder_requested),
    ):
        with qtbot.waitSignal(signal) as caught:
            button.click()
        assert caught.args == [7]


def test_states_are_worded_in_the_interface_language(qapp):
    try:
        install_translators("zh_CN")
        assert state_label(State.DONE) != "Done"
    finally:
        install_translators("en")
    assert state_label(State.DONE) == "Done"
