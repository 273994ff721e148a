"""QuickTranslate: ties every way of asking for a quick translation (global shortcut, copy twice, clipboard watching,
the tray / single-instance `trigger()`, `qiao popup TEXT` → `show_text`) to the popup and the worker's "popup"
channel. Latest wins: a new request replaces the popup's, and reports for older ids are ignored.

The popup translates in the installed direction that reads the text (engine.text.source_language): Chinese while the
window is English → Chinese goes to the zh→en model, loaded beside the window's. Text no installed model reads is a
message naming the model to get, or saying Qiao does not translate that language (Japanese, Korean)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication, QObject, Signal
from PySide6.QtGui import QClipboard, QGuiApplication

from engine.options import TranslationOptions
from engine.text.source_language import choose_pair, detect_language
from gui import pair_text
from gui.quick.backends import backend_for_platform
from gui.quick.clipboard_text import MAX_CHARS, check_text, read_for_popup
from gui.quick.clipboard_watch import ClipboardWatcher
from gui.quick.copy_twice import CopyTwice
from gui.quick.popup import QuickPopup
from gui.quick.shortcut import DEFAULT_SHORTCUT, ShortcutBackend, ShortcutResult

CHANNEL = "popup"
Directions = Callable[[], tuple[str, tuple[str, ...]]]  # (the window's direction "en-zh", the installed pair keys)
# The pair key a request went to (None: the window's loaded direction) → what its translation could not follow
# ("<model> writes Simplified only, not Traditional"), "" when nothing
ScriptNote = Callable[[str | None], str]
_UNSUPPORTED = {"ja": QT_TRANSLATE_NOOP("QuickPopup", "Japanese"), "ko": QT_TRANSLATE_NOOP("QuickPopup", "Korean")}


@dataclass(frozen=True)
class QuickSettings:
    """The settings keys QUICK_SHORTCUT, COPY_TWICE, CLIPBOARD_WATCH, CLIPBOARD_WATCH_PAUSED, as plain values;
    `english_only` is true while the direction is en→zh (watching then skips text that is not English)."""

    shortcut: str = DEFAULT_SHORTCUT
    copy_twice: bool = False
    clipboard_watch: bool = False
    clipboard_watch_paused: bool = False
    english_only: bool = True


class PopupWorker(Protocol):
    translation_progress: Any
    translation_finished: Any
    translation_failed: Any

    def translate(
        self, text: str, options: TranslationOptions | None = None, *, channel: str = ..., pair: str | None = ...
    ) -> int: ...


class QuickTranslate(QObject):
    open_in_window = Signal(str)  # the popup's source, for the main window
    shortcut_changed = Signal(object)  # ShortcutResult of the last registration (for the settings dialog)

    def __init__(
        self,
        worker: PopupWorker,
        options: Callable[[], TranslationOptions],
        settings: QuickSettings | None = None,
        *,
        backend: ShortcutBackend | None = None,
        clipboard: QClipboard | None = None,
        popup: QuickPopup | None = None,
        clock: Callable[[], float] | None = None,
        directions: Directions | None = None,
        script_note: ScriptNote | None = None,
        parent: QObject | None = None,
    ) -> None:
        """`directions`: where the window stands and what is installed (None: always the loaded direction);
        `script_note`: what a finished translation could not follow, said under it in the popup."""
        super().__init__(parent)
        self._script_note = script_note
        self._pair: str | None = None  # the pair key the current request went to (None: the loaded direction)
        self.worker = worker
        self._options = options
        self._directions = directions
        self.clipboard = clipboard or QGuiApplication.clipboard()
        self.popup = popup or QuickPopup()
        self.popup.open_in_window.connect(self.open_in_window)
        self.backend = backend if backend is not None else backend_for_platform(self)
        self.backend.activated.connect(self.trigger)
        self.backend.result_ready.connect(self._shortcut_settled)
        self.copy_twice = CopyTwice(self.clipboard, **({"clock": clock} if clock else {}), parent=self)
        self.copy_twice.triggered.connect(self.show_text)
        self.watcher = ClipboardWatcher(self.clipboard, parent=self)
        self.watcher.text_ready.connect(self._watched)
        self.current_id: int | None = None
        self.shortcut_result: ShortcutResult | None = None
        self.settings = QuickSettings()
        worker.translation_progress.connect(self._progress)
        worker.translation_finished.connect(self._finished)
        worker.translation_failed.connect(self._failed)
        self.apply(settings or QuickSettings())

    def apply(self, settings: QuickSettings) -> ShortcutResult | None:
        """New settings: re-register the shortcut only when it changed; returns its result."""
        old, self.settings = self.settings, settings
        self.copy_twice.set_enabled(settings.copy_twice)
        self.watcher.set_enabled(settings.clipboard_watch)
        self.watcher.set_paused(settings.clipboard_watch_paused)
        self.watcher.english_only = settings.english_only
        if self.shortcut_result is None or settings.shortcut != old.shortcut:
            if settings.shortcut:
                self.shortcut_result = self.backend.register(settings.shortcut)
            else:
                self.backend.unregister()
                self.shortcut_result = ShortcutResult("ok")
            self.shortcut_changed.emit(self.shortcut_result)
        return self.shortcut_result

    def _shortcut_settled(self, result: ShortcutResult) -> None:
        """The final answer of a backend that said "pending" (the Wayland portal asks the desktop, maybe the user)."""
        self.shortcut_result = result
        self.shortcut_changed.emit(result)

    def set_watch_paused(self, paused: bool) -> None:
        """For the tray's "pause clipboard watching" (the caller saves CLIPBOARD_WATCH_PAUSED)."""
        self.apply(QuickSettings(**{**self.settings.__dict__, "clipboard_watch_paused": paused}))

    # -- requests --------------------------------------------------------------------------------------------------

    def trigger(self) -> None:
        """The selection (or the clipboard) into the popup: the shortcut, the tray, a second `qiao popup`."""
        grab = read_for_popup(self.clipboard)
        if grab.text is None:
            self.current_id = None
            self.popup.show_problem(grab.problem or "")
            self.popup.popup_at()
            return
        self._request(grab.text)

    def show_text(self, text: str) -> None:
        """`qiao popup TEXT`, copy twice: this text, with the same checks as the clipboard's."""
        grab = check_text(text)
        if grab.text is None:
            self.current_id = None
            self.popup.show_problem(grab.problem or "", text if text and len(text) > MAX_CHARS else "")
            self.popup.popup_at()
            return
        self._request(grab.text)

    def _watched(self, text: str) -> None:
        if self.popup.isVisible() and self.popup.source_text == text.strip():
            return  # copy twice already opened it for this text
        self.show_text(text)

    def _request(self, text: str) -> None:
        pair, problem = self._direction_for(text)
        if problem is not None:
            self.current_id = None
            self.popup.show_problem(problem, text)
            self.popup.popup_at()
            return
        self.popup.begin(text)
        self.popup.popup_at()
        extra = {"pair": pair} if pair is not None else {}
        self._pair = pair
        self.current_id = self.worker.translate(text, self._options(), channel=CHANNEL, **extra)

    def _direction_for(self, text: str) -> tuple[str | None, str | None]:
        """(the pair key to ask for, None: the loaded one; or a problem to show instead of translating)."""
        if self._directions is None:
            return None, None
        current, installed = self._directions()
        if not current:
            return None, None
        choice = choose_pair(detect_language(text), installed, current)
        if choice.unsupported is not None:
            language = QCoreApplication.translate("QuickPopup", _UNSUPPORTED.get(choice.unsupported, "?"))
            return None, QCoreApplication.translate(
                "QuickPopup", "This text looks {language}; Qiao translates only English and Chinese."
            ).format(language=language)
        if choice.missing is not None:
            language = pair_text.arrow(choice.missing).split(" → ")[0]
            message = QCoreApplication.translate(
                "QuickPopup",
                "This text looks {language}, and no {pair} model is installed: get opus-mt-{key} in Qiao's "
                "File → Models…",
            )
            return None, message.format(language=language, pair=pair_text.arrow(choice.missing), key=choice.missing)
        return (choice.pair if choice.switched else None), None

    # -- the worker's reports --------------------------------------------------------------------------------------

    def _progress(self, request_id: int, text: str, done: int, total: int) -> None:
        if request_id == self.current_id:
            self.popup.append(text)

    def _finished(self, request_id: int, translation: Any) -> None:
        if request_id != self.current_id:
            return
        if getattr(translation, "cancelled", False):
            return  # replaced by a newer request; that one's reports follow
        self.current_id = None
        note = self._script_note(self._pair) if self._script_note is not None else ""
        self.popup.finish(translation.text, note)

    def _failed(self, request_id: int, message: str) -> None:
        if request_id == self.current_id:
            self.current_id = None
            self.popup.fail(message)

    def shutdown(self) -> None:
        self.backend.unregister()
        self.popup.hide()
