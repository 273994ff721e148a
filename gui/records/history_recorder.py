"""Keeps the window's finished translations in the history database, and the user's fixes in its memory.

- Every finished, not cancelled translation of the window (`window.requests.finished`) becomes a HistoryEntry:
  the text, options and precision it was made with (`window.requests.made`), the model and pair
  (`window.model`), one SentenceRecord per `Translation.sentences` row (a sentence the memory supplied is recorded
  as the user's edit). Not while Key.HISTORY_ENABLED is off; Key.HISTORY_LIMIT is the store's size limit.
- The store's memory for the loaded pair is in `window.requests.memory` (after the session's own edits), swapped
  when the pair changes, so a sentence the user fixed before comes back as their version.
- A sentence the user edits or replaces by an alternative in the target pane (its `sentence_edited(int)` /
  `sentence_replaced(int)` signals, where the pane has them) is written to the shown entry with
  `set_sentence_edit`, which also remembers it; edits are gathered for half a second so typing is one write.

Writes run on one background thread, in order: one add of a 20-sentence entry takes 0.5 ms (median) here, but
1 in 20 takes over 5 ms and a few 50–140 ms (FTS5 merging its segments, the WAL checkpoint), which the window
would show as a stutter. The store gives each thread its own connection, so the window's reads and the engine's
memory lookups never wait for that thread. A write the database refuses is logged and reported through `failed`
and `problem`, never raised into the window.
"""

from __future__ import annotations

import itertools
import logging
from concurrent.futures import Future, ThreadPoolExecutor

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Signal, Slot

from engine.errors import QiaoError
from engine.history.records import HistoryEntry, SentenceRecord
from engine.history.store import HistoryStore, PairMemory
from engine.results import ORIGIN_MEMORY, Translation
from gui.settings import Key

log = logging.getLogger(__name__)

EDIT_DELAY_MS = 500  # typing in a sentence is gathered into one write
FAILED = object()  # what a refused write returns


class HistoryRecorder(QObject):
    """See the module docstring."""

    recorded = Signal(int)  # a new entry's id (the History panel shows it)
    changed = Signal()  # an entry changed (a sentence edit was written)
    failed = Signal(str)  # a write the database refused: its message
    _added = Signal(int, int)  # (from the writer thread) request generation, new entry id

    def __init__(self, store: HistoryStore, window, parent: QObject | None = None) -> None:
        super().__init__(parent if parent is not None else window)
        self.store = store
        self.window = window
        self.settings = window.settings
        self.entry_id: int | None = None  # the entry of the translation now shown, if it was recorded
        self.problem: str | None = None  # the last write's failure, for the panel
        self._chosen: dict[int, str] = {}  # sentence index → the alternative chosen there, in the shown entry
        self._pending: dict[int, tuple[str | None, str | None, str]] = {}  # index → edited, chosen, source
        self._memory: PairMemory | None = None
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="history-writer")
        self._generation = itertools.count(1)
        self._current = 0  # the generation of the translation now shown
        self._entry: Future | None = None  # its add, done or queued (edits queue after it)
        self._added.connect(self._entry_added)
        self._flush_timer = QTimer(self)
        self._flush_timer.setSingleShot(True)
        self._flush_timer.timeout.connect(self.flush)

        self._apply_limit()
        requests = window.requests
        requests.finished.connect(self._finished)
        requests.requested.connect(self._requested)
        worker = getattr(getattr(window, "engine", None), "worker", None)
        if worker is not None and hasattr(worker, "model_ready"):
            worker.model_ready.connect(self.update_memory)
        self.settings.changed.connect(self._setting_changed)
        self.pane = _sentence_pane(window)
        if self.pane is not None:
            self.pane.sentence_edited.connect(self._sentence_edited)
            self.pane.sentence_replaced.connect(self._sentence_replaced)
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.close)
        self.update_memory()

    # ---- the memory -----------------------------------------------------------------------------------------------

    def pair_key(self) -> str | None:
        model = self.window.model
        pair = getattr(model, "pair", None)
        return pair.key if pair is not None else None

    @Slot()
    def update_memory(self, *_: object) -> None:
        """The store's memory for the loaded pair in `window.requests.memory`, instead of another pair's."""
        pair = self.pair_key()
        if self._memory is not None and self._memory.pair == pair:
            return
        chain = self.window.requests.memory
        if self._memory is not None:
            chain.remove(self._memory)
            self._memory = None
        if pair is not None and not self.store.closed:
            self._memory = self.store.memory(pair)
            chain.add(self._memory)

    # ---- recording ------------------------------------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return bool(self.settings.get(Key.HISTORY_ENABLED))

    @Slot(int)
    def _requested(self, _request_id: int) -> None:
        self.flush()  # edits belong to the entry shown until now

    @Slot(int, object)
    def _finished(self, _request_id: int, result: Translation) -> None:
        self.flush()
        self.entry_id = None
        self._entry = None
        self._current = next(self._generation)
        self._chosen = {}
        if result.cancelled or result.error or not result.text.strip() or not self.enabled:
            return
        made = self.window.requests.made
        model = self.window.model
        if made is None or model is None:
            return
        self.update_memory()
        stats = result.stats
        entry = HistoryEntry(
            source=made.text,
            output=result.text,
            pair=self.pair_key() or str(self.settings.get(Key.DIRECTION)),
            model=model.model_id,
            precision=stats.precision if stats is not None else made.precision,
            variant=made.options.variant,
            beams=stats.beams if stats is not None else made.options.beams,
            sentences=tuple(_record(result, i) for i in range(len(result.sentences))),
        )
        self._entry = self._submit(self._add, self._current, entry)

    def _add(self, generation: int, entry: HistoryEntry) -> int | None:
        """(writer thread)"""
        new_id = self._write(self.store.add, entry)
        if new_id is FAILED:
            return None
        self._added.emit(generation, new_id)
        return new_id

    @Slot(int, int)
    def _entry_added(self, generation: int, new_id: int) -> None:
        if generation == self._current:
            self.entry_id = new_id
        self.recorded.emit(new_id)

    def _submit(self, work, *args) -> Future | None:
        try:
            return self._writer.submit(work, *args)
        except RuntimeError:  # closed: the window is going
            return None

    def _write(self, work, *args):
        """(writer thread) `work(*args)`, or FAILED with the reason reported."""
        try:
            value = work(*args)
        except QiaoError as exc:
            log.warning("history not written: %s", exc)
            self.problem = str(exc)
            self.failed.emit(str(exc))
            return FAILED
        self.problem = None
        return value

    def wait(self) -> None:
        """Block until every queued write is done (their signals arrive with the next events)."""
        done = self._submit(lambda: None)
        if done is not None:
            done.result()

    # ---- the user's fixes -----------------------------------------------------------------------------------------

    @Slot(int)
    def _sentence_edited(self, index: int) -> None:
        shown = self._shown(index)
        if shown is not None:
            self._pending[index] = (shown[0], self._chosen.get(index), shown[1])
            self._flush_timer.start(EDIT_DELAY_MS)

    @Slot(int)
    def _sentence_replaced(self, index: int) -> None:
        shown = self._shown(index)
        if shown is not None:
            self._chosen[index] = shown[0]
            self._pending[index] = (None, shown[0], shown[1])
            self._flush_timer.start(EDIT_DELAY_MS)

    def _shown(self, index: int) -> tuple[str, str] | None:
        """Sentence `index`'s text as the target pane shows it now, and its source sentence."""
        pane = self.pane
        try:
            sentences = pane.sentences()
            start, end = pane.sentence_range(index)
        except (AttributeError, IndexError, TypeError):
            return None
        if not 0 <= index < len(sentences):
            return None
        editor = pane if hasattr(pane, "toPlainText") else pane.editor
        return editor.toPlainText()[start:end], sentences[index].source

    @Slot()
    def flush(self) -> None:
        """Queue the gathered sentence edits for writing now."""
        self._flush_timer.stop()
        pending, self._pending = self._pending, {}
        if pending and self.enabled and not self.store.closed:
            made = self.window.requests.made
            variant = made.options.variant if made is not None else None
            self._submit(self._write_edits, self._entry, self.pair_key(), sorted(pending.items()), variant)

    def _write_edits(self, entry: Future | None, pair: str | None, edits: list, variant: str | None = None) -> None:
        """(writer thread) The edits of one entry; its add ran before (one thread, in order)."""
        entry_id = entry.result() if entry is not None else None
        wrote = False
        for index, (edited, chosen, source) in edits:
            if entry_id is not None:
                wrote = (
                    self._write(self.store.set_sentence_edit, entry_id, index, edited, chosen) is not FAILED or wrote
                )
                continue
            # a translation that was not recorded (restored after a restart): its fix is still remembered
            target = edited if edited is not None else chosen
            if pair is not None and target is not None:
                wrote = self._write(self.store.remember, pair, source, target, variant) is not FAILED or wrote
        if wrote:
            self.changed.emit()

    # ---- settings -------------------------------------------------------------------------------------------------

    def _apply_limit(self) -> None:
        limit = int(self.settings.get(Key.HISTORY_LIMIT))
        if limit != self.store.max_entries and not self.store.closed:
            self._submit(self._write, self.store.set_max_entries, limit)

    @Slot(object)
    def _setting_changed(self, key: Key) -> None:
        if key is Key.HISTORY_LIMIT:
            self._apply_limit()
            self._submit(self.changed.emit)
        elif key is Key.HISTORY_ENABLED and not self.enabled:
            self._pending = {}
            self.entry_id = None

    def close(self) -> None:
        """Write what is pending, wait for it, and take the memory out of the window's chain (the window is
        closing). The store itself stays open: its owner closes it."""
        self.flush()
        self._writer.shutdown(wait=True)
        if self._memory is not None:
            self.window.requests.memory.remove(self._memory)
            self._memory = None


def _record(result: Translation, index: int) -> SentenceRecord:
    sentence = result.sentences[index]
    start, end = sentence.target_span
    text = result.text[start:end]
    if sentence.origin == ORIGIN_MEMORY:  # the user's own version, from the memory
        return SentenceRecord(sentence.source, text, edited=text)
    return SentenceRecord(sentence.source, text)


def _sentence_pane(window):
    """The target pane that reports sentence edits (H6's TargetPane), if this window has one."""
    for name in ("target_pane", "target"):
        pane = getattr(window, name, None)
        if pane is not None and hasattr(pane, "sentence_edited") and hasattr(pane, "sentence_replaced"):
            return pane
    return None
