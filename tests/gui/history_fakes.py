"""A window as small as the history needs: settings, a request controller's signals and memory chain, the model,
a target pane that reports sentence edits, and `show_history_entry`."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMainWindow, QMenu, QPlainTextEdit

from engine.options import TranslationOptions
from engine.results import ORIGIN_MODEL, SentenceResult, Translation, TranslationStats
from gui.records.memory_chain import MemoryChain
from gui.window.request_controller import Made
from gui.worker.scheduler import ModelInfo
from tests.gui.fakes import EN_ZH, ZH_EN

MODEL = ModelInfo(
    bundle_dir="/bundle",
    model_id="Helsinki-NLP/opus-mt-en-zh",
    license="CC-BY-4.0",
    attribution="",
    precision="int8",
    available_precisions=("int8", "fp32"),
    default_beams=4,
    load_seconds=0.1,
    pair=EN_ZH,
)
ZH_EN_MODEL = replace(MODEL, model_id="Helsinki-NLP/opus-mt-zh-en", pair=ZH_EN)


class FakeRequests(QObject):
    finished = Signal(int, object)
    requested = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.memory = MemoryChain()
        self.made: Made | None = None


class FakeWorker(QObject):
    model_ready = Signal(object)


class FakeEngine:
    def __init__(self) -> None:
        self.worker = FakeWorker()


class FakeTargetPane(QObject):
    """H6's TargetPane as far as the recorder reads it."""

    sentence_edited = Signal(int)
    sentence_replaced = Signal(int)

    def __init__(self) -> None:
        super().__init__()
        self.editor = QPlainTextEdit()
        self._sentences: list[SentenceResult] = []
        self._ranges: list[tuple[int, int]] = []

    def set_result(self, translation: Translation) -> None:
        self.editor.setPlainText(translation.text)
        self._sentences = list(translation.sentences)
        self._ranges = [s.target_span for s in translation.sentences]

    def sentences(self) -> list[SentenceResult]:
        return list(self._sentences)

    def sentence_range(self, i: int) -> tuple[int, int]:
        return self._ranges[i]

    def rewrite(self, i: int, text: str) -> None:
        """Sentence i now reads `text` (the user typed it, or an alternative replaced it)."""
        start, end = self._ranges[i]
        old = self.editor.toPlainText()
        self.editor.setPlainText(old[:start] + text + old[end:])
        shift = len(text) - (end - start)
        self._ranges[i] = (start, start + len(text))
        for j in range(i + 1, len(self._ranges)):
            a, b = self._ranges[j]
            self._ranges[j] = (a + shift, b + shift)


class HistoryWindow(QMainWindow):
    def __init__(self, settings, *, with_reopen: bool = True, with_view_menu: bool = True) -> None:
        super().__init__()
        self.settings = settings
        self.requests = FakeRequests()
        self.model: ModelInfo | None = MODEL
        self.engine = FakeEngine()
        self.target_pane = FakeTargetPane()
        self.setCentralWidget(self.target_pane.editor)
        self.shown: list = []
        if with_view_menu:
            self.view_menu = QMenu("View", self)
            self.menuBar().addMenu(self.view_menu)
        if with_reopen:
            self.show_history_entry = self.shown.append

    def finish(self, text: str, pairs: list[tuple[str, str]], *, cancelled: bool = False, origins=()) -> Translation:
        """Make the controller report a finished request translating `text` into `pairs` (source, output)."""
        sentences, at = [], 0
        out = ""
        for i, (source, output) in enumerate(pairs):
            sentences.append(
                SentenceResult(
                    index=i,
                    source=source,
                    source_span=(text.find(source), text.find(source) + len(source)),
                    target_span=(at, at + len(output)),
                    origin=origins[i] if i < len(origins) else ORIGIN_MODEL,
                )
            )
            out += output
            at += len(output)
        stats = TranslationStats(10.0, 1.0, 5, 5, 100.0, "fp32", 4, len(pairs))
        result = Translation(text=out, stats=stats, cancelled=cancelled, sentences=sentences)
        self.requests.made = Made(text, TranslationOptions(beams=4, variant="hans"), "fp32")
        self.requests.requested.emit(1)
        self.requests.finished.emit(1, result)
        self.target_pane.set_result(result)
        return result
