"""The Documents queue and panel on a worker driven by hand: what each row shows in each state (progress as parts
done / total, time left, the reason of a failure in words), Cancel, Open and Show in folder, and the settings for
where results go and what they are called."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QDesktopServices, QGuiApplication

from engine.documents.job import DocumentOptions
from engine.options import TranslationOptions
from gui.documents import document_queue
from gui.documents.document_queue import DocumentQueue, State
from gui.documents.documents_panel import DocumentsPanel
from gui.documents.wording import time_left
from gui.i18n import install_translators
from gui.settings import Key
from gui.worker.scheduler import DOC_DIRECTION, INTERNAL, NO_MODEL
from tests.gui.document_fakes import FakeDocumentWorker, progress, result, use_fake_formats


@pytest.fixture
def panel(qtbot, settings, monkeypatch):
    use_fake_formats(monkeypatch)
    worker = FakeDocumentWorker()
    options = TranslationOptions(beams=3, variant="hans")
    queue = DocumentQueue(worker, settings, lambda: options, lambda: "en-zh")
    panel = DocumentsPanel(queue)
    qtbot.addWidget(panel)
    panel.resize(900, 300)
    panel.hide()
    return panel


def make(tmp_path: Path, *names: str) -> list[Path]:
    out = []
    for name in names:
        (tmp_path / name).write_text("Hello world.\n", encoding="utf-8")
        out.append(tmp_path / name)
    return out


def shown(widget) -> bool:
    return widget.isVisibleTo(widget.window())


def test_files_are_queued_in_order_with_the_settings_of_the_moment(panel, tmp_path, settings):
    settings.set(Key.DOCUMENT_NAME, "{stem}-{lang}{suffix}")
    a, b = make(tmp_path, "a.txt", "notes.md")
    keys = panel.queue.add([a, b])
    worker = panel.queue.worker
    assert [q[1] for q in worker.queued] == [a, b]
    _, _, options, translation, pair = worker.queued[0]
    assert options == DocumentOptions(out_dir=None, name_template="{stem}-{lang}{suffix}")
    assert translation == TranslationOptions(beams=3, variant="hans") and pair == "en-zh"
    assert panel.isVisible(), "adding a document shows the panel"
    row = panel.rows[keys[1]]
    assert row.name.text() == "notes.md" and row.kind.text() == "Markdown"
    assert row.state.text() == "Waiting" and shown(row.cancel_button) and not shown(row.open_button)
    assert row.detail.text() == "Will be saved as notes-zh.md"
    assert panel.windowTitle() == "Documents (2 to go)"


def test_progress_shows_parts_done_of_total_and_the_time_left(panel, tmp_path):
    (a,) = make(tmp_path, "a.txt")
    (key,) = panel.queue.add([a])
    job_id = panel.queue.entries[key].job_id
    worker = panel.queue.worker
    worker.document_started.emit(job_id, tmp_path / "a.zh.txt")
    row = panel.rows[key]
    assert row.state.text() == "Translating" and row.eta.text() == "Reading the file…"
    worker.document_progress.emit(job_id, progress(a, 3, 12, eta=None))
    assert row.bar.text() == "3 / 12 parts"
    assert row.eta.text() == "Estimating the time left…"
    worker.document_progress.emit(job_id, progress(a, 6, 12, eta=150.0))
    assert (row.bar.value(), row.bar.maximum()) == (6, 12) and row.bar.text() == "6 / 12 parts"
    assert row.eta.text() == "About 3 min left"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (5, "Less than a minute left"),
        (60, "About 1 min left"),
        (61, "About 2 min left"),
        (3700, "About 1 h 2 min left"),
    ],
)
def test_time_left_is_rounded_up_in_words(qapp, seconds, text):
    assert time_left(seconds) == text


def test_a_finished_document_offers_open_and_show_in_folder(panel, tmp_path, monkeypatch):
    opened: list[str] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: opened.append(url.toLocalFile()) or True)
    (a,) = make(tmp_path, "a.txt")
    (key,) = panel.queue.add([a])
    job_id = panel.queue.entries[key].job_id
    out = tmp_path / "out" / "a.zh.txt"
    out.parent.mkdir()
    out.write_text("译文", encoding="utf-8")
    panel.queue.worker.document_finished.emit(job_id, result(a, out))
    row = panel.rows[key]
    assert row.state.text() == "Done" and row.bar.text() == "12 / 12 parts" and row.eta.text() == "Took 3 s"
    assert row.detail.text() == "Saved as a.zh.txt"
    assert not shown(row.cancel_button) and shown(row.open_button) and shown(row.folder_button)
    row.open_button.click()
    row.folder_button.click()
    assert opened == [str(out), str(out.parent)]
    assert not panel.notice.isVisibleTo(panel)
    assert panel.windowTitle() == "Documents"


def test_when_nothing_can_open_the_result_the_panel_says_so_and_offers_the_path(panel, tmp_path, monkeypatch):
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: False)
    (a,) = make(tmp_path, "a.txt")
    (key,) = panel.queue.add([a])
    out = tmp_path / "a.zh.txt"
    panel.queue.worker.document_finished.emit(panel.queue.entries[key].job_id, result(a, out))
    panel.rows[key].folder_button.click()
    assert panel.notice.messages() == [f"No file manager could open the folder. Open it yourself: {tmp_path}"]
    panel.notice.action_button.click()
    assert QGuiApplication.clipboard().text() == str(tmp_path)
    panel.rows[key].open_button.click()
    assert f"No application could open a.zh.txt. Open it yourself: {out}" in panel.notice.messages()


def test_cancel_of_the_running_and_of_a_waiting_file(panel, tmp_path):
    a, b = make(tmp_path, "a.txt", "b.txt")
    ka, kb = panel.queue.add([a, b])
    worker = panel.queue.worker
    ja, jb = panel.queue.entries[ka].job_id, panel.queue.entries[kb].job_id
    worker.document_progress.emit(ja, progress(a, 4, 12))
    panel.rows[ka].cancel_button.click()
    assert worker.cancelled == [ja]
    assert panel.rows[ka].state.text() == "Stopping…" and not panel.rows[ka].cancel_button.isEnabled()
    panel.rows[kb].cancel_button.click()
    assert worker.cancelled == [ja, jb]
    worker.document_finished.emit(jb, result(b, None, cancelled=True))
    worker.document_finished.emit(ja, result(a, None, cancelled=True))
    for key in (ka, kb):
        row = panel.rows[key]
        assert row.state.text() == "Cancelled" and not shown(row.cancel_button) and not shown(row.open_button)
        assert shown(row.retry_button) and row.retry_button.text() == "Try again"
    panel.rows[ka].retry_button.click()  # queued again (a real job resumes from its progress file)
    assert worker.queued[-1][1] == a and panel.queue.entries[ka].state is State.QUEUED


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (NO_MODEL, "No translation model is loaded."),
        (
            f"{DOC_DIRECTION}en-zh",
            "Stopped because the translation direction changed. Switch back to English → Chinese and press Try again "
            "to go on from where it stopped.",
        ),
        (f"{INTERNAL}KeyError: 'w:t'", "An unexpected error stopped it. Try again; if it keeps failing, the file may"),
        ("report.docx is encrypted: save it without a password, then translate it", "report.docx is encrypted"),
    ],
)
def test_a_failure_is_shown_in_words(panel, tmp_path, message, expected):
    (a,) = make(tmp_path, "report.docx")
    (key,) = panel.queue.add([a])
    panel.queue.worker.document_failed.emit(panel.queue.entries[key].job_id, message)
    row = panel.rows[key]
    assert row.state.text() == "Failed"
    assert row.detail.text().startswith(expected) and shown(row.detail)
    assert "internal-error" not in row.detail.text() and "KeyError" not in row.detail.text()


def test_files_qiao_cannot_translate_fail_at_once_with_the_reason(panel, tmp_path):
    pdf, odd = make(tmp_path, "paper.pdf", "data.xyz")
    keys = panel.queue.add([pdf, odd, tmp_path / "gone.txt", tmp_path])
    assert panel.queue.worker.queued == [], "nothing reached the worker"
    texts = [panel.rows[k].detail.text() for k in keys]
    assert texts[0].startswith("PDF is not supported: its layout cannot be rebuilt in another language.")
    assert texts[1].startswith("Qiao does not translate this kind of file.") and ".docx" in texts[1]
    assert texts[2] == "The file is no longer there."
    assert texts[3] == "This is a folder: add the documents in it instead."
    assert all(panel.rows[k].state.text() == "Failed" for k in keys)
    assert [panel.rows[k].kind.text() for k in keys[:2]] == ["PDF", "XYZ"]
    assert not any(shown(panel.rows[k].retry_button) for k in keys), "trying again cannot help"


def test_a_result_name_the_job_would_refuse_fails_in_the_row_not_in_the_slot(panel, tmp_path, monkeypatch):
    # The queue names the result by the job's own rule (engine.documents.job.result_name), so it never promises a
    # name the job then refuses, and a name that is not a file name is a failed row with the reason.
    monkeypatch.setattr(panel.queue, "options", lambda overwrite=False: DocumentOptions(name_template="{nope}"))
    (a,) = make(tmp_path, "a.txt")
    (key,) = panel.queue.add([a])
    assert panel.queue.worker.queued == []
    row = panel.rows[key]
    assert row.state.text() == "Failed" and "is not a valid template" in row.detail.text()


def test_an_earlier_result_in_the_way_is_replaced_only_when_asked(panel, tmp_path):
    (a,) = make(tmp_path, "a.txt")
    (tmp_path / "a.zh.txt").write_text("old", encoding="utf-8")
    (key,) = panel.queue.add([a])
    worker = panel.queue.worker
    assert worker.queued[0][2].overwrite is False
    worker.document_failed.emit(panel.queue.entries[key].job_id, "a.zh.txt exists already; choose to overwrite it")
    row = panel.rows[key]
    assert row.detail.text() == (
        "A translation of this file is already there (a.zh.txt). Replace it, or choose another name or folder below "
        "and press Try again."
    )
    assert row.retry_button.text() == "Replace the earlier result"
    row.retry_button.click()
    assert worker.queued[-1][2].overwrite is True


def test_a_result_says_what_was_left_untranslated_and_what_came_from_an_earlier_run(panel, tmp_path):
    from dataclasses import replace

    (a,) = make(tmp_path, "a.txt")
    (key,) = panel.queue.add([a])
    done = replace(result(a, tmp_path / "a.zh.txt"), resumed=5)
    if hasattr(done, "failed_units"):  # a field the runner adds to the contract
        done = replace(done, failed_units=2)
    panel.queue.worker.document_finished.emit(panel.queue.entries[key].job_id, done)
    text = panel.rows[key].detail.text()
    assert text.startswith("Saved as a.zh.txt") and "went on from where it stopped (5 parts done before)" in text
    assert ("2 parts could not be translated" in text) == hasattr(done, "failed_units")


def test_clear_finished_forgets_only_the_ended_files(panel, tmp_path):
    a, b = make(tmp_path, "a.txt", "b.txt")
    ka, kb = panel.queue.add([a, b])
    assert not panel.clear_button.isEnabled()
    panel.queue.worker.document_finished.emit(panel.queue.entries[ka].job_id, result(a, tmp_path / "a.zh.txt"))
    assert panel.clear_button.isEnabled()
    panel.clear_button.click()
    assert list(panel.rows) == [kb] and list(panel.queue.entries) == [kb]
    assert panel.queue.worker.queued[0][1] == a and a.exists(), "the files themselves are untouched"


def test_the_result_folder_and_name_are_settings(panel, tmp_path, settings, monkeypatch):
    panel.show()
    assert panel.folder_value.text() == "beside each original" and not panel.beside_button.isEnabled()
    target = tmp_path / "translated"
    monkeypatch.setattr(panel, "ask_folder", lambda: str(target))
    panel.choose_button.click()
    assert settings.get(Key.DOCUMENT_FOLDER) == str(target)
    assert panel.folder_value.text() == str(target) and panel.beside_button.isEnabled()
    (a,) = make(tmp_path, "a.txt")
    panel.queue.add([a])
    assert panel.queue.worker.queued[-1][2].out_dir == target
    panel.name_edit.setText("{stem}_cn{suffix}")
    panel.name_edit.editingFinished.emit()
    assert settings.get(Key.DOCUMENT_NAME) == "{stem}_cn{suffix}"
    panel.name_edit.setText("../{lang}")
    panel.name_edit.editingFinished.emit()
    assert settings.get(Key.DOCUMENT_NAME) == "{stem}_cn{suffix}", "a name that is not a file name is refused"
    assert panel.name_edit.text() == "{stem}_cn{suffix}"
    assert panel.notice.messages()[-1].startswith("A result's name must contain {stem}")
    panel.beside_button.click()
    assert settings.get(Key.DOCUMENT_FOLDER) == ""


def test_add_documents_uses_the_file_dialog_and_remembers_its_folder(panel, tmp_path, settings, monkeypatch):
    a, b = make(tmp_path, "a.txt", "b.md")
    monkeypatch.setattr(panel, "ask_documents", lambda: [str(a), str(b)])
    panel.add_button.click()
    assert [q[1] for q in panel.queue.worker.queued] == [a, b]
    assert settings.get(Key.DOCUMENT_OPEN_DIR) == str(tmp_path)


def test_the_file_dialog_lists_the_formats_qiao_reads(qapp, monkeypatch):
    use_fake_formats(monkeypatch)
    assert document_queue.supported_extensions() == (".txt", ".md", ".markdown", ".docx")


def test_the_panel_speaks_chinese(qtbot, panel, tmp_path):
    install_translators("zh_CN")
    qtbot.waitUntil(lambda: panel.add_button.text() == "添加文档…", timeout=2000)
    (a,) = make(tmp_path, "a.docx")
    (key,) = panel.queue.add([a])
    job_id = panel.queue.entries[key].job_id
    panel.queue.worker.document_progress.emit(job_id, progress(a, 6, 12, eta=150.0))
    row = panel.rows[key]
    assert row.kind.text() == "Word 文档"
    assert row.state.text() == "正在翻译" and row.bar.text() == "6 / 12 段" and row.eta.text() == "还剩约 3 分钟"
    assert row.cancel_button.text() == "取消" and panel.add_button.text() == "添加文档…"
    assert panel.folder_value.text() == "与原文件放在一起"
    panel.queue.worker.document_failed.emit(job_id, NO_MODEL)
    assert row.state.text() == "失败" and row.detail.text() == "未加载翻译模型。"
    install_translators("en")
    qtbot.waitUntil(lambda: panel.add_button.text() == "Add documents…", timeout=2000)
    assert row.state.text() == "Failed"
