"""Screenshot run of the quick popup on a real X server (not a test; run by `shots.sh`).

    DISPLAY=:55 python tests/gui/quick/shots.py --theme dark --lang zh_CN --out shot.png

Loads the tiny en→zh model in the real worker thread, registers the real X11 global shortcut, prints READY, and
when the popup's translation has finished takes a screenshot of the whole screen and exits. Until the worker issue
adds its popup channel, `ChannelAdapter` passes requests to the worker's window channel. `PROPOSED_ZH` holds the
Chinese proposed for the integrator's .ts; it is installed here so the 简体中文 shot shows it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QTimer, QTranslator
from PySide6.QtWidgets import QApplication

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from proposed_zh import PROPOSED_ZH  # noqa: E402

from engine.options import TranslationOptions  # noqa: E402
from gui.i18n import install_translators  # noqa: E402
from gui.quick.controller import QuickSettings, QuickTranslate  # noqa: E402
from gui.theme import apply_theme  # noqa: E402
from gui.worker import WorkerThread  # noqa: E402

BUNDLE = ROOT / "tests" / "fixtures" / "tiny_marian" / "bundle"


class ProposedChinese(QTranslator):
    def translate(self, context, source, disambiguation=None, n=-1):
        return PROPOSED_ZH.get((context, source), "")

    def isEmpty(self) -> bool:
        return False


class ChannelAdapter:
    """The worker as the popup channel will look (`translate(..., channel=)`), over today's worker."""

    def __init__(self, worker) -> None:
        self._worker = worker
        self.translation_progress = worker.translation_progress
        self.translation_finished = worker.translation_finished
        self.translation_failed = worker.translation_failed

    def translate(self, text: str, options: TranslationOptions | None = None, *, channel: str = "window") -> int:
        return self._worker.translate(text, options)


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
    if args.lang == "zh_CN":
        extra = ProposedChinese(app)
        app.installTranslator(extra)
    thread = WorkerThread()
    thread.worker.load(str(BUNDLE), "int8", None)
    quick = QuickTranslate(ChannelAdapter(thread.worker), TranslationOptions, QuickSettings())
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
