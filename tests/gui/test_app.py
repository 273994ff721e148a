"""Start-up and process-wide promises: `run()` opens a working window, nothing touches the network, the Qt
binding does not corrupt Python's reference counts, and the desktop integration files are in place."""

from __future__ import annotations

import ast
import configparser
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import TINY_BUNDLE
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QLabel

from gui import app as gui_app
from gui.icons import ASSETS, app_icon
from gui.theme import apply_theme, is_dark
from gui.window.main_window import MainWindow
from gui.worker.engine import local_engine
from tests.gui.fakes import FakeFactory, fixed_locator

ROOT = Path(__file__).resolve().parents[2]
_real_connect = socket.socket.connect  # before conftest's no-network guard replaces it during each test


def _close_when_ready(seen: dict) -> None:
    windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
    if windows and windows[0].model is not None:
        seen["window"] = windows[0]
        seen["title"] = windows[0].windowTitle()
        seen["display_name"] = QApplication.applicationDisplayName()
        windows[0].source.setPlainText("Thank you very much.")
        windows[0].translate()
        QTimer.singleShot(300, windows[0].close)
        return
    QTimer.singleShot(20, lambda: _close_when_ready(seen))


@pytest.fixture(autouse=True)
def private_instance_socket(monkeypatch, no_network):
    """run() claims the single-instance socket: a private one per test, never a Qiao the user runs. It is a Unix
    socket (not the network): those connections alone pass the no-network guard, which still catches the rest."""
    path = tempfile.mkdtemp(prefix="qi-")
    monkeypatch.setenv("XDG_RUNTIME_DIR", path)
    guard = socket.socket.connect

    def connect(self: socket.socket, address: object) -> None:
        return (_real_connect if self.family == socket.AF_UNIX else guard)(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_run_opens_the_window_translates_and_exits_cleanly(qtbot, private_dirs):
    """`qiao --model DIR` end to end: real engine, the tiny committed model, real settings and autosave files."""
    seen: dict = {}
    QTimer.singleShot(0, lambda: _close_when_ready(seen))
    assert gui_app.run(str(TINY_BUNDLE)) == 0
    # Qt shows "<title> — <display name>": the title itself must not say "Qiao" again ("Qiao — … — Qiao")
    assert seen["display_name"] == "Qiao" and seen["title"] == "English to Chinese"
    assert seen["window"].model.bundle_dir == str(TINY_BUNDLE)
    assert seen["window"].target.toPlainText() == "非常感谢。"
    assert not seen["window"].engine.thread.isRunning(), "closing stops the engine thread"
    ini = (private_dirs / "config" / "qiao.ini").read_text(encoding="utf-8")
    assert "geometry" in ini, "window state saved on exit"
    assert (private_dirs / "state" / "source.txt").read_text(encoding="utf-8") == "Thank you very much."


def test_run_attaches_the_popup_glossary_and_history_once_the_window_is_painted(qtbot, private_dirs):
    """The popup's controller, the glossary and the history database (~0.25 s) wait for the first paint
    (gui.app.after_first_paint): they are there soon after, and the window was on screen before them."""
    seen: dict = {}

    def look() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not windows:
            QTimer.singleShot(5, look)
            return
        window = windows[0]
        seen.setdefault("quick_at_show", window.desktop.quick)
        if window.desktop.quick is None or window.model is None:
            QTimer.singleShot(20, look)
            return
        seen["exposed"] = window.windowHandle().isExposed()
        seen["history"] = getattr(window, "history_panel", None)
        seen["glossary"] = getattr(window, "glossary_menu", None)
        seen["quick"] = window.desktop.quick
        window.close()

    QTimer.singleShot(0, look)
    assert gui_app.run(str(TINY_BUNDLE)) == 0
    assert seen["quick_at_show"] is None, "the popup's controller came before the first paint"
    assert seen["exposed"] and seen["quick"] is not None
    assert seen["history"] is not None and seen["glossary"] is not None


def test_after_first_paint_waits_for_the_expose_and_runs_once(qtbot):
    widget = QLabel("x")
    qtbot.addWidget(widget)
    widget.show()
    calls: list[bool] = []
    gui_app.after_first_paint(widget, lambda: calls.append(widget.windowHandle().isExposed()))
    assert calls == [], "never inside the call: a turn later at the earliest"
    qtbot.waitUntil(lambda: bool(calls), timeout=3000)
    widget.hide()
    widget.show()  # a second expose
    qtbot.wait(gui_app._AfterFirstPaint.FALLBACK_MS + 200)  # and past the fallback timer
    assert calls == [True]


@pytest.mark.parametrize("shown", [False, True], ids=["hidden (tray start)", "painted already"])
def test_after_first_paint_runs_a_turn_later_when_there_is_no_expose_to_wait_for(qtbot, shown):
    widget = QLabel("x")
    qtbot.addWidget(widget)
    if shown:
        widget.show()
        qtbot.waitUntil(lambda: widget.windowHandle().isExposed(), timeout=3000)
    calls: list[int] = []
    gui_app.after_first_paint(widget, lambda: calls.append(1))
    assert calls == []
    qtbot.wait(50)  # well before the 1 s fallback
    assert calls == [1]


def test_qiao_model_dir_env_is_honoured(qtbot, private_dirs, monkeypatch):
    monkeypatch.setenv("QIAO_MODEL_DIR", str(TINY_BUNDLE))
    seen: dict = {}
    QTimer.singleShot(0, lambda: _close_when_ready(seen))
    assert gui_app.run(None) == 0
    assert seen["window"].model.bundle_dir == str(TINY_BUNDLE)


def test_create_window_builds_the_window_on_the_engine_it_is_given(qtbot, tmp_path):
    """gui.app is the composition root: the engine on this machine by default, the one a caller passes otherwise."""
    built = FakeFactory()
    window = gui_app.create_window(engine=local_engine(built, fixed_locator(tmp_path / "fake-bundle")))
    qtbot.addWidget(window)
    try:
        qtbot.waitUntil(lambda: window.model is not None, timeout=5000)
        assert window.model.bundle_dir == str(tmp_path / "fake-bundle") and built.built
    finally:
        window.shutdown()


def test_main_passes_the_model_option_to_run(monkeypatch):
    calls: list = []
    monkeypatch.setattr(gui_app, "run", lambda model_dir=None: calls.append(model_dir) or 0)
    assert gui_app.main(["--model", "/opt/models/en-zh"]) == 0
    assert gui_app.main([]) == 0
    assert calls == ["/opt/models/en-zh", None]


def test_window_never_pulls_in_qt_networking(qtbot, make_window):
    window = make_window()  # the real engine: onnxruntime and tokenizers must not reach out either
    window.source.setPlainText("Good morning, everyone!")
    window.translate()
    qtbot.waitUntil(lambda: not window.translating, timeout=5000)
    window.open_about().close()
    window.open_settings().close()
    assert "PySide6.QtNetwork" not in sys.modules


def test_the_gui_never_loads_qt_networking():
    """In a fresh process (this one may have loaded anything): the whole GUI, the single-instance socket included,
    imports no QtNetwork (the frozen app leaves it out)."""
    files = [p.relative_to(ROOT).with_suffix("") for p in (ROOT / "gui").rglob("*.py") if p.stem != "__main__"]
    modules = sorted(".".join(f.parts).removesuffix(".__init__") for f in files)
    code = f"import sys, importlib; [importlib.import_module(m) for m in {modules!r}]; " + (
        "sys.exit(1 if 'PySide6.QtNetwork' in sys.modules else 0)"
    )
    assert "gui.desktop.single_instance" in modules and "gui.app" in modules
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False).returncode == 0


# The single-instance socket is a Unix socket (POSIX) or a named pipe (Windows), never the network
LOCAL_SOCKETS = {"socket"}


def test_the_single_instance_socket_is_never_an_internet_one():
    source = (ROOT / "gui" / "desktop" / "single_instance.py").read_text(encoding="utf-8")
    assert "AF_UNIX" in source
    for name in ("AF_INET", "create_connection", "getaddrinfo", "gethostbyname", "create_server"):
        assert name not in source, name


def test_gui_code_imports_no_networking_module():
    banned = {"socket", "urllib", "http", "requests", "httpx", "ftplib", "smtplib", "PySide6.QtNetwork", "ssl"}
    for path in (ROOT / "gui").rglob("*.py"):
        allowed = LOCAL_SOCKETS if path == ROOT / "gui" / "desktop" / "single_instance.py" else set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for name in names:
                if name in allowed:
                    continue
                assert not any(name == b or name.startswith(b + ".") for b in banned), f"{path.name} imports {name}"


def test_network_guard_itself_works(no_network):
    import socket

    with pytest.raises(AssertionError):
        socket.create_connection(("127.0.0.1", 9))
    with pytest.raises(AssertionError):
        socket.socket().connect(("127.0.0.1", 9))
    assert [a[0] for a in no_network] == ["create_connection", "socket.connect"]
    no_network.clear()  # recorded as it should be; do not fail this test's teardown


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="None is immortal from Python 3.12 on")
def test_qt_binding_keeps_none_refcount_intact(qapp):
    """PySide6 6.12.0 drops a reference to None on every void call; on 3.11 the app then aborts mid-session."""
    label = QLabel()
    before = sys.getrefcount(None)
    for _ in range(2000):
        label.setText("x")
    assert sys.getrefcount(None) - before > -50, "this PySide6 build corrupts None's refcount: see pyproject.toml"


def test_dark_and_light_override(qapp):
    apply_theme(qapp, "dark")
    assert is_dark(qapp.palette())
    apply_theme(qapp, "light")
    assert not is_dark(qapp.palette())
    apply_theme(qapp, "system")


def test_app_icon_has_every_size_for_high_dpi():
    sizes = sorted(int(p.stem.split("-")[1]) for p in ASSETS.glob("qiao-*.png"))
    assert sizes == [16, 24, 32, 48, 64, 128, 256, 512]
    icon = app_icon()
    biggest = max(icon.availableSizes(), key=lambda size: size.width())
    assert not icon.isNull() and icon.actualSize(biggest).width() == 512
    for ext in ("svg", "ico", "icns", "png"):
        assert (ROOT / "resources" / "icons" / f"qiao.{ext}").stat().st_size > 0


def test_linux_desktop_file_launches_qiao_with_its_icon():
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str
    entry.read(ROOT / "resources" / "linux" / "qiao.desktop", encoding="utf-8")
    d = entry["Desktop Entry"]
    assert d["Type"] == "Application" and d["Exec"].split()[0] == "qiao"
    assert d["Icon"] == "qiao" and d["StartupWMClass"] == gui_app.DESKTOP_FILE_NAME
    assert "桥" in d["Name[zh_CN]"] and d["Categories"].endswith(";")
