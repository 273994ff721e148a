"""What the window keeps on disk between runs: the source text (autosave) and the last finished translation.

Kept out of `MainWindow` so the window only says when (start, edits, a finished translation, close); this module
decides what is written, what comes back at start, and tells the user once when their text cannot be saved.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import chain, compress
from operator import and_, attrgetter, eq, not_, sub
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QDateTime, QLocale, QObject, Qt, QTimer, Signal, SignalInstance, Slot
from PySide6.QtGui import QTextCursor

from engine.results import ORIGIN_MEMORY, ORIGIN_MODEL, Flag, SentenceResult, Translation
from gui.sentence_view import spans_fit
from gui.settings import Key, Settings
from gui.window.autosave import Autosave
from gui.window.last_translation import LastTranslation, SavedTranslation, SentencePlaces

if TYPE_CHECKING:
    from gui.notice_bar import NoticeBar
    from gui.window.request_controller import RequestController
    from gui.window.source_pane import SourcePane
    from gui.window.target_pane import TargetPane

TRANSLATION_FILE = "translation.json"
EDIT_SAVE_DELAY_MS = 800  # an edited translation is kept once typing in it pauses this long
# Settings that change what a translation says.
OPTION_KEYS = (Key.DIRECTION, Key.PRECISION, Key.VARIANT, Key.BEAMS, Key.JOIN_WRAPPED_LINES, Key.NORMALIZE_PUNCTUATION)


def translation_options(settings: Settings) -> dict[str, object]:
    """The settings a saved translation must share with the current ones to be shown as current."""
    return {key.name.lower(): settings.get(key) for key in OPTION_KEYS}


@dataclass(frozen=True)
class SessionParts:
    """What the store reads and writes of the window: its panes, settings and notice bar (not the window itself,
    which imports this module)."""

    source_pane: SourcePane
    target_pane: TargetPane
    settings: Settings
    notice: NoticeBar


@dataclass(frozen=True)
class SessionRequests:
    """The translation side, which exists only once the window has its worker: the request controller, the
    worker's first `model_ready`, and the window's translate and status calls."""

    requests: RequestController
    model_ready: SignalInstance
    translate: Callable[[], None]
    append_status: Callable[[Callable[[], str]], None]


class SessionStore(QObject):
    """Autosave of the source, the last translation's file, and their restore at start."""

    _written = Signal(object)  # a background translation save's Future, delivered on the UI thread

    def __init__(self, parts: SessionParts, autosave_path: str | Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.parts = parts
        self._requests: SessionRequests | None = None  # given by start()
        self.text = parts.source_pane.text  # the copy shared with the word count and the request controller
        self.translation = LastTranslation(Path(autosave_path).with_name(TRANSLATION_FILE))
        # One writer thread for both files, so their writes and removals happen in the order they were asked for.
        # A finished 72 000-sentence translation is 4.7 MB of JSON: encoding it is ~45 ms here, and the fsync after it
        # waits on the disk (CI's huge-paste test saw a 0.73 s UI freeze; a stall sampler run here found this save
        # among the UI thread's longest work in that test).
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="qiao-session-writer")
        self._saving: list[Future[str | None]] = []
        self._written.connect(self._translation_written, Qt.ConnectionType.QueuedConnection)
        self._finished_pending: tuple[Translation, str] | None = None
        self._finished_timer = QTimer(self)
        self._finished_timer.setSingleShot(True)
        self._finished_timer.setInterval(0)
        self._finished_timer.timeout.connect(self._save_finished)
        self.autosave = Autosave(autosave_path, self.text, self, companions=[self.translation.path], pool=self._writer)
        self.autosave.failed.connect(self._save_failed)
        self.autosave.recovered.connect(self._save_recovered)
        self._warned = False
        self.restored: SavedTranslation | None = None  # the translation brought back at start, while still shown
        self.restored_current = False
        self._retranslate_when_ready = False
        # The restored file's edits: kept in the file while the restored text (which has no sentences) is shown
        self._carried_edits: tuple[tuple[int, int, str | None, str], ...] = ()
        self._edit_timer = QTimer(self)
        self._edit_timer.setSingleShot(True)
        self._edit_timer.setInterval(EDIT_SAVE_DELAY_MS)
        self._edit_timer.timeout.connect(self.save_shown)

    # ---- start ---------------------------------------------------------------------------------------------

    def restore_source(self) -> None:
        """Put last session's source text back: no undo history for it (setPlainText's undo copy of 20 MB is waste)."""
        restored = self.autosave.load()
        if not restored:
            return
        editor = self.parts.source_pane.editor
        editor.setUndoRedoEnabled(False)
        editor.setPlainText(restored)
        editor.setUndoRedoEnabled(True)
        editor.moveCursor(QTextCursor.MoveOperation.End)

    @property
    def requests(self) -> RequestController:
        if self._requests is None:
            raise RuntimeError("SessionStore.start() has not been called")
        return self._requests.requests

    def start(self, side: SessionRequests) -> None:
        """Once the window's slots are wired: follow translations and bring back the last one."""
        self._requests = side
        side.requests.finished.connect(self._translation_finished)  # after the window's own slot
        side.requests.started.connect(self._forget_restored)
        side.model_ready.connect(self._model_ready)
        target_pane = self.parts.target_pane
        target_pane.editor.textChanged.connect(self._target_changed)
        target_pane.text_edited.connect(self._edit_timer.start)
        self._restore_translation()

    def _restore_translation(self) -> None:
        source = self.text()
        saved = self.translation.load() if source.strip() else None
        if saved is None or not saved.target:
            return
        parts = self.parts
        self.restored = saved
        self.restored_current = saved.matches(source, translation_options(parts.settings))
        parts.target_pane.editor.setPlainText(saved.target)
        for start, end, key, text in saved.edits:  # the user's sentences, by their English, for translating again
            english = key if key is not None else source[start:end]
            if english.strip():
                parts.target_pane.edits.remember(english, text)
        self._carried_edits = saved.edits
        if self.restored_current:
            self._restore_sentences(saved, source)
        if self.restored_current:
            # As if it had just finished: a settings change now re-translates it, as it would a fresh result.
            self.requests.adopt(source, saved.target)
        else:
            # The source (or a setting) changed after this was translated. Show it marked as out of date rather
            # than re-translate unasked: a long document takes minutes and its old translation may be all the
            # user needs now. With translate-as-you-type on, the user asked for exactly that: do it once ready.
            self._retranslate_when_ready = bool(parts.settings.get(Key.LIVE_TRANSLATE))
        self._show_mark()

    def _restore_sentences(self, saved: SavedTranslation, source: str) -> None:
        """Give the restored text its sentences back (no token scores: nothing is underlined), the user's own
        marked as theirs and the flagged ones with their guards' findings (margin mark and tooltip), so alignment,
        edit tracking and the marks carry on as before the restart."""
        owned = {(start, end) for start, end, _, _ in saved.edits}
        places = saved.sentences or SentencePlaces()
        results = [
            SentenceResult(
                i,
                key if key is not None else source[a:b],
                (a, b),
                (c, d),
                origin=ORIGIN_MEMORY if (a, b) in owned else ORIGIN_MODEL,
                flags=tuple(Flag(kind, detail) for kind, detail in places.flags.get(i, ())),
                unmet=places.unmet.get(i, ()),
            )
            for i, (a, b, c, d, key) in enumerate(places.rows())
        ]
        if not spans_fit([r.source_span for r in results], len(source)):
            return
        parts = self.parts
        parts.target_pane.set_result(Translation(text=saved.target, sentences=results), source)
        parts.source_pane.set_sentences(results if len(parts.target_pane.ranges) else [], source)

    def restored_label(self) -> str:
        """The note beside the translation's heading: one word, so it never widens the pane."""
        if self.restored is None:
            return ""
        if self.restored_current:
            return QCoreApplication.translate("SessionStore", "Restored")
        return QCoreApplication.translate("SessionStore", "Out of date")

    def restored_message(self) -> str:
        """What the note means, with when: the status line says it once the model is ready; also the tooltip."""
        saved = self.restored
        if saved is None:
            return ""
        finished = QDateTime.fromMSecsSinceEpoch(round(saved.finished_at * 1000))
        locale = QLocale()
        if finished.date() == QDateTime.currentDateTime().date():
            when = locale.toString(finished.time(), QLocale.FormatType.ShortFormat)
        else:
            when = locale.toString(finished, QLocale.FormatType.ShortFormat)
        if self.restored_current:
            text = QCoreApplication.translate(
                "SessionStore", "The translation from {when} was restored; it matches the source text and the settings."
            )
        else:
            text = QCoreApplication.translate(
                "SessionStore",
                "This translation is from {when}; the source text or the settings changed since. "
                "Press Translate to update it.",
            )
        return text.format(when=when)

    def _show_mark(self) -> None:
        self.parts.target_pane.set_note(self.restored_label(), self.restored_message())

    @Slot()
    def _model_ready(self) -> None:
        side = self._requests
        assert side is not None
        side.model_ready.disconnect(self._model_ready)  # only the first load matters here
        if self.restored is None:
            return
        if self._retranslate_when_ready:
            side.translate()
            return
        side.append_status(self.restored_message)

    @Slot()
    def _forget_restored(self) -> None:
        if self.restored is not None:
            self.restored = None
            self._retranslate_when_ready = False
            self.parts.target_pane.set_note("")

    @Slot()
    def _target_changed(self) -> None:
        if self.restored is not None and self.parts.target_pane.editor.toPlainText() != self.restored.target:
            self._forget_restored()  # cleared, or replaced by a new translation

    # ---- saving --------------------------------------------------------------------------------------------

    @Slot(int, object)
    def _translation_finished(self, request_id: int, result: Translation) -> None:
        """Keep a finished translation with its source; a cancelled one's partial text is not kept."""
        source = self.requests.translated_source  # the controller reports only its current request
        if result.cancelled or source is None or not result.text:
            return
        # Saved on the next turn of the event loop: for a huge text the window's own finishing work and this
        # save's preparation (~0.15 s and tens of ms for 72 000 sentences) would otherwise come in one turn.
        self._finished_pending = (result, source)
        self._finished_timer.start()

    @Slot()
    def _save_finished(self) -> None:
        """The deferred save of a finished translation, unless a newer request has replaced it since."""
        self._finished_timer.stop()
        pending, self._finished_pending = self._finished_pending, None
        if pending is None:
            return
        result, source = pending
        requests = self.requests
        if requests.last_result is not result or requests.translated_source != source or requests.translating:
            return
        self._save(source, result.text)

    @Slot()
    def save_shown(self) -> None:
        """Keep the translation as shown now, with the user's edits (after typing in it pauses, and at close)."""
        self._edit_timer.stop()
        if self._requests is None:
            return  # not started: nothing was translated yet
        requests = self.requests
        source = requests.translated_source
        text = self.parts.target_pane.editor.toPlainText()
        if requests.translating or source is None or requests.last_result is None or not text:
            return
        if requests.last_result.cancelled:
            return  # a cancelled request's partial text would come back looking complete
        self._save(source, text)

    def flush(self) -> None:
        """Write what is pending now and wait for it (the window is closing; tests read the file after it)."""
        self._save_finished()
        if self._edit_timer.isActive():
            self.save_shown()
        while self._saving:
            self._collect(self._saving.pop(0))

    def _save(self, source: str, text: str) -> None:
        ranges = self.parts.target_pane.ranges
        results = ranges.results
        flat = list(chain.from_iterable(r.source_span for r in results))
        # The English only where the model read it differently from the source text (wrapped lines joined);
        # compared with maps, not a Python loop: 70 000 sentences take milliseconds on the UI thread
        sources = list(map(attrgetter("source"), results))
        starts, ends = flat[0::2], flat[1::2]
        same = map(and_, map(eq, map(len, sources), map(sub, ends, starts)), map(source.startswith, sources, starts))
        read_as = {i: sources[i] for i in compress(range(len(sources)), map(not_, same))}
        # The guards' findings of the flagged sentences only (few): their margin marks come back after a restart
        found = zip(map(attrgetter("flags"), results), map(attrgetter("unmet"), results))
        flags: dict[int, tuple[tuple[str, str], ...]] = {}
        unmet: dict[int, tuple[str, ...]] = {}
        for i in compress(range(len(results)), map(any, found)):
            if results[i].flags:
                flags[i] = tuple((flag.kind, flag.detail) for flag in results[i].flags)
            if results[i].unmet:
                unmet[i] = tuple(results[i].unmet)
        places = SentencePlaces(
            tuple(flat), tuple(chain.from_iterable(zip(ranges.starts, ranges.ends))), read_as, flags, unmet
        )
        edits = [(*results[i].source_span, read_as.get(i), ranges.current(i)) for i in ranges.owned()]
        if not results:
            edits = list(self._carried_edits)
        # Everything handed over is immutable or a fresh copy: the UI may change the panes while it is written.
        future = self._writer.submit(
            self._write_translation, source, text, translation_options(self.parts.settings), edits, places
        )
        self._saving.append(future)
        future.add_done_callback(self._written.emit)

    def _write_translation(
        self,
        source: str,
        text: str,
        options: Mapping[str, object],
        edits: Sequence[tuple[int, int, str | None, str]],
        places: SentencePlaces,
    ) -> str | None:
        """On the writer thread: encode and write; the OS's reason on failure, reported on the UI thread."""
        try:
            self.translation.save(source, text, options, edits=edits, sentences=places)
        except OSError as exc:
            return exc.strerror or str(exc)
        return None

    @Slot(object)
    def _translation_written(self, future: Future[str | None]) -> None:
        if future in self._saving:  # not already collected by a flush() that waited for it
            self._saving.remove(future)
            self._collect(future)

    def _collect(self, future: Future[str | None]) -> None:
        error = future.result()
        if error is not None:
            self._save_failed(error)

    @Slot(str)
    def _save_failed(self, reason: str) -> None:
        """Say it once per failure spell; the autosave keeps retrying on its own."""
        if self._warned:
            return
        self._warned = True
        message = QCoreApplication.translate(
            "SessionStore",
            "Your text is not being saved: Qiao cannot write to {folder} ({reason}). It keeps trying; "
            "until then, keep a copy of your text elsewhere.",
        )
        self.parts.notice.show_message(message.format(folder=str(self.autosave.path.parent), reason=reason))

    @Slot()
    def _save_recovered(self) -> None:
        self._warned = False  # saving works again: nothing more to say, and a new failure is reported again
