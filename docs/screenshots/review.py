"""Screenshots of the review features, from the real window on a virtual X display, driven as a user would.

    Xvfb :99 -screen 0 1280x800x24 -nolisten tcp &
    openbox &   # a window manager: popups, focus and menus behave as on a desktop
    DISPLAY=:99 python docs/screenshots/review.py --model tests/fixtures/tiny_marian/bundle [--out docs/screenshots]

Unlike take.py this runs the app's own window in this process (gui.app.create_window and attach_records, a private
home), so it can find where the editor draws a word before clicking it; input goes through Qt's event queue (QTest),
the engine runs on the worker thread as in the app, and every shot is the whole screen from ImageMagick's `import`
(popups and menus included). The shots, in order:

1. review-unsure.png     a translation with its unsure words underlined and a flagged sentence's margin mark
2. review-popup.png      a click on a word: other words there, each with the rest of the sentence re-decoded
3. review-chosen.png     the choice taken: that sentence rewritten from the word on, the others unchanged
4. review-glossary.png   the Glossary dialog with a term, and the translation that had to use it
5. review-edit.png       a sentence edited by hand, kept (and marked) when the source is translated again
6. review-history.png    the History panel searching the translations kept so far
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

# Sentences the tiny fixture model knows, one it does not (its words come out unsure), and a line with a link (the
# glossary's protection keeps it verbatim).
TEXT = (
    "My brother works at a bank. The purple elephant sings loudly. See you tomorrow.\n"
    "Visit https://qiao.example/help for more."
)
GLOSSARY_TEXT = "My brother works at a bank."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="model bundle folder")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="qiao-review-shots-"))
    for name in ("config", "state", "cache", "data"):
        (home / name).mkdir()
        os.environ[f"QIAO_{name.upper()}_DIR"] = str(home / name)
    (home / "config" / "qiao.ini").write_text(
        "[interface]\ntheme=light\nlanguage=en\n[editor]\nfont_size=15\n[review]\nunsure_below_percent=60\n",
        encoding="utf-8",
    )
    os.environ["QT_QPA_PLATFORM"] = "xcb"
    try:
        return Shots(args.model, args.out).run()
    finally:
        shutil.rmtree(home, ignore_errors=True)


class Shots:
    def __init__(self, model: str, out: Path) -> None:
        from PySide6.QtTest import QTest

        from gui.app import attach_records, create_window

        self.QTest = QTest
        self.out = out
        self.window = create_window(model)
        attach_records(self.window)
        self.window.resize(1180, 640)
        self.window.move(40, 40)
        self.window.show()
        self.finished = 0
        self.window.requests.finished.connect(self._finished)
        self.wait(lambda: self.window.model is not None, "the model to load")

    def _finished(self, _request_id: int, _result: object) -> None:
        self.finished += 1

    # -- helpers ------------------------------------------------------------------------------------------------
    def wait(self, done, what: str, timeout: float = 30.0) -> None:
        from PySide6.QtWidgets import QApplication

        end = time.monotonic() + timeout
        while not done():
            if time.monotonic() > end:
                raise SystemExit(f"timed out waiting for {what}")
            QApplication.processEvents()
            time.sleep(0.02)

    def _pump(self, seconds: float) -> None:
        from PySide6.QtWidgets import QApplication

        end = time.monotonic() + seconds
        while time.monotonic() < end:
            QApplication.processEvents()
            time.sleep(0.02)

    def grab(self, name: str) -> Path:
        self._pump(0.5)
        path = self.out / f"{name}.png"
        subprocess.run(["import", "-window", "root", "-crop", "1260x760+0+0", str(path)], check=True)
        print(path)
        return path

    def translate(self, text: str) -> None:
        from PySide6.QtCore import Qt

        source = self.window.source
        source.setFocus()
        source.selectAll()
        for n, line in enumerate(text.split("\n")):
            if n:
                self.QTest.keyClick(source, Qt.Key.Key_Return)
            self.QTest.keyClicks(source, line)
        before = self.finished
        self.QTest.keyClick(source, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        self.wait(lambda: self.finished > before and not self.window.requests.translating, "the translation")
        self._pump(0.3)

    def commit_text(self, editor, text: str) -> None:
        """Type Chinese as an input method does: one committed string (QTest types ASCII keys only)."""
        from PySide6.QtGui import QInputMethodEvent
        from PySide6.QtWidgets import QApplication

        event = QInputMethodEvent("", [])
        event.setCommitString(text)
        QApplication.sendEvent(editor, event)

    def point_of(self, pos: int):
        """A point inside the character at `pos` (just right of the cursor drawn before it)."""
        from PySide6.QtCore import QPoint
        from PySide6.QtGui import QTextCursor

        editor = self.window.target
        cursor = QTextCursor(editor.document())
        cursor.setPosition(pos)
        rect = editor.cursorRect(cursor)
        return QPoint(rect.x() + 5, rect.center().y())

    def click_target(self, pos: int) -> None:
        from PySide6.QtCore import Qt

        editor = self.window.target
        self.QTest.mouseClick(editor.viewport(), Qt.MouseButton.LeftButton, pos=self.point_of(pos))

    def unsure_token(self) -> tuple[int, int]:
        """(sentence, token) of the least sure word-like token outside the link sentence."""
        pane = self.window.target_pane
        best = None
        for i, s in enumerate(pane.sentences()):
            if "://" in s.source:
                continue  # the link sentence is there for its margin mark
            for t, (lp, (a, b)) in enumerate(zip(s.logprobs, s.token_spans)):
                text = s.text[a:b] if s.text else ""
                if b > a and any(ch.isalnum() for ch in text) and (best is None or lp < best[0]):
                    best = (lp, i, t)
        assert best is not None, "no scored token in the translation"
        print(f"least sure token: sentence {best[1]}, token {best[2]}, p={math.exp(best[0]):.2f}")
        return best[1], best[2]

    # -- the shots ----------------------------------------------------------------------------------------------
    def run(self) -> int:
        from PySide6.QtCore import Qt

        window, pane = self.window, self.window.target_pane
        self.translate(TEXT)
        i, t = self.unsure_token()
        start = pane.sentence_range(i)[0]
        a, _ = pane.sentences()[i].token_spans[t]
        self.QTest.mouseMove(window.target.viewport(), self.point_of(start + a))  # hover: the alignment tint
        self.grab("review-unsure")

        self.click_target(start + a)
        popup = window.alternatives.popup
        self.wait(lambda: popup.isVisible() and bool(popup.alternatives()), "the alternatives")
        self.grab("review-popup")
        before = [pane.sentences()[k].text for k in range(len(pane.sentences()))]
        self.QTest.keyClick(popup.list, Qt.Key.Key_Down)
        self.QTest.keyClick(popup.list, Qt.Key.Key_Return)
        self.wait(lambda: pane.sentences()[i].text != before[i], "the chosen alternative")
        after = [s.text for s in pane.sentences()]
        assert all(after[k] == before[k] for k in range(len(before)) if k != i), (before, after)
        print(f"sentence {i}: {before[i]!r} → {after[i]!r}")
        self.grab("review-chosen")

        from engine.glossary import Glossary, GlossaryEntry

        store = window.glossary_menu.store
        store.save(Glossary(entries=(GlossaryEntry("bank", "北京"),), protect=True))
        self.translate(GLOSSARY_TEXT)
        assert "北京" in window.target.toPlainText(), window.target.toPlainText()
        window.glossary_menu.action.trigger()
        dialog = window.glossary_menu.dialog
        self.wait(lambda: dialog is not None and dialog.isVisible(), "the glossary dialog", 5)
        dialog.move(window.x() + 560, window.y() + 260)
        self.grab("review-glossary")
        dialog.reject()
        self._pump(0.5)
        store.save(Glossary())
        self._pump(0.5)

        self.translate(TEXT)
        a, b = pane.sentence_range(0)
        cursor = window.target.textCursor()
        cursor.setPosition(a)
        cursor.setPosition(b, cursor.MoveMode.KeepAnchor)
        window.target.setTextCursor(cursor)
        window.target.setFocus()
        self.commit_text(window.target, "我的哥哥在银行上班。")
        self._pump(0.3)
        edited = window.target.toPlainText()
        self.translate(TEXT.replace("See you tomorrow.", "Thank you very much."))
        kept = window.target.toPlainText()
        assert kept.startswith("我的哥哥在银行上班。"), (edited, kept)
        print(f"after re-translating: {kept!r}")
        self.grab("review-edit")

        window.history_panel.show()
        window.history_panel.search.setFocus()
        self.commit_text(window.history_panel.search, "银行")
        self._pump(1.0)
        self.grab("review-history")
        window.close()
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
