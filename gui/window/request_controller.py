"""What is translating and what to redo, with no widgets: the window (and later the popup and the local API) send
text here and paint what the signals bring.

The worker runs requests and reports every one by id; this controller keeps the id of the request that counts now
(the latest), forwards only its signals, and remembers what it was made with (text, `TranslationOptions`,
precision). After a batch of request settings changes it decides once whether what is shown (or being produced) is
still what the settings ask for, and redoes it if not. It also owns translate-as-you-type's timer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from engine.glossary import Glossary
from engine.options import TranslationOptions
from engine.results import Translation
from gui.pair_text import chosen_variant
from gui.records.memory_chain import MemoryChain
from gui.settings import Key, Settings
from gui.worker.scheduler import ModelInfo, ModelProblem, TranslationWorker

# Settings that change what a translation request asks for: after any of them, what is shown may no longer match the
# request, and the controller decides once (after the whole batch of changes) whether to translate again.
REQUEST_KEYS = frozenset(
    {
        Key.PRECISION,
        Key.VARIANT,
        Key.BEAMS,
        Key.JOIN_WRAPPED_LINES,
        Key.NORMALIZE_PUNCTUATION,
        Key.THREADS,
        Key.GLOSSARY_ENABLED,
    }
)


@dataclass(frozen=True)
class Made:
    """What a request asked for: the text, the options and the precision it runs (or ran) in."""

    text: str
    options: TranslationOptions
    precision: str


class RequestController(QObject):
    """The current request, what it was made with, and the one decision to redo it; see the module docstring."""

    requested = Signal(int)  # a request was sent (by the user, typing, or a redo): what is shown is being replaced
    redone = Signal(int)  # ...and it was sent because request settings changed
    emptied = Signal()  # typing emptied the source: what is shown no longer belongs to it
    translating_changed = Signal(bool)
    started = Signal(int)  # the current request began (again, after a precision switch restarted it)
    progress = Signal(int, str, int, int)  # id, new text, sentences done, total
    finished = Signal(int, object)  # id, engine.results.Translation (also a cancelled one, with its partial text)
    failed = Signal(int, str)  # id, the worker's message (NO_MODEL, INTERNAL + detail, or the engine's wording)

    def __init__(
        self,
        worker: TranslationWorker,
        settings: Settings,
        source: Callable[[], str],
        model_dir: str | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.worker = worker
        self.settings = settings
        self._source = source  # the text typing would translate now
        self.model_dir = model_dir
        self.model: ModelInfo | None = None
        self.problem: ModelProblem | None = None
        self.current_id: int | None = None
        self.translating = False
        self.last_result: Translation | None = None  # the latest finished (or cancelled) request
        self.sentences = (0, 0)  # done, total of the current request, as last reported
        self._translated: str | None = None  # the source text last sent (or emptied by typing)
        self._made: Made | None = None  # what the running or shown translation asked for
        self._shown_text = ""  # the text of the result now shown ("" when nothing is)
        self._pending_keys: set[Key] = set()  # request settings changed since the last decision
        self._closed = False
        # The user's fixes (their edits first, then the history's), asked before decoding each sentence
        self.memory = MemoryChain()
        # The glossary a request applies now (gui's glossary store sets it; None: none or switched off)
        self.glossary_source: Callable[[], Glossary | None] = lambda: None

        self._live_timer = QTimer(self)
        self._live_timer.setSingleShot(True)
        self._live_timer.timeout.connect(self._live_translate)

        # Connected before anyone else's slots, so the window reads the new state when its own slots run.
        worker.model_ready.connect(self._model_ready)
        worker.model_failed.connect(self._model_failed)
        worker.switch_failed.connect(self._switch_failed)
        worker.translation_started.connect(self._started)
        worker.translation_progress.connect(self._progress)
        worker.translation_finished.connect(self._finished)
        worker.translation_failed.connect(self._failed)
        settings.changed.connect(self._setting_changed)

    # ---- what is translated ----------------------------------------------------------------------------------

    @property
    def translated_source(self) -> str | None:
        """The source text of the request now shown (or running); None before the first one."""
        return self._translated

    @property
    def made(self) -> Made | None:
        """What the running or shown translation asked for; None when nothing is shown."""
        return self._made

    def options(self) -> TranslationOptions:
        """What the settings ask of a translation now."""
        variant = self.settings.get(Key.VARIANT)
        if self.model is not None and self.model.pair is not None:
            # The variant the model writes, so history and kept sentences record the truth: Traditional asked of
            # a model that writes Simplified only is "hans" (gui.window.script_notice says so); None for English
            variant = chosen_variant(self.model.pair, variant)
        return TranslationOptions(
            beams=self.settings.get(Key.BEAMS) or None,
            variant=variant,
            join_wrapped_lines=self.settings.get(Key.JOIN_WRAPPED_LINES),
            normalize_punctuation=self.settings.get(Key.NORMALIZE_PUNCTUATION),
            glossary=self.glossary_source(),
            memory=self.memory if len(self.memory) else None,
        )

    def request(self, text: str, precision: str | None = None) -> int:
        """Translate `text` with the current settings; whatever ran before is superseded (the latest wins).

        `precision`, when given, is switched to first, in the same step (see TranslationWorker.translate).
        """
        options = self.options()
        self._translated = text
        self._made = Made(text, options, precision or self.settings.get(Key.PRECISION))
        self._shown_text = ""
        self.current_id = self.worker.translate(text, options, precision=precision)
        self._set_translating(True)
        self.requested.emit(self.current_id)
        return self.current_id

    def cancel(self) -> None:
        """Stop now; the partial result still arrives through `finished`, marked cancelled."""
        if self.translating:
            self.worker.cancel()

    def reset(self) -> None:
        """Forget everything: nothing is translating or shown, and a late result of the old request is ignored."""
        self.cancel()
        self.current_id = None
        self._set_translating(False)
        self._translated = ""
        self._made = None
        self._shown_text = ""
        self.last_result = None
        self.sentences = (0, 0)

    def adopt(self, source: str, text: str) -> None:
        """Treat `text`, already shown, as the finished translation of `source` with the current settings (a
        translation restored after a restart): a settings change then redoes it like a fresh one."""
        self._translated = source
        self.last_result = Translation(text=text)
        self._made = Made(source, self.options(), self.settings.get(Key.PRECISION))
        self._shown_text = text

    def load_model(self) -> None:
        """(Re)load the model for the direction the settings name, in the precision they name, on the worker."""
        threads = self.settings.get(Key.THREADS) or None
        self.worker.load(self.model_dir, self.settings.get(Key.PRECISION), threads, self.settings.get(Key.DIRECTION))

    def swap(self, direction: str, text: str) -> None:
        """Change direction: drop the old direction's request (its late progress is ignored: the latest request
        wins), load that direction's bundle, then translate `text` with it (the worker loads before translating)."""
        self.reset()
        self.model = None  # before the setting: its listeners, and the next request's options, see no old pair
        self.settings.set(Key.DIRECTION, direction)
        self.load_model()
        if text.strip():
            self.request(text)
        else:
            self._translated = text

    def close(self) -> None:
        """No more decisions: the window is closing."""
        self._closed = True
        self._live_timer.stop()

    def _set_translating(self, on: bool) -> None:
        self.translating = on
        self.translating_changed.emit(on)

    # ---- translate as you type -------------------------------------------------------------------------------

    def source_changed(self) -> None:
        """The source was edited: with translate-as-you-type on, translate once typing pauses."""
        if self.settings.get(Key.LIVE_TRANSLATE):
            self._live_timer.start(self.settings.get(Key.LIVE_DELAY_MS))

    @property
    def live_pending(self) -> bool:
        """A translate-as-you-type request is waiting for typing to pause."""
        return self._live_timer.isActive()

    @Slot()
    def _live_translate(self) -> None:
        text = self._source()
        if text == self.translated_source or self.problem is not None:
            return
        if text.strip():
            self.request(text)
            return
        self.reset()  # the running request's late (cancelled) result belongs to text that is gone: ignore it
        self._translated = text
        self.emptied.emit()

    # ---- settings --------------------------------------------------------------------------------------------

    @Slot()
    def glossary_changed(self) -> None:
        """The glossary's entries changed (the Glossary dialog was OK'd): redo what is shown if it applied."""
        self._setting_changed(Key.GLOSSARY_ENABLED)

    @Slot(object)
    def _setting_changed(self, key: Key) -> None:
        if key in REQUEST_KEYS:
            if not self._pending_keys:
                QTimer.singleShot(0, self.apply_request_settings)
            self._pending_keys.add(key)
        elif key is Key.LIVE_TRANSLATE:
            if self.settings.get(key):
                self._live_timer.start(self.settings.get(Key.LIVE_DELAY_MS))
            else:
                self._live_timer.stop()

    @Slot()
    def apply_request_settings(self) -> None:
        """The one place that decides: the engine gets the new settings, and if what is shown (or being
        produced) no longer matches the request, the translation is redone once, with every change applied."""
        keys, self._pending_keys = self._pending_keys, set()
        if not keys or self._closed:
            return
        if Key.THREADS in keys:
            self.worker.set_threads(self.settings.get(Key.THREADS) or None)
        precision = self.settings.get(Key.PRECISION)
        if Key.PRECISION in keys and self.model is None and self.problem is not None:
            self.load_model()  # e.g. "Use FP32 instead": nothing loaded to switch, so load the chosen precision
            return
        made = self._made
        redo = (
            made is not None
            and (self.translating or self._shows_current_translation())
            and (made.options != self.options() or made.precision != precision)
        )
        switch = precision if Key.PRECISION in keys else None
        if redo and made is not None:
            self.redone.emit(self.request(made.text, switch))
        elif switch is not None:
            self.worker.set_precision(switch)

    def _shows_current_translation(self) -> bool:
        """A finished translation of exactly the source text is shown."""
        return (
            not self.translating
            and self.last_result is not None
            and bool(self._shown_text)
            and self.translated_source == self._source()
        )

    # ---- the worker's reports --------------------------------------------------------------------------------

    @Slot(object)
    def _model_ready(self, info: ModelInfo) -> None:
        self.model = info
        self.problem = None
        made = self._made
        if made is not None and made.options.variant is not None and info.pair is not None:
            # A request sent before this model was known (a model chosen, a swap) asked the setting's script; what
            # is recorded (history, kept sentences) is the one this model writes, as options() gives from now on
            written = chosen_variant(info.pair, made.options.variant)
            if written is not None and written != made.options.variant:
                self._made = Made(made.text, made.options.replace(variant=written), made.precision)

    @Slot(object)
    def _model_failed(self, problem: ModelProblem) -> None:
        self.model = None
        self.problem = problem
        self._set_translating(False)

    @Slot(str, object)
    def _switch_failed(self, precision: str, problem: ModelProblem) -> None:
        """The old precision still runs: what runs (or ran) is in it."""
        if self.model is not None and self._made is not None:
            self._made = Made(self._made.text, self._made.options, self.model.precision)

    @Slot(int)
    def _started(self, request_id: int) -> None:
        if request_id == self.current_id:
            self.sentences = (0, 0)
            self.started.emit(request_id)

    @Slot(int, str, int, int)
    def _progress(self, request_id: int, text: str, done: int, total: int) -> None:
        if request_id == self.current_id:
            self.sentences = (done, total)
            self.progress.emit(request_id, text, done, total)

    @Slot(int, object)
    def _finished(self, request_id: int, result: Translation) -> None:
        if request_id != self.current_id:
            return
        self.last_result = result
        self._shown_text = result.text
        self._set_translating(False)
        self.finished.emit(request_id, result)

    @Slot(int, str)
    def _failed(self, request_id: int, message: str) -> None:
        if request_id == self.current_id:
            self._set_translating(False)
            self.failed.emit(request_id, message)
