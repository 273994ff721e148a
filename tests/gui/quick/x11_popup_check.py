"""Run by test_quick_x11_popup.py on a real X server with a window manager (QT_QPA_PLATFORM=xcb): the popup after the
real global shortcut takes focus (so Esc works), closes on Esc, hides when another window is clicked, and stays
when pinned. Prints one JSON line of observations; the test asserts on them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from PySide6.QtCore import QEventLoop, QTimer  # noqa: E402
from PySide6.QtGui import QClipboard, QGuiApplication  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from engine.results import Translation  # noqa: E402
from gui.quick.controller import QuickSettings, QuickTranslate  # noqa: E402
from tests.gui.quick.fakes import FakePopupWorker  # noqa: E402


def wait(ms: int, until=None) -> bool:
    loop = QEventLoop()
    timer = QTimer()
    timer.setInterval(20)
    deadline = QTimer()
    deadline.setSingleShot(True)
    deadline.timeout.connect(loop.quit)
    if until is not None:
        timer.timeout.connect(lambda: until() and loop.quit())
        timer.start()
    deadline.start(ms)
    loop.exec()
    return until() if until is not None else True


def xdo(*args: str) -> None:
    subprocess.run(["xdotool", *args], check=True)


def main() -> int:
    _app = QApplication(sys.argv)  # kept referenced for the whole run
    other = QWidget()
    other.setWindowTitle("another app")
    other.setGeometry(600, 400, 300, 200)
    other.show()
    worker = FakePopupWorker()
    quick = QuickTranslate(worker, lambda: None, QuickSettings())
    out: dict[str, object] = {"shortcut": quick.shortcut_result.status}
    QGuiApplication.clipboard().setText("Thank you very much.", QClipboard.Mode.Selection)
    wait(300)
    popup = quick.popup

    def press() -> bool:
        xdo("mousemove", "100", "100")
        xdo("key", "ctrl+alt+t")
        return wait(3000, lambda: popup.isVisible() and popup.isActiveWindow())

    out["shown_and_active"] = press()
    out["request"] = worker.requests[-1][1] if worker.requests else None
    out["channel"] = worker.requests[-1][3] if worker.requests else None
    worker.translation_finished.emit(worker.last[0], Translation(text="非常感谢。"))
    out["text"] = popup.result.toPlainText()
    out["near_mouse"] = abs(popup.x() - 100) < 60 and abs(popup.y() - 100) < 60
    xdo("key", "Escape")
    out["esc_hides"] = wait(2000, lambda: not popup.isVisible())
    press()
    xdo("mousemove", "750", "500", "click", "1")
    out["click_elsewhere_hides"] = wait(2000, lambda: not popup.isVisible())
    press()
    popup.set_pinned(True)
    xdo("mousemove", "750", "500", "click", "1")
    wait(800)
    out["pinned_stays"] = popup.isVisible()
    quick.shutdown()
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
