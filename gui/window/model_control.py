"""The window's side of the model: loading, ready, failed or switched (the status bar, the precision label, the model
panel and its "Try again" / "Use … instead" / "Models…"), which pairs are installed (so ⇄ is offered only where the
other direction exists), and the Models dialog.

It follows the worker's model signals after the request controller has (so the controller's model and problem are
already current) and asks the controller to load; the window gives it the widgets it paints and a few callbacks.
Its strings keep the "MainWindow" translation context they had when the window did this itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject, Qt, Slot
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QLabel, QToolButton, QWidget

from engine.languages import LanguagePair
from gui import pair_text, problem_text, status_text
from gui.models.model_status import ModelStatusPanel
from gui.models.model_tasks import ModelStore
from gui.models.models_dialog import ModelsDialog
from gui.notice_bar import NoticeBar
from gui.settings import Key, Settings
from gui.window.request_controller import RequestController
from gui.worker.model_load import ModelInfo, ModelProblem
from gui.worker.scheduler import TranslationWorker

StatusRender = Callable[[], str]


class ModelControl(QObject):
    """Model state for the window: `loading`, `available_pairs`, the pair and direction shown, and the slots that
    keep the status, the precision label, the model panel and the swap action current."""

    def __init__(
        self,
        host: QWidget,
        requests: RequestController,
        settings: Settings,
        *,
        notice: NoticeBar,
        model_panel: ModelStatusPanel,
        precision_label: QLabel,
        swap_action: QAction,
        swap_button: QToolButton,
        model_dir: str | None,
        model_store: ModelStore | None,
        show_status: Callable[[StatusRender], None],
        pair_changed: Callable[[], None],
        update_actions: Callable[[], None],
    ) -> None:
        super().__init__(host)
        self.host = host  # the Models dialog's parent
        self.requests = requests
        self.settings = settings
        self.notice, self.model_panel, self.precision_label = notice, model_panel, precision_label
        self.swap_action, self.swap_button = swap_action, swap_button  # offered only when the reverse is installed
        self.model_dir = model_dir
        self.model_store = model_store  # the Models dialog's store (None: the engine's)
        self._show_status = show_status
        self._pair_changed = pair_changed  # headings, fonts and title follow the pair (the window's)
        self._update_actions = update_actions
        self.available_pairs: tuple[str, ...] = ()  # pair keys of the usable installed bundles
        self.loading = False
        self._retrying = False  # a "Try again" load is under way
        self._fallback_from = ""  # the broken precision the user replaced with "Use … instead"
        self.model_panel.retry_requested.connect(self.retry_model)
        self.model_panel.models_requested.connect(self.open_models)
        self.model_panel.use_precision.connect(self.use_precision)
        self.model_panel.open_failed.connect(self._open_folder_failed)

    def follow(self, worker: TranslationWorker) -> None:
        """Listen to the worker's model reports (after the request controller and the window's translation slots)."""
        worker.switch_failed.connect(self._switch_failed)
        worker.model_loading.connect(self._model_loading)
        worker.model_ready.connect(self._model_ready)
        worker.model_failed.connect(self._model_failed)
        worker.error.connect(self._worker_error)

    @property
    def pair(self) -> LanguagePair | None:
        """The loaded bundle's pair; before one loads, the pair the direction setting asks for."""
        model = self.requests.model
        if model is not None and model.pair is not None:
            return model.pair
        return pair_text.expected_pair(self.settings.get(Key.DIRECTION))

    @property
    def direction(self) -> str:
        """The pair key shown now ("en-zh")."""
        pair = self.pair
        return pair.key if pair is not None else self.settings.get(Key.DIRECTION)

    def update_swap(self) -> None:
        """⇄ is offered only when a bundle for the reverse direction is installed; otherwise its tooltip says why."""
        reverse = pair_text.reverse_key(self.direction)
        if self.model_dir:
            usable = False
            why = QCoreApplication.translate(
                "MainWindow", "Qiao was started with one model folder (--model), so it cannot swap to another model."
            )
        elif reverse not in self.available_pairs:
            usable = False
            why = QCoreApplication.translate(
                "MainWindow", "No {pair} model is installed; add one with File → Models…"
            ).format(pair=pair_text.arrow(reverse))
        else:
            usable = True
            why = QCoreApplication.translate("MainWindow", "Swap the languages and the texts (Ctrl+Shift+S)")
        self.swap_action.setEnabled(usable)
        self.swap_action.setToolTip(why)
        self.swap_button.setToolTip(why)
        self.swap_button.setAccessibleName(QCoreApplication.translate("MainWindow", "Swap languages"))
        self.swap_button.setAccessibleDescription(why)

    @Slot()
    def open_models(self) -> ModelsDialog:
        dialog = ModelsDialog(self.model_store, self.model_dir, self.host)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.models_changed.connect(self.models_changed)
        dialog.removed.connect(self._model_removed)
        dialog.open()
        return dialog

    @Slot(object)
    def models_changed(self, models: list) -> None:
        """After an import, download or removal: the swap follows what is installed, and a model that now exists
        for the direction shown is loaded if none was."""
        self.available_pairs = tuple(
            sorted({m.pair.key for m in models if getattr(m, "pair", None) is not None and not m.problem})
        )
        self.update_swap()
        if self.requests.problem is not None and not self.loading and self.direction in self.available_pairs:
            self.load_model()

    @Slot(str)
    def _model_removed(self, path: str) -> None:
        model = self.requests.model
        if model is None or Path(model.bundle_dir) != Path(path):
            return
        self.notice.show_message(
            QCoreApplication.translate(
                "MainWindow", "The model in use was removed. Qiao is looking for another {pair} model."
            ).format(pair=pair_text.arrow(self.direction))
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
        problem = self.requests.problem
        self._fallback_from = problem.precision if problem is not None else ""
        if self.settings.get(Key.PRECISION) == precision:
            self.load_model()
        else:
            self.settings.set(Key.PRECISION, precision)  # the settings reaction loads it (no model is loaded now)

    @Slot(str)
    def _open_folder_failed(self, path: str) -> None:
        self.notice.show_message(
            QCoreApplication.translate(
                "MainWindow", "No file manager could open the model folder. Open it yourself: {path}"
            ).format(path=path),
            (QCoreApplication.translate("MainWindow", "Copy path"), lambda: QGuiApplication.clipboard().setText(path)),
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
        self._pair_changed()
        self.model_panel.clear()
        self._retrying = False
        self.precision_label.setText(status_text.precision_label(info.precision))
        broken, self._fallback_from = self._fallback_from, ""
        if broken:
            self._show_status(
                lambda: QCoreApplication.translate(
                    "MainWindow",
                    "Using the {p} model because the {broken} model is damaged; the Precision setting is now {p}.",
                ).format(p=status_text.precision_label(info.precision), broken=status_text.precision_label(broken))
            )
        elif not self.requests.translating:
            self._show_status(
                lambda: status_text.loaded(info.model_id, info.precision, info.load_seconds, info.switched)
            )
        self._update_actions()

    @Slot(object)
    def _model_failed(self, problem: ModelProblem) -> None:
        self.loading = False  # the controller already dropped the model and stopped translating
        self.available_pairs = problem.pairs
        self._pair_changed()
        self._fallback_from = ""
        again, self._retrying = self._retrying, False
        self.model_panel.show_problem(problem, again=again)
        self.precision_label.clear()
        self._show_status(
            lambda: QCoreApplication.translate("MainWindow", "No translation model: see the message above.")
        )
        self._update_actions()

    @Slot(str, object)
    def _switch_failed(self, precision: str, problem: ModelProblem) -> None:
        """The other precision would not load; the old one still runs, and the setting goes back to it."""
        self.loading = False
        model = self.requests.model
        running = model.precision if model is not None else ""
        if problem.issues:
            why = " ".join([*problem_text.describe_all(problem.issues, 3), problem_text.fix(problem.issues)])
        else:
            why = problem_text.internal_error()
        self.notice.show_message(
            QCoreApplication.translate("MainWindow", "Could not switch to {p}: {why} Still using {old}.").format(
                p=status_text.precision_label(precision), why=why, old=status_text.precision_label(running)
            )
        )
        if running:
            self.precision_label.setText(status_text.precision_label(running))
            self._show_status(
                lambda: QCoreApplication.translate("MainWindow", "Still using {p}.").format(
                    p=status_text.precision_label(running)
                )
            )
            self.settings.set(Key.PRECISION, running)
        self._update_actions()

    @Slot(str)
    def _worker_error(self, message: str) -> None:
        self.notice.show_message(message)
        model = self.requests.model
        if model is not None:  # the worker kept the model it had
            self.precision_label.setText(status_text.precision_label(model.precision))
        self.loading = False
        self._update_actions()
