"""The translator window: the source language on one side, the translation streaming in on the other; which
languages, and the wording that names them, follow the loaded bundle's pair (⇄ swaps the direction).

It never calls the engine: it sends text to its `RequestController` (which asks `TranslationWorker`, on its own
thread, for the work and decides what to redo when settings change) and paints what the controller's signals bring.
Once a translation finishes, the target pane knows its sentences: aligned with the source (gui.window.alignment), unsure
words underlined, flagged ones marked, and the user's edits kept (the pane's `edits`, first in the request
controller's translation memory, so translating again gives them back).

The window composes parts that each take only what they use: `WindowLayout` (gui.window.layout: the widgets, fonts,
zoom, orientation, geometry), `Menus` (gui.window.menus: actions and menus, given the commands they run),
`ModelControl` (gui.window.model_control: the model's state and the Models dialog) and `Presenter`
(gui.window.presenter: what a request shows). What stays here is the wiring, the editing commands (swap, clear, copy,
a history entry shown again), the view settings' effects and closing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt, Slot
from PySide6.QtGui import QCloseEvent, QGuiApplication, QTextCursor
from PySide6.QtWidgets import QApplication, QMainWindow

from engine.history.records import HistoryEntry
from engine.languages import LanguagePair
from engine.results import Translation
from gui import pair_text
from gui.documents.document_drops import FileDropFilter
from gui.documents.document_queue import DocumentQueue
from gui.documents.documents_panel import DocumentsPanel
from gui.i18n import install_translators
from gui.models.model_tasks import ModelStore
from gui.models.models_dialog import ModelsDialog
from gui.preferences.settings_dialog import SettingsDialog
from gui.quick.clipboard_text import copy_as_qiao
from gui.review.alternatives_controller import attach_alternatives
from gui.review.review_kept import attach_kept_review, settled
from gui.review.word_alignment import WordAligner
from gui.settings import Key, Settings
from gui.theme import apply_theme
from gui.window.alignment import Alignment
from gui.window.language_switch import LanguageSwitch
from gui.window.layout import WindowLayout
from gui.window.menus import MenuCommands, Menus
from gui.window.model_control import ModelControl
from gui.window.presenter import Presenter
from gui.window.request_controller import RequestController
from gui.window.session_store import SessionParts, SessionRequests, SessionStore
from gui.worker.model_load import EnginePort
from gui.worker.scheduler import ModelInfo, ModelProblem, WorkerThread

if TYPE_CHECKING:
    from gui.desktop.desktop import Desktop
    from gui.window.about_dialog import AboutDialog


class MainWindow(QMainWindow):
    """One window; owns the worker thread, the request controller, the autosave and the view settings' effects."""

    def __init__(
        self,
        settings: Settings,
        autosave_path: str | Path,
        model_dir: str | None = None,
        *,
        engine: EnginePort,
        model_store: ModelStore | None = None,
    ) -> None:
        """`engine`: what the worker translates with (gui.app passes the real one, tests fakes); `model_store`: the
        Models dialog's store (None: the engine's)."""
        super().__init__()
        self.setObjectName("mainWindow")
        # Tray, close-to-tray, later starts, the API (gui.desktop.desktop; set by gui.app)
        self.desktop: Desktop | None = None
        self.settings = settings
        self.model_dir = model_dir
        self.model_store = model_store  # the Models dialog's store (None: the engine's)
        self._status: Callable[[], str] = lambda: ""
        self._closed = False

        self.view = WindowLayout(self, settings)
        self._adopt_widgets(self.view)
        self.translate_button.clicked.connect(self.translate)
        self.cancel_button.clicked.connect(self.cancel)
        self.clear_button.clicked.connect(self.clear)
        self.copy_button.clicked.connect(self.copy_result)
        commands = MenuCommands(
            translate=self.translate,
            cancel=self.cancel,
            copy=self.copy_result,
            clear=self.clear,
            settings=self.open_settings,
            quit=self.close,
            zoom=self.view.zoom,
            about=self.open_about,
            swap=self.swap,
            models=self.open_models,
            open_document=self.open_document,
        )
        self.menus = Menus(self, settings, commands)
        self._adopt_menus(self.menus)
        self.swap_button.setDefaultAction(self.swap_action)

        # The source's autosave and the last translation's file
        parts = SessionParts(self.source_pane, self.target_pane, settings, self.notice)
        self.store = SessionStore(parts, autosave_path, self)
        self.autosave = self.store.autosave
        self.store.restore_source()
        self.engine = WorkerThread(engine=engine)  # the worker on its own thread, working with `engine`
        worker = self.engine.worker
        # First on the worker's signals, so the window's own slots see the controller's new state
        self.requests = RequestController(worker, settings, self.source_pane.text, model_dir, self)
        self.requests.memory.add(self.target_pane.edits, first=True)  # the user's own edits win over any history
        self.model_control = ModelControl(
            self,
            self.requests,
            settings,
            notice=self.notice,
            model_panel=self.model_panel,
            precision_label=self.precision_label,
            swap_action=self.swap_action,
            swap_button=self.swap_button,
            model_dir=model_dir,
            model_store=model_store,
            show_status=self._show_status,
            pair_changed=self._apply_pair,
            update_actions=self._update_actions,
        )
        # the sentences under the pointer, and their words where the model aligns them (asked of the worker)
        words = WordAligner(worker, self.requests.options, self)
        self.alignment = Alignment(self.source_pane, self.target_pane, self, words=words)
        self.alternatives = attach_alternatives(self)  # click a word: other words there, the rest re-decoded
        self._apply_review_settings()
        self._build_documents()
        self.language = LanguageSwitch(self)  # text clearly in the other language switches the direction
        self.presenter = Presenter(
            self,
            self.requests,
            source_pane=self.source_pane,
            target_pane=self.target_pane,
            alignment=self.alignment,
            progress=self.progress,
            size_progress=self.view.size_progress,
            notice=self.notice,
            show_status=self._show_status,
            update_actions=self._update_actions,
            switch_language=self.language.check,
            language_paused=self.language.paused,
            pair=lambda: self.pair,
            loading=lambda: self.model_control.loading,
            closed=lambda: self._closed,
        )

        self.source.textChanged.connect(self._source_changed)
        self.target.textChanged.connect(self._update_copy)
        self.settings.changed.connect(self._setting_changed)
        self.settings.noticed.connect(self._show_settings_notices)
        self.view.apply_fonts()
        self.view.apply_orientation()
        self.view.restore_geometry()
        self._retranslate()
        self._update_actions()

        self._show_settings_notices()

        self.presenter.follow()
        attach_kept_review(self)  # after the presenter: kept sentences are checked once the pane has the result
        self.model_control.follow(worker)
        # Brings back the last translation; after the window's own slots are connected
        self.store.start(SessionRequests(self.requests, worker.model_ready, self.translate, self.append_status))
        self.model_control.load_model()
        self.source.setFocus()

    # ---- construction ----------------------------------------------------------------------------------------

    def _adopt_widgets(self, view: WindowLayout) -> None:
        """The layout's widgets under the names the window's features (and tests) know them by."""
        self.source_pane, self.target_pane = view.source_pane, view.target_pane
        self.source, self.target = view.source_pane.editor, view.target_pane.editor
        self.splitter, self.swap_button, self.button_row = view.splitter, view.swap_button, view.button_row
        self.translate_button, self.cancel_button = view.translate_button, view.cancel_button
        self.live_check, self.clear_button, self.copy_button = view.live_check, view.clear_button, view.copy_button
        self.notice, self.model_panel = view.notice, view.model_panel
        self.progress, self.precision_label = view.progress, view.precision_label

    def _adopt_menus(self, m: Menus) -> None:
        """The menus and actions the features that attach to them (glossary, history) and tests know by name."""
        self.file_menu, self.view_menu = m.file_menu, m.view_menu
        self.tools_menu, self.help_menu = m.tools_menu, m.help_menu
        self.swap_action, self.open_document_action = m.swap_action, m.open_document_action
        self.settings_action, self.stacked_action = m.settings_action, m.stacked_action
        self.bigger_action, self.underline_action = m.bigger_action, m.underline_action
        self.sync_scroll_action = m.sync_scroll_action

    def _build_documents(self) -> None:
        """The Documents queue and its dock (hidden until a document is added), and files dropped anywhere."""
        self.documents = DocumentQueue(
            self.engine.worker, self.settings, self.requests.options, lambda: self.direction, settle=settled
        )
        self.documents_panel = DocumentsPanel(self.documents, self)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, self.documents_panel)
        self.documents_panel.hide()
        self.view_menu.addSeparator()
        self.view_menu.addAction(self.documents_panel.toggleViewAction())
        self._drops = FileDropFilter(self.add_documents, self)
        self.setAcceptDrops(True)
        for watched in (self, self.source.viewport(), self.target.viewport()):
            watched.installEventFilter(self._drops)

    def add_documents(self, paths: list) -> None:
        """Queue files (dropped, or chosen in the dialog) for translation; the panel shows them."""
        self.documents.add(paths)

    @Slot()
    def open_document(self) -> None:
        """File → Open document…: the chosen files join the Documents queue."""
        self.documents_panel.choose_documents()

    def _retranslate(self) -> None:
        """Every visible string; called again when the interface language changes."""
        self._apply_pair()
        self.view.retranslate()
        self.menus.retranslate()
        self._show_status(self._status)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self._retranslate()
        super().changeEvent(event)

    # ---- model ---------------------------------------------------------------------------------------------

    @property
    def model(self) -> ModelInfo | None:
        """The loaded model; None while none is (the controller follows the worker's reports)."""
        return self.requests.model

    @property
    def problem(self) -> ModelProblem | None:
        """Why no model is usable; None when one is."""
        return self.requests.problem

    @property
    def translating(self) -> bool:
        return self.requests.translating

    @property
    def last_result(self) -> Translation | None:
        """The latest finished (or cancelled) request."""
        return self.requests.last_result

    @property
    def pair(self) -> LanguagePair | None:
        """The loaded bundle's pair; before one loads, the pair the direction setting asks for."""
        return self.model_control.pair

    @property
    def direction(self) -> str:
        """The pair key shown now ("en-zh")."""
        return self.model_control.direction

    @property
    def available_pairs(self) -> tuple[str, ...]:
        """Pair keys of the usable installed bundles."""
        return self.model_control.available_pairs

    @property
    def loading(self) -> bool:
        """A model is being loaded on the worker."""
        return self.model_control.loading

    def _apply_pair(self) -> None:
        """Headings, placeholders, fonts and the title follow the pair (and the target variant)."""
        pair = self.pair
        # Qt appends the application display name ("— Qiao") itself: the title must not repeat it
        self.setWindowTitle(pair_text.window_title(pair) if pair is not None else self.tr("Translator"))
        self.source_pane.retranslate(pair)
        self.target_pane.retranslate(pair, self.settings.get(Key.VARIANT))
        self.view.apply_fonts()
        self.model_control.update_swap()

    @Slot()
    def swap(self) -> None:
        """Reverse the direction: the translation becomes the source and the old source fills the target pane
        until the other bundle (loaded on the worker) has translated the new source."""
        if not self.swap_action.isEnabled():
            return
        old_source, old_target = self.source_pane.text(), self.target.toPlainText()
        cursor = self.source.textCursor()  # one undoable edit: Ctrl+Z brings the old source back
        cursor.select(QTextCursor.SelectionType.Document)
        with self.language.paused():  # the text is the new direction's: no automatic switch on it
            cursor.insertText(old_target)
        self.requests.swap(pair_text.reverse_key(self.direction), old_target)
        self.target.setPlainText(old_source)
        self._update_actions()

    def switch_direction(self, direction: str) -> None:
        """Change to `direction` keeping the source text (gui.window.language_switch: it is in that direction's source
        language): the other bundle loads on the worker, then translates it."""
        self.requests.swap(direction, self.source_pane.text())
        self.target.clear()
        self._update_actions()

    @Slot()
    def open_models(self) -> ModelsDialog:
        return self.model_control.open_models()

    @Slot()
    def _show_settings_notices(self) -> None:
        for notice in self.settings.take_notices():
            self.notice.show_message(notice)

    # ---- translating ---------------------------------------------------------------------------------------

    @Slot()
    def translate(self) -> None:
        """Translate the whole source pane; a request already running is cancelled (the latest wins)."""
        self.presenter.translate()

    @Slot()
    def cancel(self) -> None:
        """Stop now and keep what is already translated."""
        self.presenter.cancel()

    def _update_actions(self) -> None:
        usable = self.problem is None
        self.menus.translate_action.setEnabled(usable)
        self.translate_button.setEnabled(usable)
        self.menus.cancel_action.setEnabled(self.translating)
        self.cancel_button.setEnabled(self.translating)
        self._update_copy()
        self.menus.show_settings()

    @Slot()
    def _update_copy(self) -> None:
        has_result = self.target.document().characterCount() > 1
        self.copy_button.setEnabled(has_result)
        self.menus.copy_action.setEnabled(has_result)

    # ---- editing -------------------------------------------------------------------------------------------

    @Slot()
    def _source_changed(self) -> None:
        self.autosave.schedule()
        self.requests.source_changed()

    def show_history_entry(self, entry: HistoryEntry) -> None:
        """Show a kept translation as it was, without translating it (gui.window.presenter)."""
        self.presenter.show_history_entry(entry)

    @Slot()
    def copy_result(self) -> None:
        text = self.target.toPlainText()
        if text:  # marked as Qiao's own: clipboard watching and copy twice never translate it again
            copy_as_qiao(QGuiApplication.clipboard(), text)
            self._show_status(lambda: self.tr("Translation copied to the clipboard."))

    @Slot()
    def clear(self) -> None:
        """Empty both panes; undoable in the source pane (Ctrl+Z), so a slip loses nothing."""
        self.requests.reset()
        cursor = self.source.textCursor()
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.removeSelectedText()
        self.target.clear()
        self.source_pane.clear_sentences()
        self._show_status(lambda: "")  # the figures were about the text just cleared
        self._update_actions()
        self.source.setFocus()

    # ---- settings, layout, dialogs -------------------------------------------------------------------------

    @Slot()
    def open_settings(self) -> SettingsDialog:
        has_tray = self.desktop.tray is not None if self.desktop is not None else None
        dialog = SettingsDialog(self.settings, self.model, self, pair=self.pair, has_tray=has_tray)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    @Slot()
    def open_about(self) -> AboutDialog:
        from gui.window.about_dialog import AboutDialog  # importlib.metadata and friends: ~45 ms kept out of start-up

        dialog = AboutDialog(self.model, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    @Slot(object)
    def _setting_changed(self, key: Key) -> None:
        """View settings apply at once (the request controller decides about request settings itself)."""
        value = self.settings.get(key)
        if key in (Key.FONT_SIZE, Key.VARIANT, Key.DIRECTION):
            self._apply_pair()
        elif key is Key.UI_LANGUAGE:
            install_translators(value)
        elif key is Key.THEME:
            app = QApplication.instance()
            if isinstance(app, QApplication):
                apply_theme(app, value)
        elif key is Key.STACKED:
            self.view.apply_orientation()
        elif key in (Key.CONFIDENCE_UNDERLINE, Key.CONFIDENCE_THRESHOLD, Key.SYNC_SCROLL):
            self._apply_review_settings()
        elif key is Key.LIVE_TRANSLATE:
            self.view.show_live(value)
        self._update_actions()

    def _apply_review_settings(self) -> None:
        self.target_pane.set_review_options(
            self.settings.get(Key.CONFIDENCE_UNDERLINE), self.settings.get(Key.CONFIDENCE_THRESHOLD)
        )
        self.alignment.sync = self.settings.get(Key.SYNC_SCROLL)

    def _show_status(self, render: Callable[[], str]) -> None:
        """Remember how to word the status, so it is re-worded if the interface language changes."""
        self._status = render
        self.view.status_label.setText(render())

    def status_message(self) -> str:
        return self.view.status_label.text()

    def append_status(self, render: Callable[[], str]) -> None:
        """Add a remark to the status now shown (still re-worded if the interface language changes)."""
        shown = self._status
        self._show_status(lambda: f"{shown()} · {render()}")

    # ---- closing -------------------------------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if self.desktop is not None and self.desktop.close_requested(event):
            return  # hidden to the tray
        self.shutdown()
        super().closeEvent(event)
        if self.desktop is not None:
            self.desktop.window_closed()

    def shutdown(self) -> None:
        """Save everything and stop the worker; safe to call twice."""
        if self._closed:
            return
        self._closed = True
        for dialog in self.findChildren(ModelsDialog):
            dialog.close_tasks()
        self.requests.close()
        self.store.flush()
        self.autosave.flush()
        self.view.save_geometry()
        self.settings.sync()
        self.engine.shutdown()
