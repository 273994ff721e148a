"""Screenshot run of the quick popup on a real X server (not a test; run by `shots.sh`).

    DISPLAY=:55 python tests/gui/quick/shots.py --theme dark --lang zh_CN --out shot.png

Loads the tiny en→zh model in the real worker thread, registers the real X11 global shortcut, prints READY, and
when the popup's translation has finished takes a screenshot of the whole screen and exits. Requests go to the worker's
popup channel; the 简体中文 shot uses the app's own translations (gui/i18n).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine.options import TranslationOptions  # noqa: E402
from gui.i18n import install_translators  # noqa: E402
from gui.quick.controller import QuickSettings, QuickTranslate  # noqa: E402
from gui.theme import apply_theme  # noqa: E402
from gui.worker.scheduler import WorkerThread  # noqa: E402

BUNDLE = ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--theme", default="light")
    ap.add_argument("--lang", default="en")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    app = QApplication(sys.argv)
    app.setStyle("Fusion")
    apply_theme(app, args.theme)
    install_translators(args.lang)
    thread = WorkerThread()
    thread.worker.load(str(BUNDLE), "int8", None)
    quick = QuickTranslate(thread.worker, TranslationOptions, QuickSettings())
    print("SHORTCUT", quick.shortcut_result, flush=True)

    def shoot() -> None:
        subprocess.run(["import", "-window", "root", args.out], check=True)
        print("SHOT", args.out, flush=True)
        quick.shutdown()
        thread.shutdown()
        app.quit()

    def poll() -> None:  # on the GUI thread, unlike a plain function connected to the worker's signals
        if quick.popup.isVisible() and quick.popup.state in {"done", "failed", "problem"}:
            timer.stop()
            QTimer.singleShot(400, shoot)

    timer = QTimer(app)
    timer.timeout.connect(poll)
    timer.start(50)
    thread.worker.model_ready.connect(lambda _info: print("READY", flush=True))
    thread.worker.model_failed.connect(lambda p: print("MODEL FAILED", p, flush=True))
    QTimer.singleShot(60_000, app.quit)
    return app.exec()


if __name__ == "__main__":
    QCoreApplication.setApplicationName("qiao-shots")
    raise SystemExit(main())
