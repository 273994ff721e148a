"""The translator window: the source language on one side, the translation streaming in on the other; which
languages, and the wording that names them, follow the loaded bundle's pair (⇄ swaps the direction).

It never calls the engine: it sends text to its `RequestController` (which asks `TranslationWorker`, on its own
thread, for the work and decides what to redo when settings change) and paints what the controller's signals bring.
Once a translation finishes, the target pane knows its sentences: aligned with the source (gui.window.alignment), unsure
words underlined, flagged ones marked, and the user's edits kept (the pane's `edits`, first in the request
controller's translation memory, so translating again gives them back).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QCloseEvent, QGuiApplication, QKeySequence, QTextCursor
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QLabel,
    QMainWindow,
    QMenu,
    QProgressBar,
    QPushButton,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engine.history.records import HistoryEntry
from engine.languages import LanguagePair
from engine.results import Translation
from gui import pair_text, problem_text, status_text
from gui.documents.document_drops import FileDropFilter
from gui.documents.document_queue import DocumentQueue
from gui.documents.documents_panel import DocumentsPanel
from gui.documents.wording import FORMAT_LABELS
from gui.i18n import install_translators
from gui.models.model_status import ModelStatusPanel
from gui.models.model_tasks import ModelStore
from gui.models.models_dialog import ModelsDialog
from gui.notice_bar import NoticeBar
from gui.preferences.settings_dialog import SettingsDialog
from gui.quick.clipboard_text import copy_as_qiao
from gui.review.alternatives_controller import attach_alternatives
from gui.review.edit_memory import KeptContext
from gui.review.review_kept import attach_kept_review
from gui.settings import Key, Settings
from gui.theme import apply_theme
from gui.window.alignment import Alignment
from gui.window.button_row import ButtonRow
from gui.window.language_switch import LanguageSwitch
from gui.window.request_controller import RequestController
from gui.window.session_store import SessionParts, SessionRequests, SessionStore
from gui.window.source_pane import SourcePane
from gui.window.target_pane import TargetPane
from gui.worker.scheduler import (
    INTERNAL,
    NO_MODEL,
    DocumentJobFactory,
    Locator,
    ModelInfo,
    ModelProblem,
    PairLister,
    TranslatorFactory,
    Verifier,
    WorkerThread,
)

if TYPE_CHECKING:
    from gui.desktop.desktop import Desktop
    from gui.window.about_dialog import AboutDialog


# More sentences than this and the source's side of the alignment is set on the next turn of the event loop: with
# the target's (72 000 sentences: ~0.07 s each) and a garbage collection in one turn the UI froze over 0.5 s.
_ALIGN_LATER = 2_000


class MainWindow(QMainWindow):
    """One window; owns the worker thread, the request controller, the autosave and the view settings' effects."""

    def __init__(
        self,
        settings: Settings,
        autosave_path: str | Path,
        model_dir: str | None = None,
        *,
        translator_factory: TranslatorFactory | None = None,
        locator: Locator | None = None,
        expected_dir: Callable[[str | None], Path] | None = None,
        verifier: Verifier | None = None,
        pair_lister: PairLister | None = None,
        model_store: ModelStore | None = None,
        document_job: DocumentJobFactory | None = None,
    ) -> None:
        super().__init__()
        self.setObjectName("mainWindow")
        self.desktop: Desktop | None = (
            None  # tray, close-to-tray, later starts, the API (gui.desktop.desktop; set by gui.app)
        )
        self.settings = settings
        self.model_dir = model_dir
        self.model_store = model_store  # the Models dialog's store (None: the engine's)
        self.available_pairs: tuple[str, ...] = ()  # pair keys of the usable installed bundles
        self.loading = False
        self._status: Callable[[], str] = lambda: ""
        self._closed = False
        self._retrying = False  # a "Try again" load is under way
        self._fallback_from = ""  # the broken precision the user replaced with "Use … instead"
        self._history_note = False  # the target's note says it was reopened from the history

        self._build_widgets()
        self._build_actions()
        self._build_menus()

        # The source's autosave and the last translation's file
        parts = SessionParts(self.source_pane, self.target_pane, settings, self.notice)
        self.store = SessionStore(parts, autosave_path, self)
        self.autosave = self.store.autosave
        self.store.restore_source()
        self.engine = WorkerThread(translator_factory, locator, expected_dir, verifier, pair_lister, document_job)
        worker = self.engine.worker
        # First on the worker's signals, so the window's own slots see the controller's new state
        self.requests = RequestController(worker, settings, self.source_pane.text, model_dir, self)
        self.requests.memory.add(self.target_pane.edits, first=True)  # the user's own edits win over any history
        self.alignment = Alignment(self.source_pane, self.target_pane, self)
        self.alternatives = attach_alternatives(self)  # click a word: other words there, the rest re-decoded
        self._apply_review_settings()
        self._build_documents()
        self.language = LanguageSwitch(self)  # text clearly in the other language switches the direction

        self.source.textChanged.connect(self._source_changed)
        self.target.textChanged.connect(self._update_copy)
        self.settings.changed.connect(self._setting_changed)
        self.settings.noticed.connect(self._show_settings_notices)
        self._apply_fonts()
        self._apply_orientation()
        self._restore_window_state()
        self._retranslate()
        self._update_actions()

        self._show_settings_notices()

        self.requests.requested.connect(self._requested)
        self.requests.emptied.connect(self.target.clear)
        self.requests.translating_changed.connect(self._translating_changed)
        self.target.typed_while_read_only.connect(self._typed_while_streaming)
        self.requests.started.connect(self._translation_started)
        self.requests.progress.connect(self._translation_progress)
        self.requests.finished.connect(self._translation_finished)
        attach_kept_review(self)  # after the line above: kept sentences are checked once the pane has the result
        self.requests.failed.connect(self._translation_failed)
        worker.switch_failed.connect(self._switch_failed)
        worker.model_loading.connect(self._model_loading)
        worker.model_ready.connect(self._model_ready)
        worker.model_failed.connect(self._model_failed)
        worker.error.connect(self._worker_error)
        # Brings back the last translation; after the window's own slots are connected
        self.store.start(SessionRequests(self.requests, worker.model_ready, self.translate, self.append_status))
        self.load_model()
        self.source.setFocus()

    # ---- construction ----------------------------------------------------------------------------------------

    def _build_widgets(self) -> None:
        self.source_pane = SourcePane(self)
        self.target_pane = TargetPane(self)
        self.source = self.source_pane.editor
        self.target = self.target_pane.editor
        self.splitter = QSplitter(self)
        self.splitter.setObjectName("splitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.source_pane)
        self.splitter.addWidget(self.target_pane)
        self.swap_button = QToolButton(self)
        self.swap_button.setObjectName("swapButton")
        self.swap_button.setText("⇄")
        self.swap_button.setAutoRaise(True)
        arrow_font = self.swap_button.font()
        arrow_font.setPointSizeF(arrow_font.pointSizeF() * 1.4)  # ⇄ is a small glyph at the UI size
        self.swap_button.setFont(arrow_font)
        self.target_pane.head.insertWidget(0, self.swap_button)
        # Both heading rows as tall as the button, so the two editors start at the same height
        self.source_pane.heading.setMinimumHeight(self.swap_button.sizeHint().height())

        self.translate_button = QPushButton(self)
        self.translate_button.setObjectName("translateButton")
        self.translate_button.clicked.connect(self.translate)
        self.cancel_button = QPushButton(self)
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.clicked.connect(self.cancel)
        self.live_check = QCheckBox(self)
        self.live_check.setObjectName("liveCheck")
        self.live_check.setChecked(self.settings.get(Key.LIVE_TRANSLATE))
        self.live_check.toggled.connect(lambda on: self.settings.set(Key.LIVE_TRANSLATE, on))
        self.clear_button = QPushButton(self)
        self.clear_button.setObjectName("clearButton")
        self.clear_button.clicked.connect(self.clear)
        self.copy_button = QPushButton(self)
        self.copy_button.setObjectName("copyButton")
        self.copy_button.clicked.connect(self.copy_result)
        for b in (self.translate_button, self.cancel_button, self.clear_button, self.copy_button):
            b.setAutoDefault(False)
        self.translate_button.setDefault(True)  # drawn as the primary action; Return still types a newline
        self.button_row = ButtonRow(
            [self.translate_button, self.cancel_button, 12, self.live_check],
            [self.clear_button, self.copy_button],
            self,
        )

        self.notice = NoticeBar(self)
        self.model_panel = ModelStatusPanel(self)
        self.model_panel.retry_requested.connect(self.retry_model)
        self.model_panel.models_requested.connect(self.open_models)
        self.model_panel.use_precision.connect(self.use_precision)
        self.model_panel.open_failed.connect(self._open_folder_failed)

        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(10, 8, 10, 4)
        layout.addWidget(self.model_panel)
        layout.addWidget(self.notice)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.button_row)
        self.setCentralWidget(central)

        self.status_label = QLabel(self)
        self.status_label.setObjectName("statusLabel")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar(self)
        self.progress.setObjectName("progress")
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.precision_label = QLabel(self)
        self.precision_label.setObjectName("precisionLabel")
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)
        self.statusBar().addPermanentWidget(self.precision_label)

    def _build_documents(self) -> None:
        """The Documents queue and its dock (hidden until a document is added), and files dropped anywhere."""
        self.documents = DocumentQueue(self.engine.worker, self.settings, self.requests.options, lambda: self.direction)
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

    def _action(self, slot: Callable[[], object], *shortcuts: QKeySequence | str) -> QAction:
        action = QAction(self)
        action.triggered.connect(slot)
        if shortcuts:
            action.setShortcuts([QKeySequence(s) for s in shortcuts])
        self.addAction(action)
        return action

    def _build_actions(self) -> None:
        self.translate_action = self._action(self.translate, "Ctrl+Return", "Ctrl+Enter")
        self.cancel_action = self._action(self.cancel, "Esc")
        self.copy_action = self._action(self.copy_result, "Ctrl+Shift+C")
        self.clear_action = self._action(self.clear, "Ctrl+Shift+Backspace")
        # Ctrl+, first: the menu shows the first shortcut, and StandardKey.Preferences is empty on Linux and Windows
        preferences = QKeySequence(QKeySequence.StandardKey.Preferences)
        extra = [preferences] if not preferences.isEmpty() and preferences != QKeySequence("Ctrl+,") else []
        self.settings_action = self._action(self.open_settings, "Ctrl+,", *extra)
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.quit_action = self._action(self.close, QKeySequence.StandardKey.Quit)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.stacked_action = self._action(lambda: self.settings.set(Key.STACKED, self.stacked_action.isChecked()))
        self.stacked_action.setCheckable(True)
        self.live_action = self._action(lambda: self.settings.set(Key.LIVE_TRANSLATE, self.live_action.isChecked()))
        self.live_action.setCheckable(True)
        self.bigger_action = self._action(lambda: self._zoom(+1), QKeySequence.StandardKey.ZoomIn, "Ctrl+=")
        self.smaller_action = self._action(lambda: self._zoom(-1), QKeySequence.StandardKey.ZoomOut)
        self.about_action = self._action(self.open_about)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.swap_action = self._action(self.swap, "Ctrl+Shift+S")
        self.swap_button.setDefaultAction(self.swap_action)
        self.models_action = self._action(self.open_models)
        self.open_document_action = self._action(self.open_document, "Ctrl+O")
        self.underline_action = self._action(
            lambda: self.settings.set(Key.CONFIDENCE_UNDERLINE, self.underline_action.isChecked())
        )
        self.underline_action.setCheckable(True)
        self.sync_scroll_action = self._action(
            lambda: self.settings.set(Key.SYNC_SCROLL, self.sync_scroll_action.isChecked())
        )
        self.sync_scroll_action.setCheckable(True)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        self.file_menu = QMenu(self)
        self.file_menu.addAction(self.open_document_action)
        self.file_menu.addAction(self.models_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)
        self.edit_menu = QMenu(self)
        for a in (self.translate_action, self.cancel_action, None, self.copy_action, self.clear_action, None):
            self.edit_menu.addAction(a) if a else self.edit_menu.addSeparator()
        self.edit_menu.addAction(self.live_action)
        self.edit_menu.addAction(self.swap_action)
        self.edit_menu.addSeparator()
        self.edit_menu.addAction(self.settings_action)
        self.view_menu = QMenu(self)
        for a in (
            self.stacked_action,
            None,
            self.bigger_action,
            self.smaller_action,
            None,
            self.underline_action,
            self.sync_scroll_action,
        ):
            self.view_menu.addAction(a) if a else self.view_menu.addSeparator()
        # Tools: filled by what attaches itself (the glossary); shown once it has an entry
        self.tools_menu = QMenu(self)
        self.tools_menu.installEventFilter(self)
        self.help_menu = QMenu(self)
        self.help_menu.addAction(self.about_action)
        for m in (self.file_menu, self.edit_menu, self.view_menu, self.tools_menu, self.help_menu):
            bar.addMenu(m)
        self.tools_menu.menuAction().setVisible(False)

    def _retranslate(self) -> None:
        """Every visible string; called again when the interface language changes."""
        self._apply_pair()
        self.translate_button.setText(self.tr("&Translate"))
        self.translate_button.setToolTip(self.tr("Translate (Ctrl+Enter)"))
        self.translate_button.setAccessibleName(self.tr("Translate"))
        self.cancel_button.setText(self.tr("Cancel"))
        self.cancel_button.setToolTip(self.tr("Stop translating and keep what is done (Esc)"))
        self.cancel_button.setAccessibleName(self.tr("Cancel translation"))
        self.live_check.setText(self.tr("Translate as you t&ype"))
        self.live_check.setAccessibleName(self.tr("Translate as you type"))
        self.clear_button.setText(self.tr("C&lear"))
        self.clear_button.setToolTip(self.tr("Clear both panes (Ctrl+Shift+Backspace); Ctrl+Z brings the text back"))
        self.clear_button.setAccessibleName(self.tr("Clear"))
        self.copy_button.setText(self.tr("&Copy translation"))
        self.copy_button.setToolTip(self.tr("Copy the translation (Ctrl+Shift+C)"))
        self.copy_button.setAccessibleName(self.tr("Copy translation"))
        self.progress.setAccessibleName(self.tr("Sentences translated"))
        self.progress.setFormat(self.tr("%v / %m sentences"))
        self._size_progress()
        self.status_label.setAccessibleName(self.tr("Status"))
        self.precision_label.setAccessibleName(self.tr("Precision"))
        self.precision_label.setToolTip(self.tr("Model precision (change it in Settings)"))
        self.splitter.setAccessibleName(self.tr("Source and translation"))

        self.file_menu.setTitle(self.tr("&File"))
        self.edit_menu.setTitle(self.tr("&Edit"))
        self.view_menu.setTitle(self.tr("&View"))
        self.tools_menu.setTitle(self.tr("T&ools"))
        self.help_menu.setTitle(self.tr("&Help"))
        self.translate_action.setText(self.tr("&Translate"))
        self.cancel_action.setText(self.tr("&Cancel translation"))
        self.copy_action.setText(self.tr("C&opy translation"))
        self.clear_action.setText(self.tr("C&lear"))
        self.live_action.setText(self.tr("Translate as you t&ype"))
        self.settings_action.setText(self.tr("&Settings…"))
        self.quit_action.setText(self.tr("&Quit"))
        self.stacked_action.setText(self.tr("&Stacked layout"))
        self.bigger_action.setText(self.tr("&Larger text"))
        self.smaller_action.setText(self.tr("S&maller text"))
        self.about_action.setText(self.tr("&About Qiao"))
        self.swap_action.setText(self.tr("S&wap languages"))
        self.swap_action.setIconText("⇄")  # what the button beside the headings shows; the menu shows the text
        self.models_action.setText(self.tr("&Models…"))
        self.open_document_action.setText(self.tr("Open &document…"))
        self.underline_action.setText(self.tr("&Underline unsure words"))
        self.underline_action.setToolTip(self.tr("A wavy line under the words the model was unsure of"))
        self.sync_scroll_action.setText(self.tr("Scroll panes toge&ther"))
        self.open_document_action.setToolTip(
            self.tr("Translate whole files: {formats}").format(
                formats=", ".join(QApplication.translate("DocumentsPanel", label) for label in FORMAT_LABELS.values())
            )
        )
        self._show_status(self._status)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.tools_menu and event.type() in (QEvent.Type.ActionAdded, QEvent.Type.ActionRemoved):
            # After the change is done: ActionRemoved comes while the action is still listed
            QTimer.singleShot(0, self._update_tools_menu)
            self._update_tools_menu()
        return super().eventFilter(watched, event)

    def _update_tools_menu(self) -> None:
        shown = any(not a.isSeparator() for a in self.tools_menu.actions())
        self.tools_menu.menuAction().setVisible(shown)

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
        model = self.model
        if model is not None and model.pair is not None:
            return model.pair
        return pair_text.expected_pair(self.settings.get(Key.DIRECTION))

    @property
    def direction(self) -> str:
        """The pair key shown now ("en-zh")."""
        pair = self.pair
        return pair.key if pair is not None else self.settings.get(Key.DIRECTION)

    def _apply_pair(self) -> None:
        """Headings, placeholders, fonts and the title follow the pair (and the target variant)."""
        pair = self.pair
        # Qt appends the application display name ("— Qiao") itself: the title must not repeat it
        self.setWindowTitle(pair_text.window_title(pair) if pair is not None else self.tr("Translator"))
        self.source_pane.retranslate(pair)
        self.target_pane.retranslate(pair, self.settings.get(Key.VARIANT))
        self._apply_fonts()
        self._update_swap()

    def _update_swap(self) -> None:
        """⇄ is offered only when a bundle for the reverse direction is installed; otherwise its tooltip says why."""
        reverse = pair_text.reverse_key(self.direction)
        if self.model_dir:
            usable = False
            why = self.tr("Qiao was started with one model folder (--model), so it cannot swap to another model.")
        elif reverse not in self.available_pairs:
            usable = False
            why = self.tr("No {pair} model is installed; add one with File → Models…").format(
                pair=pair_text.arrow(reverse)
            )
        else:
            usable = True
            why = self.tr("Swap the languages and the texts (Ctrl+Shift+S)")
        self.swap_action.setEnabled(usable)
        self.swap_action.setToolTip(why)
        self.swap_button.setToolTip(why)
        self.swap_button.setAccessibleName(self.tr("Swap languages"))
        self.swap_button.setAccessibleDescription(why)

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
        dialog = ModelsDialog(self.model_store, self.model_dir, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.models_changed.connect(self._models_changed)
        dialog.removed.connect(self._model_removed)
        dialog.open()
        return dialog

    @Slot(object)
    def _models_changed(self, models: list) -> None:
        """After an import, download or removal: the swap follows what is installed, and a model that now exists
        for the direction shown is loaded if none was."""
        self.available_pairs = tuple(
            sorted({m.pair.key for m in models if getattr(m, "pair", None) is not None and not m.problem})
        )
        self._update_swap()
        if self.problem is not None and not self.loading and self.direction in self.available_pairs:
            self.load_model()

    @Slot(str)
    def _model_removed(self, path: str) -> None:
        model = self.model
        if model is None or Path(model.bundle_dir) != Path(path):
            return
        self.notice.show_message(
            self.tr("The model in use was removed. Qiao is looking for another {pair} model.").format(
                pair=pair_text.arrow(self.direction)
            )
        )
        self.load_model()

    @Slot()
    def load_model(self) -> None:
        """(Re)load the model on the worker, in the precision the settings name."""
        self.requests.load_model()

    @Slot()
    def retry_model(self) -> None:
        """ "Try again": look for the model again; if the same problem comes back, the panel says it checked."""
        self._retrying = True
        self.load_model()

    @Slot(str)
    def use_precision(self, precision: str) -> None:
        """ "Use FP32 instead": the setting changes too, so the setting always names what runs."""
        self._fallback_from = self.problem.precision if self.problem is not None else ""
        if self.settings.get(Key.PRECISION) == precision:
            self.load_model()
        else:
            self.settings.set(Key.PRECISION, precision)  # the settings reaction loads it (no model is loaded now)

    @Slot(str)
    def _open_folder_failed(self, path: str) -> None:
        self.notice.show_message(
            self.tr("No file manager could open the model folder. Open it yourself: {path}").format(path=path),
            (self.tr("Copy path"), lambda: QGuiApplication.clipboard().setText(path)),
        )

    @Slot(str, str)
    def _model_loading(self, kind: str, precision: str) -> None:
        self.loading = True
        self.precision_label.setText(status_text.precision_label(precision))
        self._show_status(lambda: status_text.loading(kind, precision))
        self._update_actions()

    @Slot(object)
    def _model_ready(self, info: ModelInfo) -> None:
        self.loading = False
        if not info.switched:  # a precision switch does not look at the store: keep what the Models dialog said
            self.available_pairs = info.pairs
        self._apply_pair()
        self.model_panel.clear()
        self._retrying = False
        self.precision_label.setText(status_text.precision_label(info.precision))
        broken, self._fallback_from = self._fallback_from, ""
        if broken:
            self._show_status(
                lambda: self.tr(
                    "Using the {p} model because the {broken} model is damaged; the Precision setting is now {p}."
                ).format(p=status_text.precision_label(info.precision), broken=status_text.precision_label(broken))
            )
        elif not self.translating:
            self._show_status(
                lambda: status_text.loaded(info.model_id, info.precision, info.load_seconds, info.switched)
            )
        self._update_actions()

    @Slot(object)
    def _model_failed(self, problem: ModelProblem) -> None:
        self.loading = False  # the controller already dropped the model and stopped translating
        self.available_pairs = problem.pairs
        self._apply_pair()
        self._fallback_from = ""
        again, self._retrying = self._retrying, False
        self.model_panel.show_problem(problem, again=again)
        self.precision_label.clear()
        self._show_status(lambda: self.tr("No translation model: see the message above."))
        self._update_actions()

    @Slot(str, object)
    def _switch_failed(self, precision: str, problem: ModelProblem) -> None:
        """The other precision would not load; the old one still runs, and the setting goes back to it."""
        self.loading = False
        running = self.model.precision if self.model is not None else ""
        if problem.issues:
            why = " ".join([*problem_text.describe_all(problem.issues, 3), problem_text.fix(problem.issues)])
        else:
            why = problem_text.internal_error()
        self.notice.show_message(
            self.tr("Could not switch to {p}: {why} Still using {old}.").format(
                p=status_text.precision_label(precision), why=why, old=status_text.precision_label(running)
            )
        )
        if running:
            self.precision_label.setText(status_text.precision_label(running))
            self._show_status(lambda: self.tr("Still using {p}.").format(p=status_text.precision_label(running)))
            self.settings.set(Key.PRECISION, running)
        self._update_actions()

    @Slot()
    def _show_settings_notices(self) -> None:
        for notice in self.settings.take_notices():
            self.notice.show_message(notice)

    @Slot(str)
    def _worker_error(self, message: str) -> None:
        self.notice.show_message(message)
        if self.model is not None:  # the worker kept the model it had
            self.precision_label.setText(status_text.precision_label(self.model.precision))
        self.loading = False
        self._update_actions()

    # ---- translating ---------------------------------------------------------------------------------------

    @Slot()
    def translate(self) -> None:
        """Translate the whole source pane; a request already running is cancelled (the latest wins)."""
        if self.language.check() or self.problem is not None:  # a switch translates in the new direction
            return
        text = self.source_pane.text()  # the copy shared with the count, the autosave and the controller
        if not text.strip():
            self.cancel()
            self.target.clear()
            pair = self.pair
            if pair is None:
                self._show_status(lambda: self.tr("Nothing to translate: type or paste text on the left."))
            else:
                self._show_status(
                    lambda: self.tr("Nothing to translate: type or paste {language} text on the left.").format(
                        language=pair_text.language_name(pair.source)
                    )
                )
            return
        self.requests.request(text)

    @Slot(int)
    def _requested(self, request_id: int) -> None:
        """A new request replaces what the pane shows (also a redo after a settings change)."""
        self.target.clear()
        self.target_pane.begin_stream()
        self.source_pane.clear_sentences()
        if self._history_note:
            self._history_note = False
            self.target_pane.set_note("")
        if self.loading or self.model is None:
            self._show_status(lambda: self.tr("Waiting for the model to load; your text will be translated next."))
        else:
            self._show_status(lambda: self.tr("Translating…"))

    @Slot()
    def cancel(self) -> None:
        """Stop now and keep what is already translated."""
        self.requests.cancel()

    @Slot(int)
    def _translation_started(self, request_id: int) -> None:
        self.target.clear()  # also after a restart caused by a precision switch
        self.target_pane.begin_stream()
        self.progress.hide()
        self._show_status(lambda: self.tr("Translating…"))

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
        if len(result.sentences) > _ALIGN_LATER:  # a huge paste: the source's side on the next turn of the loop
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
        if self.requests.last_result is not result or self._closed:
            return
        self.source_pane.set_sentences(result.sentences if self.target_pane.ranges.items else [], source)
        self.alignment.refresh()

    @Slot(int, str)
    def _translation_failed(self, request_id: int, message: str) -> None:
        if message == NO_MODEL:
            self._show_status(lambda: self.tr("No translation model is loaded."))
            return
        self._show_status(lambda: self.tr("Translation failed."))
        if message.startswith(INTERNAL):  # a bug: worded for a person, the raw detail goes to the log
            print(f"qiao: translation failed: {message.removeprefix(INTERNAL)}", file=sys.stderr)
            self.notice.show_message(
                self.tr(
                    "Translation failed because of an unexpected error in the engine. Try again; if it keeps "
                    "failing, build or download the model again."
                )
            )
            return
        self.notice.show_message(self.tr("Translation failed: {error}").format(error=message))

    def _size_progress(self) -> None:
        """Wide enough for "1000 / 1000 sentences" at its largest value, so the text never wraps or clips."""
        top = max(self.progress.maximum(), 10)
        text = self.progress.format().replace("%v", str(top)).replace("%m", str(top)).replace("%p", "100")
        metrics = self.progress.fontMetrics()
        self.progress.setFixedWidth(metrics.horizontalAdvance(text) + 2 * metrics.height())

    @Slot(bool)
    def _translating_changed(self, on: bool) -> None:
        if not on:
            self.progress.hide()
            self.target_pane.end_stream()
        self._update_actions()

    def _update_actions(self) -> None:
        usable = self.problem is None
        self.translate_action.setEnabled(usable)
        self.translate_button.setEnabled(usable)
        self.cancel_action.setEnabled(self.translating)
        self.cancel_button.setEnabled(self.translating)
        self._update_copy()
        self.live_action.setChecked(self.settings.get(Key.LIVE_TRANSLATE))
        self.stacked_action.setChecked(self.settings.get(Key.STACKED))
        self.underline_action.setChecked(self.settings.get(Key.CONFIDENCE_UNDERLINE))
        self.sync_scroll_action.setChecked(self.settings.get(Key.SYNC_SCROLL))

    @Slot()
    def _update_copy(self) -> None:
        has_result = self.target.document().characterCount() > 1
        self.copy_button.setEnabled(has_result)
        self.copy_action.setEnabled(has_result)

    # ---- editing -------------------------------------------------------------------------------------------

    @Slot()
    def _source_changed(self) -> None:
        self.autosave.schedule()
        self.requests.source_changed()

    @Slot()
    def _typed_while_streaming(self) -> None:
        """A key pressed in the translation while it is written: nothing is typed (the model's text and the
        user's are never mixed); say when it can be edited."""
        if self.translating:
            self._show_status(lambda: self.tr("The translation is still being written; edit it once it is done."))

    def show_history_entry(self, entry: HistoryEntry) -> None:
        """Show a kept translation as it was (its source, and its output with the user's edits and choices),
        without translating: as a restored session is, current with the present settings. Its sentences' edits
        go back into the session's memory, so translating it again keeps them."""
        self.requests.reset()
        editor = self.source
        editor.setUndoRedoEnabled(False)
        with self.language.paused():  # shown as it was, in its own direction, not translated again
            editor.setPlainText(entry.source)
        editor.setUndoRedoEnabled(True)
        editor.moveCursor(QTextCursor.MoveOperation.End)
        self.requests.adopt(entry.source, entry.output)
        self.target.setPlainText(entry.output)
        for record in entry.sentences:
            own = record.edited if record.edited is not None else record.chosen
            if own is not None:
                self.target_pane.edits.remember(record.source, own, KeptContext(entry.pair, entry.variant))
        self.target_pane.set_note(self.tr("From history"), self.tr("Reopened from the history; not translated again."))
        self._history_note = True
        self._show_status(lambda: self.tr("Reopened from the history."))
        self._update_actions()

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
            self._apply_orientation()
        elif key in (Key.CONFIDENCE_UNDERLINE, Key.CONFIDENCE_THRESHOLD, Key.SYNC_SCROLL):
            self._apply_review_settings()
        elif key is Key.LIVE_TRANSLATE:
            self.live_check.blockSignals(True)
            self.live_check.setChecked(value)
            self.live_check.blockSignals(False)
        self._update_actions()

    def _apply_review_settings(self) -> None:
        self.target_pane.set_review_options(
            self.settings.get(Key.CONFIDENCE_UNDERLINE), self.settings.get(Key.CONFIDENCE_THRESHOLD)
        )
        self.alignment.sync = self.settings.get(Key.SYNC_SCROLL)

    def _apply_fonts(self) -> None:
        """Each pane's font follows its language's script (the CJK faces on whichever pane is Chinese)."""
        size = self.settings.get(Key.FONT_SIZE)
        self.source_pane.apply_font(size)
        self.target_pane.apply_font(size)

    def _zoom(self, step: int) -> None:
        size = self.settings.get(Key.FONT_SIZE) + step
        try:
            self.settings.set(Key.FONT_SIZE, size)
        except ValueError:
            QApplication.beep()

    def _apply_orientation(self) -> None:
        stacked = self.settings.get(Key.STACKED)
        self.splitter.setOrientation(Qt.Orientation.Vertical if stacked else Qt.Orientation.Horizontal)

    def _restore_window_state(self) -> None:
        geometry = self.settings.get(Key.WINDOW_GEOMETRY)
        if not (geometry and self.restoreGeometry(QByteArray(geometry))):
            self.resize(1000, 620)
        splitter = self.settings.get(Key.SPLITTER_STATE)
        if splitter:
            self.splitter.restoreState(QByteArray(splitter))
            self._apply_orientation()  # the saved state carries an orientation; the setting decides

    def _show_status(self, render: Callable[[], str]) -> None:
        """Remember how to word the status, so it is re-worded if the interface language changes."""
        self._status = render
        self.status_label.setText(render())

    def status_message(self) -> str:
        return self.status_label.text()

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
        self.settings.set(Key.WINDOW_GEOMETRY, bytes(self.saveGeometry().data()))
        self.settings.set(Key.SPLITTER_STATE, bytes(self.splitter.saveState().data()))
        self.settings.sync()
        self.engine.shutdown()
