"""`qiao popup [TEXT]`, `qiao translate --app TEXT` and `--background`: requests for the app (handed to the running
Qiao by gui.app.run), parsed before the engine's command line; and, for real, a second start reaching the first."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from gui.desktop.instance_protocol import MAX_TEXT  # the running Qiao's limit: the CLI's must be the same
from qiao.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def app(monkeypatch):
    """gui.app.run replaced: (model, action, text, background) per call."""
    calls: list[tuple] = []

    def fake_run(model_dir=None, request=None, *, background=False) -> int:
        calls.append((model_dir, request.action if request else None, request.text if request else None, background))
        return 0

    monkeypatch.setattr("gui.app.run", fake_run)
    return calls


def test_popup_with_and_without_text(app):
    assert main(["popup"]) == 0
    assert main(["popup", "Thank you very much."]) == 0
    assert main(["--model", "/m", "popup", "hi"]) == 0
    assert app == [
        (None, "popup", None, False),
        (None, "popup", "Thank you very much.", False),
        ("/m", "popup", "hi", False),
    ]


def test_translate_app_hands_the_text_to_the_app_not_the_engine(app, monkeypatch):
    assert main(["translate", "--app", "Good morning"]) == 0
    monkeypatch.setattr(sys, "stdin", io.StringIO("from stdin\n"))
    assert main(["translate", "--app"]) == 0
    assert app == [(None, "translate", "Good morning", False), (None, "translate", "from stdin\n", False)]


def test_translate_without_app_is_still_the_engines(app, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    main(["translate", "--model", "/nonexistent", "hello"])
    assert app == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["translate", "--app", "   "], "the text is empty"),
        (["translate", "--app", "x" * (MAX_TEXT + 1)], "longer than"),
        (["popup", "x" * (MAX_TEXT + 1)], "longer than"),
        (["popup", "a", "b"], "unrecognized arguments"),
    ],
)
def test_bad_app_requests_are_usage_errors(app, capsys, argv, message):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2 and message in capsys.readouterr().err
    assert app == []


def test_a_text_at_the_running_qiaos_limit_is_handed_over(app):
    assert main(["popup", "x" * MAX_TEXT]) == 0
    assert main(["translate", "--app", "y" * MAX_TEXT]) == 0
    assert [(action, len(text)) for _, action, text, _ in app] == [("popup", MAX_TEXT), ("translate", MAX_TEXT)]


def test_the_command_line_loads_no_qt_until_it_opens_the_app():
    """`qiao --version`, the engine's commands and a refused app request answer without loading Qt."""
    code = (
        "import sys\n"
        "from qiao.cli import main\n"
        f"for argv in (['--version'], ['popup', 'x' * {MAX_TEXT + 1}]):\n"
        "    try:\n"
        "        main(argv)\n"
        "    except SystemExit:\n"
        "        pass\n"
        "print('QT', sorted(m for m in sys.modules if m.startswith(('PySide6', 'shiboken6'))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "QT []" in proc.stdout and "qiao " in proc.stdout and "longer than" in proc.stderr


def test_background_starts_the_app_in_the_tray(app):
    assert main(["--background"]) == 0
    assert main(["--background", "popup"]) == 0
    assert app == [(None, None, None, True), (None, "popup", None, True)]


def test_help_mentions_popup(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "qiao popup" in capsys.readouterr().out


@pytest.mark.skipif(sys.platform == "win32", reason="Unix socket path")
def test_a_second_qiao_popup_reaches_the_running_instance(tmp_path):
    """Two real processes: a running Qiao (offscreen, tiny model) and `python -m qiao popup TEXT`, which hands its
    text over and exits 0 while the first translates it in its quick-translate popup (the popup channel: the window's
    own pane stays empty)."""
    runtime = tempfile.mkdtemp(prefix="qi-")
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "XDG_RUNTIME_DIR": runtime,
        "QIAO_CONFIG_DIR": str(tmp_path / "config"),
        "QIAO_STATE_DIR": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        "QIAO_MODEL_DIR": str(ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle"),
    }
    out = tmp_path / "seen.txt"
    first_code = (
        "import sys, logging; logging.basicConfig(level=logging.INFO)\n"
        "from PySide6.QtCore import QTimer\n"
        "from PySide6.QtWidgets import QApplication\n"
        "from gui import app as gui_app\n"
        "def poll():\n"
        "    tops = QApplication.topLevelWidgets()\n"
        "    window = next(w for w in tops if getattr(w, 'target', None) is not None)\n"
        "    for w in tops:\n"
        "        if type(w).__name__ == 'QuickPopup' and w.translation.endswith('。'):\n"
        "            seen = w.translation + '|' + window.target.toPlainText()\n"
        f"            open({str(out)!r}, 'w', encoding='utf-8').write(seen); QApplication.quit(); return\n"
        "    QTimer.singleShot(50, poll)\n"
        "QTimer.singleShot(0, poll)\n"
        "sys.exit(gui_app.run(None))\n"
    )
    first = subprocess.Popen([sys.executable, "-c", first_code], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        socket_path = Path(runtime) / "qiao" / "instance"
        for _ in range(200):
            if socket_path.exists():
                break
            subprocess.run([sys.executable, "-c", "import time; time.sleep(0.05)"], check=True)
        assert socket_path.exists(), "the first Qiao listens"
        second = subprocess.run(
            [sys.executable, "-m", "qiao", "popup", "Thank you very much."],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert second.returncode == 0, second.stderr
        assert "handed to the Qiao already running" in second.stderr
        assert first.wait(60) == 0
        assert out.read_text(encoding="utf-8") == "非常感谢。|"  # in the popup; the window's pane untouched
        assert "request from another start: popup" in first.stderr.read()
    finally:
        if first.poll() is None:
            first.kill()
        shutil.rmtree(runtime, ignore_errors=True)
