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


def _serve_in_app_api(window, monkeypatch):
    """Settings → Local translation API switched on, on a free port (127.0.0.1 only); the desktop hooks and the port."""
    refused = socket.getaddrinfo  # the GUI tests' own guard: 127.0.0.1 only, anything else still fails the test

    def lookup(host, *args, **kwargs):
        return _GETADDRINFO(host, *args, **kwargs) if host == "127.0.0.1" else refused(host, *args)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    allow_loopback(monkeypatch)
    desktop = attach_desktop(window, use_tray=False)
    port = _free_port()
    window.settings.set(Key.API_PORT, port)
    window.settings.set(Key.API_ENABLED, True)
    assert desktop.api.address == ("127.0.0.1", port), desktop.api.problem
    return desktop, port


def _api_answers(worker) -> list[tuple[str, int, object]]:
    """The worker's answers to API requests, in the order it gives them: (finished, id, items) or (failed, id, why)."""
    ended: list[tuple[str, int, object]] = []
    direct = Qt.ConnectionType.DirectConnection  # on the worker thread, as the service's own
    worker.ordered_finished.connect(lambda rid, results: ended.append(("finished", rid, len(results))), direct)
    worker.ordered_failed.connect(lambda rid, message: ended.append(("failed", rid, message)), direct)
    return ended


def _send_raw(port: int, path: str, fields: dict) -> socket.socket:
    """A client that sends its request and reads nothing (yet): its socket, for the test to close."""
    body = json.dumps(fields).encode()
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
    return client


LONG_REQUEST = [f"Thank you very much for the {n} letters you sent to us last week." for n in range(1000)]


def test_an_in_app_api_request_whose_client_closed_is_cancelled_not_served_to_its_end(qtbot, window, monkeypatch):
    """A client that sends a long request and closes its connection: the window's worker drops that request (it ran
    to its end before, nobody reading it, and the next client waited behind it all that time)."""
    from gui.worker.messages import CANCELLED

    worker = window.engine.worker
    ended = _api_answers(worker)
    desktop, port = _serve_in_app_api(window, monkeypatch)
    try:
        abandoned = _send_raw(port, "/translate", {"q": LONG_REQUEST, "source": "en", "target": "zh"})
        try:
            qtbot.waitUntil(lambda: worker.ordered_pending() == 1, timeout=10_000)  # on the worker
        finally:
            abandoned.close()  # the client gives up on it
        pool = ThreadPoolExecutor(max_workers=1)
        one = json.dumps({"q": "Thank you very much.", "source": "en", "target": "zh"}).encode()
        future = pool.submit(_post, port, "/translate", one, "application/json")
        qtbot.waitUntil(future.done, timeout=120_000)
        pool.shutdown()
        status, reply = future.result()
        assert status == 200, reply
        assert json.loads(reply)["translatedText"] == "非常感谢。"
        qtbot.waitUntil(lambda: len(ended) == 2, timeout=5000)
        (first_kind, first_id, first_note), (second_kind, second_id, _) = ended
        assert (first_kind, first_note) == ("failed", CANCELLED), ended  # not run through its 1000 items
        assert second_kind == "finished" and second_id > first_id, ended
        assert worker.ordered_pending() == 0
    finally:
        desktop.shutdown()
    assert desktop.api.address is None


def test_an_in_app_api_stream_whose_client_closed_while_it_waited_is_dropped_at_once(qtbot, window, monkeypatch):
    """A /qiao/stream request waiting behind another client's long request, whose client closes: it is dropped
    from the worker's queue then, not kept until its turn (nothing is written to a waiting stream, so nothing else
    could notice the client gone before the engine had started on it)."""
    from gui.worker.messages import CANCELLED

    worker = window.engine.worker
    ended = _api_answers(worker)
    desktop, port = _serve_in_app_api(window, monkeypatch)
    try:
        long = _send_raw(port, "/translate", {"q": LONG_REQUEST, "source": "en", "target": "zh"})
        try:
            qtbot.waitUntil(lambda: worker.ordered_pending() == 1, timeout=10_000)
            stream = _send_raw(port, "/qiao/stream", {"q": "Thank you very much.", "source": "en", "target": "zh"})
            try:
                qtbot.waitUntil(lambda: worker.ordered_pending() == 2, timeout=10_000)
            finally:
                stream.close()
            qtbot.waitUntil(lambda: len(ended) == 1, timeout=120_000)
        finally:
            long.close()  # its client goes too: the test does not wait for its 1000 items
        qtbot.waitUntil(lambda: len(ended) == 2 and worker.ordered_pending() == 0, timeout=120_000)
        long_id, stream_id = sorted(rid for _, rid, _ in ended)
        assert ended[0] == ("failed", stream_id, CANCELLED), ended  # while the long one still ran
        assert ended[1][1] == long_id, ended
    finally:
        desktop.shutdown()
    assert desktop.api.address is None


def test_the_in_app_api_serves_text_and_files_from_the_windows_engine(qtbot, window, monkeypatch):
    from docx import Document

    desktop, port = _serve_in_app_api(window, monkeypatch)
    try:
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
