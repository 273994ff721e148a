"""What the window shows of a translation: a request starts (the target pane emptied and streaming), progress
(the text as it comes, "n / m sentences"), the result (the target's sentences, the source's side of the alignment,
the status's figures), a cancel or a failure (worded for a person; an engine bug's detail goes to the log), and a
translation reopened from the history.

It follows the request controller's signals and paints the panes, the progress bar and the status; the window gives
it those parts and a few questions it answers (is the model loading, which pair is shown, is the window closed).
Its strings keep the "MainWindow" translation context they had when the window did this itself.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import AbstractContextManager

from PySide6.QtCore import QCoreApplication, QObject, QTimer, Slot
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QProgressBar, QWidget

from engine.history.records import HistoryEntry
from engine.languages import LanguagePair
from engine.results import Translation
from gui import pair_text, status_text
from gui.notice_bar import NoticeBar
from gui.review.edit_memory import KeptContext
from gui.window.alignment import Alignment
from gui.window.request_controller import RequestController
from gui.window.source_pane import SourcePane
from gui.window.target_pane import TargetPane
from gui.worker.messages import INTERNAL, NO_MODEL

StatusRender = Callable[[], str]

# More sentences than this and the source's side of the alignment is set on the next turn of the event loop: with
# the target's (72 000 sentences: ~0.07 s each) and a garbage collection in one turn the UI froze over 0.5 s.
ALIGN_LATER = 2_000


class Presenter(QObject):
    """Paints the requests of `requests` into the panes; `translate` and `cancel` are the window's commands."""

    def __init__(
        self,
        host: QWidget,
        requests: RequestController,
        *,
        source_pane: SourcePane,
        target_pane: TargetPane,
        alignment: Alignment,
        progress: QProgressBar,
        size_progress: Callable[[], None],
        notice: NoticeBar,
        show_status: Callable[[StatusRender], None],
        update_actions: Callable[[], None],
        switch_language: Callable[[], bool],
        language_paused: Callable[[], AbstractContextManager[None]],
        pair: Callable[[], LanguagePair | None],
        loading: Callable[[], bool],
        closed: Callable[[], bool],
    ) -> None:
        super().__init__(host)
        self.requests = requests
        self.source_pane, self.target_pane = source_pane, target_pane
        self.target = self.target_pane.editor
        self.alignment = alignment
        self.progress = progress
        self._size_progress = size_progress
        self.notice = notice
        self._show_status = show_status
        self._update_actions = update_actions
        self._switch_language = switch_language  # True: the text is in the other language, and the switch translates
        self._language_paused = language_paused  # the window's own changes of the source are not judged
        self._pair = pair
        self._loading = loading  # a model is being loaded
        self._closed = closed
        self._history_note = False  # the target's note says it was reopened from the history

    def follow(self) -> None:
        """Listen to the request controller (after it follows the worker, before the kept-sentence review does)."""
        self.requests.requested.connect(self._requested)
        self.requests.emptied.connect(self.target.clear)
        self.requests.translating_changed.connect(self._translating_changed)
        self.target.typed_while_read_only.connect(self._typed_while_streaming)
        self.requests.started.connect(self._translation_started)
        self.requests.progress.connect(self._translation_progress)
        self.requests.finished.connect(self._translation_finished)
        self.requests.failed.connect(self._translation_failed)

    @Slot()
    def translate(self) -> None:
        """Translate the whole source pane; a request already running is cancelled (the latest wins)."""
        if self._switch_language() or self.requests.problem is not None:  # a switch translates in the new direction
            return
        text = self.source_pane.text()  # the copy shared with the count, the autosave and the controller
        if not text.strip():
            self.cancel()
            self.target.clear()
            pair = self._pair()
            if pair is None:
                self._show_status(
                    lambda: QCoreApplication.translate(
                        "MainWindow", "Nothing to translate: type or paste text on the left."
                    )
                )
            else:
                self._show_status(
                    lambda: QCoreApplication.translate(
                        "MainWindow", "Nothing to translate: type or paste {language} text on the left."
                    ).format(language=pair_text.language_name(pair.source))
                )
            return
        self.requests.request(text)

    @Slot()
    def cancel(self) -> None:
        """Stop now and keep what is already translated."""
        self.requests.cancel()

    def show_history_entry(self, entry: HistoryEntry) -> None:
        """Show a kept translation as it was (its source, and its output with the user's edits and choices),
        without translating: as a restored session is, current with the present settings. Its sentences' edits
        go back into the session's memory, so translating it again keeps them."""
        self.requests.reset()
        editor = self.source_pane.editor
        editor.setUndoRedoEnabled(False)
        with self._language_paused():  # shown as it was, in its own direction, not translated again
            editor.setPlainText(entry.source)
        editor.setUndoRedoEnabled(True)
        editor.moveCursor(QTextCursor.MoveOperation.End)
        self.requests.adopt(entry.source, entry.output)
        self.target.setPlainText(entry.output)
        for record in entry.sentences:
            own = record.edited if record.edited is not None else record.chosen
            if own is not None:
                self.target_pane.edits.remember(record.source, own, KeptContext(entry.pair, entry.variant))
        self.target_pane.set_note(
            QCoreApplication.translate("MainWindow", "From history"),
            QCoreApplication.translate("MainWindow", "Reopened from the history; not translated again."),
        )
        self._history_note = True  # until the next request
        self._show_status(lambda: QCoreApplication.translate("MainWindow", "Reopened from the history."))
        self._update_actions()

    @Slot(int)
    def _requested(self, request_id: int) -> None:
        """A new request replaces what the pane shows (also a redo after a settings change)."""
        self.target.clear()
        self.target_pane.begin_stream()
        self.source_pane.clear_sentences()
        if self._history_note:
            self._history_note = False
            self.target_pane.set_note("")
        if self._loading() or self.requests.model is None:
            self._show_status(
                lambda: QCoreApplication.translate(
                    "MainWindow", "Waiting for the model to load; your text will be translated next."
                )
            )
        else:
            self._show_status(lambda: QCoreApplication.translate("MainWindow", "Translating…"))

    @Slot(int)
    def _translation_started(self, request_id: int) -> None:
        self.target.clear()  # also after a restart caused by a precision switch
        self.target_pane.begin_stream()
        self.progress.hide()
        self._show_status(lambda: QCoreApplication.translate("MainWindow", "Translating…"))

    @Slot(int, str, int, int)
    def _translation_progress(self, request_id: int, text: str, done: int, total: int) -> None:
        self.target_pane.append(text)
        if total > 1:
            if self.progress.maximum() != total:
                self.progress.setRange(0, total)
                self._size_progress()
            self.progress.setValue(done)
            self.progress.show()

    @Slot(int, object)
    def _translation_finished(self, request_id: int, result: Translation) -> None:
        if self.target.toPlainText() != result.text:
            self.target.setPlainText(result.text)
        source = self.requests.translated_source or ""
        self.target_pane.set_result(result, source)
        if len(result.sentences) > ALIGN_LATER:  # a huge paste: the source's side on the next turn of the loop
            QTimer.singleShot(0, lambda: self._align_source(result, source))
        else:
            self._align_source(result, source)
        if result.cancelled:
            done, total = self.requests.sentences
            self._show_status(lambda: status_text.cancelled_summary(result, done, total))
        else:
            self._show_status(lambda: status_text.translation_summary(result))

    def _align_source(self, result: Translation, source: str) -> None:
        """Where each shown sentence's English is, for the alignment (unless another result is shown by now)."""
        if self.requests.last_result is not result or self._closed():
            return
        self.source_pane.set_sentences(result.sentences if self.target_pane.ranges.items else [], source)
        self.alignment.refresh()

    @Slot(int, str)
    def _translation_failed(self, request_id: int, message: str) -> None:
        if message == NO_MODEL:
            self._show_status(lambda: QCoreApplication.translate("MainWindow", "No translation model is loaded."))
            return
        self._show_status(lambda: QCoreApplication.translate("MainWindow", "Translation failed."))
        if message.startswith(INTERNAL):  # a bug: worded for a person, the raw detail goes to the log
            print(f"qiao: translation failed: {message.removeprefix(INTERNAL)}", file=sys.stderr)
            self.notice.show_message(
                QCoreApplication.translate(
                    "MainWindow",
                    "Translation failed because of an unexpected error in the engine. Try again; if it keeps "
                    "failing, build or download the model again.",
                )
            )
            return
        self.notice.show_message(
            QCoreApplication.translate("MainWindow", "Translation failed: {error}").format(error=message)
        )

    @Slot(bool)
    def _translating_changed(self, on: bool) -> None:
        if not on:
            self.progress.hide()
            self.target_pane.end_stream()
        self._update_actions()

    @Slot()
    def _typed_while_streaming(self) -> None:
        """A key pressed in the translation while it is written: nothing is typed (the model's text and the
        user's are never mixed); say when it can be edited."""
        if self.requests.translating:
            self._show_status(
                lambda: QCoreApplication.translate(
                    "MainWindow", "The translation is still being written; edit it once it is done."
                )
            )
