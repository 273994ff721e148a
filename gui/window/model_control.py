"""The window's side of the model: loading, ready, failed or switched (the status bar, the precision label, the model
panel and its "Try again" / "Use … instead" / "Models…"), which pairs are installed (so ⇄ is offered only where the
other direction exists), the Models dialog, and which installed model translates the direction: the model indicator
beside the precision label names the model in use and its menu chooses among the direction's installed models
(quality, size, speed, licence); the choice is saved per direction (Key.MODEL_EN_ZH / MODEL_ZH_EN, read by the engine's
store too) and loads at once on the worker. A direction whose best installed model scores below the best one Qiao
knows of gets a one-time notice whose "Download" fetches it and switches to it (engine.store.choice.better_available;
no server asked before the user accepts).
A model that cannot write the chosen Chinese script is said once too (gui.window.script_notice), and the menu says
which scripts each model writes.

It follows the worker's model signals after the request controller has (so the controller's model and problem are
already current) and asks the controller to load; the window gives it the widgets it paints and a few callbacks.
Its strings keep the "MainWindow" translation context they had when the window did this itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QCoreApplication, QObject, Qt, Slot
from PySide6.QtGui import QAction, QGuiApplication
from PySide6.QtWidgets import QLabel, QMenu, QStatusBar, QToolButton, QWidget

from engine.languages import LanguagePair
from engine.store.choice import better_available, by_quality, pick, usable_for
from gui import pair_text, problem_text, status_text
from gui.models import model_text
from gui.models.installed_list import InstalledList
from gui.models.model_status import ModelStatusPanel
from gui.models.model_tasks import ModelStore
from gui.models.models_dialog import ModelsDialog
from gui.notice_bar import NoticeBar
from gui.settings import MODEL_CHOICE, Key, Settings
from gui.window.request_controller import RequestController
from gui.window.script_notice import ScriptNotice
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
        self.models: list[Any] = []  # the installed models, as last listed (engine.store.installed.InstalledModel)
        self._fallback_said: set[tuple[str, str]] = set()  # (pair key, chosen name) said gone or damaged this start
        self._listing = InstalledList(model_store, model_dir, self)
        self._listing.listed.connect(self.models_listed)
        self.model_menu = QMenu(host)
        self.model_menu.setObjectName("modelMenu")
        self.model_menu.aboutToShow.connect(self.fill_model_menu)
        self.model_button = QToolButton(host)  # the model indicator
        self.model_button.setObjectName("modelButton")
        self.model_button.setAutoRaise(True)
        self.model_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.model_button.setMenu(self.model_menu)
        policy = self.model_button.sizePolicy()
        policy.setRetainSizeWhenHidden(True)  # the status bar keeps one height: a restored splitter keeps its sizes
        self.model_button.setSizePolicy(policy)
        # Text from the start, so the hidden button already has the height it will have once it names a model (an
        # empty tool button is a pixel shorter: the status bar, and a restored splitter, would shift when it fills).
        self.model_button.setText(QCoreApplication.translate("MainWindow", "Model"))
        self.model_button.hide()
        bar = precision_label.parentWidget()
        if isinstance(bar, QStatusBar):  # beside the precision label, where the window put it
            bar.addPermanentWidget(self.model_button)
        # "<model> writes Simplified only", once per model and script, with "Use <model>" or "Models…"
        self.script_notice = ScriptNotice(
            self,
            requests,
            settings,
            notice,
            models=self.direction_models,
            loaded=self.loaded_model,
            choose=self.choose_model,
            open_models=self.open_models,
        )

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
    def open_models(self, hint: str = "") -> ModelsDialog:
        dialog = ModelsDialog(
            self.model_store, self.model_dir, self.host, in_use=self.used_paths, settings=self.settings
        )
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.models_changed.connect(self.models_changed)
        dialog.removed.connect(self._model_removed)
        dialog.replaced.connect(self._model_replaced)
        dialog.use_requested.connect(self.choose_model)
        if hint:
            dialog.message.setText(hint)
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
        before = {str(m.path) for m in self.models}
        self.models_listed(models)
        if self.requests.problem is not None and not self.loading and self.direction in self.available_pairs:
            self.load_model()
        else:
            self.use_new_best(before)

    def use_new_best(self, before: set[str]) -> None:
        """A model just installed for the direction shown that is now its best (no choice saved: the one every
        later start and the CLI use) is loaded at once, and the window says so; a saved choice is left alone."""
        key = self.direction
        info = self.requests.model
        if self.model_dir or self.loading or info is None or self._choice(key) is not None:
            return
        best = pick(self.models, key)
        if best is None or str(best.path) in before or _same(best.path, info.bundle_dir):
            return
        self.notice.show_message(
            QCoreApplication.translate(
                "MainWindow",
                "{name} now translates {languages}: it has the best published quality of the installed models. "
                "Choose another with the model indicator in the status bar.",
            ).format(name=best.name, languages=pair_text.arrow(key))
        )
        self.load_model()

    # ---- several models of one direction --------------------------------------------------------------------

    @Slot(object)
    def models_listed(self, models: list) -> None:
        """A fresh list of the installed models: the indicator follows it, and a better model may be offered."""
        self.models = list(models)
        self.update_indicator()
        self.say_fallback()
        self.offer_better()
        self.script_notice.check()

    def say_fallback(self) -> None:
        """Once per start and direction: the model chosen for a direction is gone (moved or deleted outside Qiao)
        or damaged, so another one translates (engine.store.choice.pick falls back to it); the window says which,
        with "Models…" to repair or choose. The choice itself is kept: the model may come back."""
        if self.model_dir:
            return
        for key in MODEL_CHOICE:
            chosen = self._choice(key)
            if chosen is None or (key, chosen) in self._fallback_said:
                continue
            other = pick(self.models, key, chosen)  # the chosen one when it is usable, else the best
            if other is None or chosen in (other.name, other.model_id):
                continue  # the choice is used, or nothing translates the direction (the model panel says that)
            broken = next((m for m in self.models if chosen in (m.name, m.model_id) and m.problem), None)
            if broken is not None:
                text = QCoreApplication.translate(
                    "MainWindow",
                    "The model chosen for {languages}, {name}, is damaged ({problem}); Qiao uses {other} instead. "
                    "Repair it in Models…, or choose another with the model indicator in the status bar.",
                ).format(languages=pair_text.arrow(key), name=chosen, problem=broken.problem, other=other.name)
            else:
                text = QCoreApplication.translate(
                    "MainWindow",
                    "The model chosen for {languages}, {name}, is not installed any more; Qiao uses {other} instead. "
                    "Import it again in Models…, or choose another with the model indicator in the status bar.",
                ).format(languages=pair_text.arrow(key), name=chosen, other=other.name)
            self._fallback_said.add((key, chosen))
            self.notice.show_message(text, (QCoreApplication.translate("MainWindow", "Models…"), self.open_models))

    def refresh_models(self) -> None:
        """List the installed models again, off the UI thread (models_listed follows)."""
        self._listing.refresh()

    def direction_models(self, pair_key: str | None = None) -> list[Any]:
        """The usable installed models of a direction (default: the one shown), best published quality first."""
        return by_quality(usable_for(self.models, pair_key or self.direction))

    def loaded_model(self) -> Any | None:
        """The installed model that is loaded now, as listed; None when none is or it is not in the list."""
        info = self.requests.model
        if info is None:
            return None
        return next((m for m in self.models if _same(m.path, info.bundle_dir)), None)

    def used_paths(self, models: list) -> set[str]:
        """The bundle each direction uses: the loaded one for the direction shown, else the saved choice or the
        best (engine.store.choice.pick, as the worker's load would)."""
        used: set[str] = set()
        info = self.requests.model
        for key in dict.fromkeys(m.pair.key for m in models if getattr(m, "pair", None) is not None):
            if info is not None and info.pair is not None and info.pair.key == key:
                loaded = next((m for m in models if _same(m.path, info.bundle_dir)), None)
                if loaded is not None:
                    used.add(str(loaded.path))
                continue
            chosen = pick(models, key, self._choice(key))
            if chosen is not None:
                used.add(str(chosen.path))
        return used

    def script_note(self, pair_key: str | None = None) -> str:
        """For the quick popup: "<model> writes Simplified only, not Traditional" when the model that translates
        `pair_key` (None: the direction shown) cannot write the chosen script; "" when it can or the target has none.
        The window says it in its notice bar (gui.window.script_notice); the popup, under the translation."""
        key = pair_key or self.direction
        info = self.requests.model
        if info is not None and info.pair is not None and info.pair.key == key:
            model = self.loaded_model()
            pair, name = info.pair, model.name if model is not None else Path(info.bundle_dir).name
        else:
            model = pick(self.models, key, self._choice(key))
            if model is None or getattr(model, "pair", None) is None:
                return ""
            pair, name = model.pair, model.name
        wanted = self.settings.get(Key.VARIANT)
        if not pair_text.script_limit(name, pair, wanted):
            return ""
        return QCoreApplication.translate("QuickPopup", "{model} writes {scripts}, not {wanted}.").format(
            model=name, scripts=pair_text.scripts_text(pair), wanted=pair_text.variant_name(pair, wanted)
        )

    def _choice(self, pair_key: str) -> str | None:
        key = MODEL_CHOICE.get(pair_key)
        return (self.settings.get(key) or None) if key is not None else None

    @Slot(object)
    def choose_model(self, model: Any) -> None:
        """Use `model` for its direction from now on: saved per direction (the engine's store reads it too), and
        loaded at once on the worker when it is the direction shown, translating the shown text again."""
        pair = getattr(model, "pair", None)
        key = MODEL_CHOICE.get(pair.key) if pair is not None else None
        if key is None or self.model_dir:
            return
        self.settings.set(key, model.name)
        self.settings.sync()  # before the worker's load reads the file
        self.update_indicator()
        if pair.key != self.direction:
            return
        info = self.requests.model
        if info is not None and _same(model.path, info.bundle_dir):
            return
        self.requests.swap(self.direction, self.requests.translated_source or "")

    def update_indicator(self) -> None:
        """The indicator names the model in use, with its quality, size, speed and licence in the tooltip."""
        info = self.requests.model
        model = self.loaded_model()
        if info is None and not self.direction_models():
            self.model_button.hide()
            return
        name = model.name if model is not None else (Path(info.bundle_dir).name if info is not None else "")
        self.model_button.setText(name or QCoreApplication.translate("MainWindow", "Model"))
        lines = [model_text.details(model)] if model is not None else []
        if self.model_dir:
            lines.append(QCoreApplication.translate("MainWindow", "Started with one model (--model)."))
        else:
            lines.append(QCoreApplication.translate("MainWindow", "Click to choose the model for this direction."))
        self.model_button.setToolTip("\n".join(lines))
        self.model_button.setAccessibleName(QCoreApplication.translate("MainWindow", "Translation model"))
        self.model_button.setAccessibleDescription(name)
        self.model_button.show()

    @Slot()
    def fill_model_menu(self) -> None:
        """The direction's installed models (the one in use checked) and "Models…"."""
        menu = self.model_menu
        menu.clear()
        title = menu.addAction(
            QCoreApplication.translate("MainWindow", "{languages} models").format(
                languages=pair_text.arrow(self.direction)
            )
        )
        title.setEnabled(False)
        info = self.requests.model
        models = self.direction_models()
        for model in models:
            action = menu.addAction(f"{model.name} — {model_text.summary(model)}")
            action.setCheckable(True)
            action.setChecked(info is not None and _same(model.path, info.bundle_dir))
            action.setToolTip(model_text.details(model))
            action.setEnabled(not self.model_dir)
            action.triggered.connect(lambda _checked=False, m=model: self.choose_model(m))
        if not models:
            none = menu.addAction(QCoreApplication.translate("MainWindow", "No model installed"))
            none.setEnabled(False)
        menu.setToolTipsVisible(True)
        menu.addSeparator()
        menu.addAction(QCoreApplication.translate("MainWindow", "Models…"), lambda: self.open_models())

    def offer_better(self) -> None:
        """Once per model: a notice that a better model than the installed ones exists for a direction, with a
        "Download" button that fetches it (the Models dialog reads the catalogue and downloads it on its task
        thread) and then uses it for that direction. Qiao knows the published scores, so no server is asked before
        the user accepts; closing the notice declines, and the model is not offered again."""
        if self.model_dir:
            return
        offered = set(self.settings.get(Key.MODELS_OFFERED).split())
        keys = dict.fromkeys([self.direction, *(m.pair.key for m in self.models if getattr(m, "pair", None))])
        for key in keys:
            offer = better_available(self.models, key)
            if offer is None or offer.catalogue_id in offered:
                continue
            current = pick(self.models, key, self._choice(key))
            text = QCoreApplication.translate(
                "MainWindow",
                "A better {languages} model is available: {name} ({score}, against {current_score} for {current}). "
                "Download it to use it for {languages}, or close this notice: it is not offered again.",
            ).format(
                languages=pair_text.arrow(key),
                name=offer.name,
                score=offer.quality.short(),
                current_score=model_text.quality_text(current) if current is not None else "",
                current=current.name if current is not None else "",
            )
            self.notice.show_message(
                text,
                (
                    QCoreApplication.translate("MainWindow", "Download {languages} model").format(
                        languages=pair_text.arrow(key)
                    ),
                    lambda t=text, i=offer.catalogue_id: self.get_better(i, t),
                ),
            )
            offered.add(offer.catalogue_id)
            self.settings.set(Key.MODELS_OFFERED, " ".join(sorted(offered)))

    def get_better(self, catalogue_id: str, text: str = "") -> ModelsDialog:
        """The offer accepted: the Models dialog downloads `catalogue_id` (off the UI thread, with its progress and
        Cancel), and once it is installed it is chosen for its direction and loaded."""
        if text:
            self.notice.withdraw(text)
        dialog = self.open_models()
        dialog.fetched.connect(self.choose_model)
        dialog.get_model(catalogue_id)
        return dialog

    @Slot(str)
    def _model_removed(self, path: str) -> None:
        """A removed model that a direction was chosen to use is no longer the choice (the best installed one is used
        again, and a later import of the same name does not take the direction back silently); the model in use
        removed, the window says so and loads the direction's next one."""
        name = Path(path).name
        forgot = [key for key in MODEL_CHOICE.values() if self.settings.get(key) == name]
        for key in forgot:
            self.settings.reset(key)
        if forgot:
            self.settings.sync()  # before the worker's load reads the file
        model = self.requests.model
        if model is None or Path(model.bundle_dir) != Path(path):
            return
        self.notice.show_message(
            QCoreApplication.translate(
                "MainWindow", "The model in use was removed. Qiao is looking for another {pair} model."
            ).format(pair=pair_text.arrow(self.direction))
        )
        self.load_model()

    @Slot(str)
    def _model_replaced(self, path: str) -> None:
        """An import or download replaced an installed model's folder: the files the worker has open are gone. The
        model in use is loaded again on the worker (the window says so); one another direction uses (the quick
        popup may have it loaded beside) is dropped by the same reload."""
        model = self.requests.model
        in_use = model is not None and _same(model.bundle_dir, path)
        if not in_use and not any(_same(used, path) for used in self.used_paths(self.models)):
            return
        if in_use:
            self.notice.show_message(
                QCoreApplication.translate(
                    "MainWindow",
                    "The model in use, {name}, was replaced by the one just installed; Qiao is loading the new one.",
                ).format(name=Path(path).name)
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
            self.refresh_models()
        self.update_indicator()
        self._pair_changed()
        self.script_notice.check()
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
        self.refresh_models()  # the indicator then offers the direction's other models, if any
        self.update_indicator()
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


def _same(a: Any, b: Any) -> bool:
    """Whether two bundle paths name one folder (as listed and as loaded may differ in spelling)."""
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return str(a) == str(b)
