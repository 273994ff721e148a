"""Documents in the real window: MainWindow with its real worker thread and the real engine on the tiny fixture
model, no fakes. File → Open document… (Ctrl+O, through Qt's own file dialog), the result written beside the
original, Cancel and Try again (which goes on from where it stopped), and a result in the way replaced on request.

Every document the window queued failed here ("An unexpected error stopped it…") while the fake-job tests of
test_main_window_documents.py passed: the window's options carry its translation memory, which holds a thread
lock, and the job deep-copied them."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QFileDialog

from engine.documents import job as job_module
from engine.documents import progress_file
from gui.documents.document_queue import State

URL = "https://example.org/path?q=1"
PARAGRAPHS = ["Thank you very much.", URL, "See you tomorrow."]


def choose_in_file_dialog(paths: list[Path], seen: list[list[str]]) -> None:
    """Once Qt's file dialog is open (it is modal), pick `paths` in it and press Open, as a person would; `seen`
    gets the dialog's name filters."""

    def pick() -> None:
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, QFileDialog):
            QTimer.singleShot(20, pick)
            return
        seen.append(dialog.nameFilters())
        dialog.setDirectory(str(paths[0].parent))
        dialog.selectFile(" ".join(f'"{p.name}"' for p in paths))
        dialog.accept()

    QTimer.singleShot(0, pick)


def entries(window) -> list:
    return list(window.documents.entries.values())


def wait_ended(qtbot, window, count: int = 1, timeout: int = 20_000) -> list:
    qtbot.waitUntil(
        lambda: len(entries(window)) == count and all(e.state.ended for e in entries(window)), timeout=timeout
    )
    return entries(window)


def row(window, entry):
    return window.documents_panel.rows[entry.key]


def make_docx(path: Path, paragraphs: list[str]) -> Path:
    from docx import Document

    doc = Document()
    for text in paragraphs:
        doc.add_paragraph(text)
    buffer = io.BytesIO()
    doc.save(buffer)
    path.write_bytes(buffer.getvalue())
    return path


def docx_paragraphs(path: Path) -> list[str]:
    from docx import Document

    return [p.text for p in Document(str(path)).paragraphs]


@pytest.fixture
def window(make_window):
    return make_window()  # the real worker and engine on tests/fixtures/tiny_marian/bundle


def test_ctrl_o_translates_txt_srt_and_docx_beside_the_originals(qtbot, window, tmp_path, engine_output):
    pytest.importorskip("docx")
    txt = tmp_path / "notes.txt"
    txt.write_text("\n\n".join(PARAGRAPHS) + "\n", encoding="utf-8")
    srt = tmp_path / "film.srt"
    srt.write_text(
        "1\n00:00:01,000 --> 00:00:02,000\nThank you very much.\n\n2\n00:00:03,000 --> 00:00:04,000\n"
        "See you tomorrow.\n",
        encoding="utf-8",
    )
    docx = make_docx(tmp_path / "report.docx", PARAGRAPHS)
    dialogs: list[list[str]] = []
    choose_in_file_dialog([txt, srt, docx], dialogs)
    qtbot.keyClick(window, Qt.Key.Key_O, Qt.KeyboardModifier.ControlModifier)  # File → Open document…
    assert dialogs and "*.docx" in dialogs[0][0] and "*.srt" in dialogs[0][0]
    done = wait_ended(qtbot, window, 3)
    assert [e.state for e in done] == [State.DONE] * 3, [row(window, e).detail.text() for e in done]
    thanks, tomorrow = engine_output("Thank you very much."), engine_output("See you tomorrow.")
    assert (thanks, tomorrow) == ("非常感谢。", "明天见。")
    assert [e.output for e in done] == [
        tmp_path / "notes.zh.txt",
        tmp_path / "film.zh.srt",
        tmp_path / "report.zh.docx",
    ]
    assert (tmp_path / "notes.zh.txt").read_text(encoding="utf-8") == f"{thanks}\n\n{URL}\n\n{tomorrow}\n"
    assert (tmp_path / "film.zh.srt").read_text(encoding="utf-8") == (
        f"1\n00:00:01,000 --> 00:00:02,000\n{thanks}\n\n2\n00:00:03,000 --> 00:00:04,000\n{tomorrow}\n"
    )
    assert docx_paragraphs(tmp_path / "report.zh.docx") == [thanks, URL, tomorrow]  # the URL is not made up
    assert txt.read_text(encoding="utf-8").startswith("Thank you")  # the originals are untouched
    first = row(window, done[0])
    assert first.state.text() == "Done" and first.detail.text() == "Saved as notes.zh.txt"
    assert first.open_button.isVisible() and not first.retry_button.isVisible()
    assert not any(p.name.endswith(progress_file.SUFFIX) for p in tmp_path.iterdir())


def test_cancel_then_try_again_goes_on_from_where_it_stopped(qtbot, window, tmp_path, monkeypatch, engine_output):
    from tests.conftest import FIXTURE_DIR

    monkeypatch.setattr(job_module, "STEP_UNITS", 1)  # one paragraph per step: a cancel lands between paragraphs
    sentences = [line.split("\t")[0] for line in (FIXTURE_DIR / "corpus.tsv").read_text("utf-8").splitlines()][:60]
    source = tmp_path / "long.txt"
    source.write_text("\n\n".join(sentences) + "\n", encoding="utf-8")
    clicked: list[int] = []

    def cancel_once(key: int) -> None:
        entry = window.documents.entries[key]
        if not clicked and entry.progress is not None and entry.progress.units_done >= 3:
            clicked.append(entry.progress.units_done)
            row(window, entry).cancel_button.click()

    window.documents.changed.connect(cancel_once)
    window.documents.add([source])
    [entry] = wait_ended(qtbot, window)
    assert clicked and entry.state is State.CANCELLED
    done_before = entry.progress.units_done
    assert 3 <= done_before < len(sentences), "cancelled part-way"
    output = tmp_path / "long.zh.txt"
    assert not output.exists() and progress_file.path_for(output).exists()  # nothing written; the progress kept
    cancelled = row(window, entry)
    assert cancelled.state.text() == "Cancelled" and cancelled.retry_button.text() == "Try again"
    assert "Try again goes on from where it stopped" in cancelled.detail.text()

    window.documents.changed.disconnect(cancel_once)
    cancelled.retry_button.click()
    [entry] = wait_ended(qtbot, window)
    assert entry.state is State.DONE and entry.result.resumed == done_before
    assert entry.result.translated == len(sentences) - done_before
    expected = "\n\n".join(engine_output(s) for s in sentences) + "\n"
    assert output.read_text(encoding="utf-8") == expected
    assert not progress_file.path_for(output).exists()
    assert f"went on from where it stopped ({done_before} parts done before)" in row(window, entry).detail.text()


def test_a_result_in_the_way_is_replaced_only_when_asked(qtbot, window, tmp_path):
    source = tmp_path / "a.txt"
    source.write_text("See you tomorrow.\n", encoding="utf-8")
    (tmp_path / "a.zh.txt").write_text("an older result\n", encoding="utf-8")
    window.documents.add([source])
    [entry] = wait_ended(qtbot, window)
    failed = row(window, entry)
    assert entry.state is State.FAILED and "already there (a.zh.txt)" in failed.detail.text()
    assert "unexpected" not in failed.detail.text()
    assert (tmp_path / "a.zh.txt").read_text(encoding="utf-8") == "an older result\n"
    assert failed.retry_button.text() == "Replace the earlier result"
    failed.retry_button.click()
    [entry] = wait_ended(qtbot, window)
    assert entry.state is State.DONE
    assert (tmp_path / "a.zh.txt").read_text(encoding="utf-8") == "明天见。\n"


def test_a_damaged_docx_says_what_is_wrong(qtbot, window, tmp_path):
    source = tmp_path / "broken.docx"
    source.write_bytes(b"PK\x03\x04 not really a Word document")
    window.documents.add([source])
    [entry] = wait_ended(qtbot, window)
    text = row(window, entry).detail.text()
    assert entry.state is State.FAILED and "broken.docx" in text and "unexpected" not in text
    assert not (tmp_path / "broken.zh.docx").exists()
