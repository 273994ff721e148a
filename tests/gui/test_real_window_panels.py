"""Every other panel that reaches the engine, in the real window with the real worker and engine (the tiny fixture
model), wired as gui.app wires them: the history (and its memory, which documents use too), the glossary, the
Models dialog in a new profile, the quick popup and the in-app API host. No fake translator, job or store: each test
fails where the window's way to the engine is broken, as documents were while their tests ran on fakes."""

from __future__ import annotations

import http.client
import io
import json
import socket
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTableWidgetItem

from engine.glossary import Glossary, GlossaryEntry
from gui.app import attach_desktop, attach_quick, attach_records
from gui.desktop.single_instance import InstanceRequest
from gui.documents.document_queue import State
from gui.settings import Key
from gui.window.main_window import MainWindow
from gui.worker.engine import local_engine
from tests.engine.api.fakes import multipart
from tests.engine.api.serving import allow_loopback

_GETADDRINFO = socket.getaddrinfo  # before any test patches it
TINY_BUNDLE = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_marian" / "bundle"
URL = "https://example.org/path?q=1"


def translate_in_window(qtbot, window, text: str) -> str:
    window.source.setPlainText(text)
    window.translate()
    qtbot.waitUntil(lambda: not window.translating and bool(window.target.toPlainText()), timeout=10_000)
    return window.target.toPlainText()


def translate_document(qtbot, window, path: Path) -> Path:
    """Queue `path` in the Documents panel and wait for its result (the panel's failure text if there is none)."""
    before = len(window.documents.entries)
    window.documents.add([path])
    qtbot.waitUntil(
        lambda: len(window.documents.entries) > before and list(window.documents.entries.values())[-1].state.ended,
        timeout=10_000,
    )
    entry = list(window.documents.entries.values())[-1]
    detail = window.documents_panel.rows[entry.key].detail.text()
    assert entry.state is State.DONE, detail
    return entry.output


@pytest.fixture
def window(make_window, monkeypatch):
    monkeypatch.delenv("QIAO_DATA_DIR", raising=False)  # the history and the glossary live in this test's folder
    w = make_window()
    attach_records(w)  # the glossary (Tools → Glossary…) and the history (View → History), as gui.app does
    yield w
    if getattr(w, "history_recorder", None) is not None:
        w.history_recorder.close()


def test_history_records_reopens_and_its_memory_reaches_documents(qtbot, window, tmp_path):
    assert translate_in_window(qtbot, window, "Thank you very much.") == "非常感谢。"
    recorder, panel = window.history_recorder, window.history_panel
    recorder.wait()
    qtbot.keyClick(window, Qt.Key.Key_H, Qt.KeyboardModifier.ControlModifier)  # View → History
    assert panel.isVisible()
    qtbot.waitUntil(lambda: [e.source for e in panel.entries()] == ["Thank you very much."], timeout=5000)
    [entry] = panel.entries()
    assert (entry.output, entry.pair, entry.model) == ("非常感谢。", "en-zh", window.model.model_id)
    window.source.setPlainText("")
    panel.list.setCurrentRow(0)
    panel.reopen_selected()
    assert window.source.toPlainText() == "Thank you very much." and window.target.toPlainText() == "非常感谢。"

    # The user's own fix, kept in the history's memory, is used by the window and by a document from the window:
    # the memory is the lock-holding object that made every document fail.
    recorder.store.remember("en-zh", "Thank you very much.", "多谢您！")
    assert translate_in_window(qtbot, window, "Thank you very much. See you tomorrow.") == "多谢您！明天见。"
    source = tmp_path / "letter.txt"
    source.write_text("Thank you very much.\n\nSee you tomorrow.\n", encoding="utf-8")
    output = translate_document(qtbot, window, source)
    assert output.read_text(encoding="utf-8") == "多谢您！\n\n明天见。\n"


def test_a_glossary_term_from_the_dialog_applies_in_the_window_and_to_documents(qtbot, window, tmp_path):
    assert translate_in_window(qtbot, window, "I like green tea.") == "我喜欢绿茶。"
    dialog = window.glossary_menu.open()  # Tools → Glossary…
    dialog.add_row()
    dialog.table.setItem(0, 0, QTableWidgetItem("green tea"))
    dialog.table.setItem(0, 1, QTableWidgetItem("红茶"))
    dialog.accept()
    assert window.requests.options().glossary == Glossary((GlossaryEntry("green tea", "红茶"),))
    # OK redoes what is shown, with the term
    qtbot.waitUntil(lambda: window.target.toPlainText() == "我喜欢红茶。", timeout=10_000)
    source = tmp_path / "menu.txt"
    source.write_text(f"I like green tea.\n\n{URL}\n", encoding="utf-8")
    output = translate_document(qtbot, window, source)
    assert output.read_text(encoding="utf-8") == f"我喜欢红茶。\n\n{URL}\n"
    window.settings.set(Key.GLOSSARY_ENABLED, False)
    qtbot.waitUntil(lambda: window.target.toPlainText() == "我喜欢绿茶。", timeout=10_000)


def test_a_model_imported_in_the_models_dialog_translates_in_a_new_profile(qtbot, settings, tmp_path, monkeypatch):
    monkeypatch.delenv("QIAO_DATA_DIR", raising=False)
    # the engine's own locator, store and worker, as gui.app wires them
    window = MainWindow(settings, tmp_path / "state" / "source.txt", engine=local_engine())
    qtbot.addWidget(window)
    window.show()
    try:
        # the controller's slot and the model panel's each get their own queued event: wait for both
        qtbot.waitUntil(lambda: window.problem is not None and window.model_panel.isVisible(), timeout=10_000)
        assert window.model is None
        dialog = window.open_models()
        qtbot.waitUntil(lambda: not dialog._job, timeout=10_000)
        assert dialog.installed.rowCount() == 0
        dialog.import_from(TINY_BUNDLE)  # what "Import…" does with the folder the user picks
        qtbot.waitUntil(lambda: window.model is not None and not window.model_panel.isVisible(), timeout=30_000)
        assert dialog.installed.rowCount() == 1
        assert Path(window.model.bundle_dir).is_relative_to(tmp_path)  # the copy in this profile's models folder
        dialog.close()
        assert translate_in_window(qtbot, window, "Thank you very much.") == "非常感谢。"
        source = tmp_path / "first.txt"
        source.write_text("See you tomorrow.\n", encoding="utf-8")
        assert translate_document(qtbot, window, source).read_text(encoding="utf-8") == "明天见。\n"
    finally:
        window.shutdown()


def test_the_quick_popup_translates_on_the_windows_engine(qtbot, window):
    from tests.gui.quick.fakes import FakeBackend

    desktop = attach_desktop(window, use_tray=False)
    quick = attach_quick(window, desktop, backend=FakeBackend())  # only the global shortcut is a stand-in
    qtbot.addWidget(quick.popup)
    try:
        desktop.handle(InstanceRequest("popup", "See you tomorrow."))  # `qiao popup TEXT`
        qtbot.waitUntil(lambda: quick.popup.translation == "明天见。", timeout=10_000)
        assert quick.popup.isVisible() and window.target.toPlainText() == ""  # the window's pane is untouched
        desktop.handle(InstanceRequest("popup", URL))
        qtbot.waitUntil(lambda: quick.popup.source_text == URL and quick.popup.state != "translating", timeout=10_000)
        assert quick.popup.translation == URL  # kept, not a made-up sentence
    finally:
        quick.shutdown()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _post(port: int, path: str, body: bytes, content_type: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, body=body, headers={"Content-Type": content_type})
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def _get(port: int, path: str) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", path)
        reply = conn.getresponse()
        return reply.status, reply.read()
    finally:
        conn.close()


def test_the_in_app_api_serves_text_and_files_from_the_windows_engine(qtbot, window, monkeypatch):
    from docx import Document

    refused = socket.getaddrinfo  # the GUI tests' own guard: 127.0.0.1 only, anything else still fails the test

    def lookup(host, *args, **kwargs):
        return _GETADDRINFO(host, *args, **kwargs) if host == "127.0.0.1" else refused(host, *args)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    allow_loopback(monkeypatch)
    desktop = attach_desktop(window, use_tray=False)
    port = _free_port()
    window.settings.set(Key.API_PORT, port)
    window.settings.set(Key.API_ENABLED, True)  # Settings → Local translation API
    try:
        assert desktop.api.address == ("127.0.0.1", port), desktop.api.problem
        pool = ThreadPoolExecutor(max_workers=1)  # a client outside the UI thread, which serves the engine
        body = json.dumps({"q": ["Thank you very much.", URL], "source": "en", "target": "zh"}).encode()
        future = pool.submit(_post, port, "/translate", body, "application/json")
        qtbot.waitUntil(future.done, timeout=20_000)
        status, reply = future.result()
        assert status == 200, reply
        assert json.loads(reply)["translatedText"] == ["非常感谢。", URL]

        doc = Document()
        for text in ("Thank you very much.", URL, "See you tomorrow."):
            doc.add_paragraph(text)
        buffer = io.BytesIO()
        doc.save(buffer)
        data, ctype = multipart({"source": "en", "target": "zh"}, {"file": ("r.docx", buffer.getvalue())})
        future = pool.submit(_post, port, "/translate_file", data, ctype)
        qtbot.waitUntil(future.done, timeout=20_000)
        status, reply = future.result()
        assert status == 200, reply
        url = json.loads(reply)["translatedFileUrl"]
        future = pool.submit(_get, port, url.split(str(port), 1)[1])
        qtbot.waitUntil(future.done, timeout=20_000)
        status, got = future.result()
        assert status == 200
        paragraphs = [p.text for p in Document(io.BytesIO(got)).paragraphs]
        assert paragraphs == ["非常感谢。", URL, "明天见。"]
        pool.shutdown()
    finally:
        desktop.shutdown()
    assert desktop.api.address is None
