"""Start-up, and the GUI's composition root: the QApplication, translations, theme, the window on the real engine
(gui.worker.engine's `local_engine`, the one place that chooses it) and the features around the window. `qiao` (no
arguments) calls `run()`."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QTimer, Slot
from PySide6.QtWidgets import QApplication

from engine import paths
from gui.desktop.api_host import ApiHost
from gui.desktop.api_service import WindowTranslationService
from gui.desktop.desktop import Desktop
from gui.display import display_problem
from gui.i18n import install_translators
from gui.icons import app_icon
from gui.settings import Key, Settings
from gui.theme import apply_theme
from gui.window.main_window import MainWindow
from gui.worker.engine import local_engine

if TYPE_CHECKING:
    from gui.desktop.single_instance import InstanceRequest
    from gui.quick.controller import QuickSettings, QuickTranslate
    from gui.quick.shortcut import ShortcutResult
    from gui.worker.model_load import EnginePort

DESKTOP_FILE_NAME = "qiao"  # resources/linux/qiao.desktop: lets Wayland/X11 docks match the window to its icon


def create_app(argv: Sequence[str] | None = None) -> QApplication:
    """The process' QApplication (reused if one exists, as under pytest-qt)."""
    app = QApplication.instance()
    if not isinstance(app, QApplication):
        app = QApplication(list(argv if argv is not None else sys.argv[:1]))
    app.setApplicationName(paths.APP_NAME)
    app.setOrganizationName(paths.APP_NAME)
    app.setApplicationDisplayName("Qiao")
    app.setDesktopFileName(DESKTOP_FILE_NAME)
    app.setWindowIcon(app_icon())
    return app


def create_window(model_dir: str | None = None, engine: EnginePort | None = None) -> MainWindow:
    """Settings, language and theme applied, window built (not shown) on `engine`: the engine on this machine unless
    one is given (tests)."""
    app = create_app()
    settings = Settings(paths.settings_file())
    install_translators(settings.get(Key.UI_LANGUAGE))
    apply_theme(app, settings.get(Key.THEME))
    return MainWindow(settings, paths.autosave_file(), model_dir, engine=engine or local_engine())


class _StartupProbe(QObject):
    """`QIAO_STARTUP_PROBE=FILE`: appends "window <time>" once the window is on screen and painted, and "ready <time>"
    (or "failed <time>") once the window has a loaded model, as wall-clock seconds. packaging/smoke_test.py uses it to
    measure start-up against the release budgets; it is inert unless the variable is set."""

    def __init__(self, path: str, window: MainWindow) -> None:
        super().__init__(window)
        self.path = path
        self.window = window
        self.handle = window.windowHandle()
        self.handle.installEventFilter(self)
        self.timer = QTimer(self)  # polls the window's state (5 ms): no race with a model that loaded already
        self.timer.timeout.connect(self.poll)
        self.timer.start(5)

    def mark(self, what: str) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(f"{what} {time.time():.6f}\n")

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Expose and self.handle.isExposed():
            self.handle.removeEventFilter(self)
            QTimer.singleShot(0, lambda: self.mark("window"))  # after this expose is painted and flushed
        return False

    @Slot()
    def poll(self) -> None:
        if self.window.model is not None or self.window.problem is not None:
            self.timer.stop()
            self.mark("ready" if self.window.model is not None else "failed")


class _AfterFirstPaint(QObject):
    """Runs `callback` once, a turn after the window's first expose (so after its first paint), or a turn after
    start when the window starts hidden (in the tray). A plain `singleShot(0)` after `show()` runs before the X
    server has mapped the window: work put there (~0.25 s: the popup's controller, the glossary, the history
    database, measured) delayed the first paint by as much. `FALLBACK_MS` covers a platform that never exposes."""

    FALLBACK_MS = 1000

    def __init__(self, window: MainWindow, callback: Callable[[], None]) -> None:
        super().__init__(window)
        self.callback: Callable[[], None] | None = callback
        self.handle = window.windowHandle() if window.isVisible() else None
        if self.handle is None or self.handle.isExposed():  # hidden (tray), or painted already: no expose to wait for
            QTimer.singleShot(0, self, self.fire)
            return
        self.handle.installEventFilter(self)
        QTimer.singleShot(self.FALLBACK_MS, self, self.fire)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Expose and self.handle is not None and self.handle.isExposed():
            QTimer.singleShot(0, self, self.fire)
        return False

    @Slot()
    def fire(self) -> None:
        callback, self.callback = self.callback, None
        if self.handle is not None:
            self.handle.removeEventFilter(self)
            self.handle = None
        if callback is not None:
            callback()


def after_first_paint(window: MainWindow, callback: Callable[[], None]) -> None:
    """`callback` once the window is on screen (see _AfterFirstPaint): start-up work nothing needs sooner."""
    _AfterFirstPaint(window, callback)


def attach_desktop(window: MainWindow, **kwargs: object) -> Desktop:
    """The tray, close-to-tray, autostart and the API around `window`; the API's service is the window's worker."""

    def service() -> WindowTranslationService:
        return WindowTranslationService(window.engine.worker, lambda: window.model.pair if window.model else None)

    api = ApiHost(window.settings, service)
    return Desktop(window, window.settings, api=api, **kwargs)  # type: ignore[arg-type]


# Settings the quick-translate controller follows (the direction decides whether watching wants English).
QUICK_KEYS = frozenset(
    {Key.QUICK_SHORTCUT, Key.COPY_TWICE, Key.CLIPBOARD_WATCH, Key.CLIPBOARD_WATCH_PAUSED, Key.DIRECTION}
)


def quick_settings(window: MainWindow) -> QuickSettings:
    """The quick-translate settings as the controller takes them, from the window's settings and loaded pair."""
    from gui.quick.controller import QuickSettings

    settings = window.settings
    pair = window.model.pair if window.model is not None else None
    return QuickSettings(
        shortcut=settings.get(Key.QUICK_SHORTCUT),
        copy_twice=settings.get(Key.COPY_TWICE),
        clipboard_watch=settings.get(Key.CLIPBOARD_WATCH),
        clipboard_watch_paused=settings.get(Key.CLIPBOARD_WATCH_PAUSED),
        english_only=pair is None or pair.source.code == "en",
    )


def attach_quick(window: MainWindow, desktop: Desktop, **kwargs: object) -> QuickTranslate:
    """The quick-translate popup (global shortcut, copy twice, clipboard watching) on the worker's popup channel,
    with the window's current options; the tray and later `qiao popup` starts reach it through `desktop.quick`.
    `kwargs` go to QuickTranslate (tests pass a shortcut backend)."""
    from gui.quick.controller import QuickTranslate

    def directions() -> tuple[str, tuple[str, ...]]:  # the popup translates in the direction that reads its text
        return window.direction, () if window.model_dir else window.available_pairs

    quick = QuickTranslate(
        window.engine.worker,
        window.requests.options,
        quick_settings(window),
        directions=directions,
        script_note=window.model_control.script_note,
        parent=window,
        **kwargs,  # type: ignore[arg-type]
    )
    desktop.quick = quick
    quick.open_in_window.connect(desktop.translate_in_window)
    window.settings.changed.connect(lambda key: quick.apply(quick_settings(window)) if key in QUICK_KEYS else None)
    quick.shortcut_changed.connect(lambda result: _shortcut_notice(desktop, result))
    if quick.shortcut_result is not None:
        _shortcut_notice(desktop, quick.shortcut_result)
    return quick


def attach_records(window: MainWindow) -> None:
    """The user's own records, from their files: the glossary (Tools → Glossary…, applied to every request while
    on; a change redoes what is shown) and the history (View → History, Ctrl+H; the translation memory behind it)."""
    from gui.records.glossary_dialog import attach_glossary
    from gui.records.glossary_store import GlossaryStore
    from gui.records.history_panel import install_history

    store = GlossaryStore(parent=window)
    attach_glossary(window, store)
    store.changed.connect(window.requests.glossary_changed)
    install_history(window)


def _shortcut_notice(desktop: Desktop, result: ShortcutResult) -> None:
    """A shortcut another application holds, or one that is not valid, is said once in the window's notice bar;
    "unsupported" (Wayland without the portal) is said in Settings → Desktop, not at every start."""
    if result.status in ("conflict", "invalid"):
        desktop.notice(result.reason)  # the reason is worded for a person, in the UI language


def run(model_dir: str | None = None, request: InstanceRequest | None = None, *, background: bool = False) -> int:
    """Open the window and run until Qiao quits; returns the exit code. `model_dir` is `qiao --model DIR`.

    When a Qiao of this user already runs, `request` (default: show its window) is handed to it and this process
    ends at once with 0: the engine is loaded once. `background` (autostart): start in the tray, where there is one.
    """
    problem = None if QApplication.instance() is not None else display_problem()
    if problem:  # before QApplication: Qt's own answer to "no display" is an abort that blames the installation
        print(problem, file=sys.stderr)
        return 1
    from gui.desktop.single_instance import InstanceRequest, claim

    app = create_app()
    request = request or InstanceRequest("show")
    server = claim(request)
    if server is None:
        print("qiao: handed to the Qiao already running", file=sys.stderr)
        return 0
    window = create_window(model_dir)
    desktop = attach_desktop(window)
    server.setParent(window)
    server.requested.connect(desktop.handle)

    @Slot()
    def stop_quick() -> None:  # first, as before the window's engine stops; it exists once the window is painted
        shutdown = getattr(desktop.quick, "shutdown", None)
        if shutdown is not None:
            shutdown()

    app.aboutToQuit.connect(stop_quick)
    app.aboutToQuit.connect(window.shutdown)
    app.aboutToQuit.connect(desktop.shutdown)
    app.aboutToQuit.connect(server.close)
    in_tray = desktop.tray is not None and (background or request.action == "popup")
    if not in_tray:
        window.show()
    desktop.start()

    def rest() -> None:
        attach_quick(window, desktop)  # the popup's controller (~0.11 s), then the glossary and history (~0.15 s)
        attach_records(window)
        if request.action != "show":
            desktop.handle(request)

    after_first_paint(window, rest)
    probe = paths.startup_probe_file()
    if probe:
        _StartupProbe(probe, window)
    return app.exec()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `qiao-gui` gui-script."""
    parser = argparse.ArgumentParser(prog="qiao-gui", description="Qiao: offline English ⇄ Chinese translator")
    parser.add_argument("--model", metavar="DIR", help="model bundle folder (default: search the usual places)")
    args, _qt_args = parser.parse_known_args(list(argv) if argv is not None else None)
    return run(args.model)


if __name__ == "__main__":
    raise SystemExit(main())
