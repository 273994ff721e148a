"""Qiao on the desktop, around the window: the tray icon, close-to-tray, requests from later starts (single
instance), start with the system, and the local API setting.

The window knows only `window.desktop` (its closeEvent asks `close_requested`); everything else is wired here, so
the window stays about translating. The quick-translate popup (gui.quick) plugs in as `desktop.quick`: anything
with `trigger()` (read the selection) and `show_text(text)`. Until one is set, a popup request shows its text in
the window instead.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer, Slot
from PySide6.QtGui import QClipboard, QCloseEvent, QGuiApplication
from PySide6.QtWidgets import QApplication, QMainWindow

from gui.desktop import autostart
from gui.desktop.api_host import API_KEYS, NOT_BUILT, ApiHost
from gui.desktop.tray import TrayIcon, tray_available
from gui.icons import app_icon
from gui.settings import Key, Settings

if TYPE_CHECKING:  # the single-instance socket is made by gui.app only
    from gui.desktop.single_instance import InstanceRequest

log = logging.getLogger("qiao.desktop")


class QuickLike(Protocol):
    """The popup controller's part the desktop uses (gui.quick.controller.QuickTranslate)."""

    def trigger(self) -> None: ...
    def show_text(self, text: str) -> None: ...


class Desktop(QObject):
    """Owned by the window; created by gui.app once the window exists."""

    def __init__(
        self,
        window: QMainWindow,
        settings: Settings,
        *,
        use_tray: bool | None = None,
        autostart_entry: autostart.Autostart | None = None,
        api: ApiHost | None = None,
    ) -> None:
        """`use_tray`: None asks the desktop whether it has a tray; tests pass True or False."""
        super().__init__(window)
        self.window = window
        self.settings = settings
        self.quick: QuickLike | None = None
        self.api = api
        self._autostart = autostart_entry
        self._quitting = False
        has_tray = tray_available() if use_tray is None else use_tray
        self.tray: TrayIcon | None = TrayIcon(settings, window, app_icon(), self) if has_tray else None
        if self.tray is not None:
            self.tray.toggle_window.connect(self.toggle_window)
            self.tray.quick_translate.connect(self.quick_translate)
            self.tray.quit_requested.connect(self.quit)
            self.tray.show()
            app = QApplication.instance()
            if isinstance(app, QApplication):
                app.setQuitOnLastWindowClosed(False)  # a window hidden to the tray is not the end of Qiao
        settings.changed.connect(self._setting_changed)
        window.desktop = self  # type: ignore[attr-defined]

    # ---- requests from later starts (gui.desktop.single_instance) ----------------------------------------------------

    @Slot(object)
    def handle(self, request: InstanceRequest) -> None:
        """A second start, `qiao popup [TEXT]`, `qiao translate --app TEXT`."""
        if request.action == "show":
            self.raise_window()
        elif request.action == "popup":
            self.quick_translate(request.text)
        elif request.action == "translate" and request.text:
            self.translate_in_window(request.text)

    def raise_window(self) -> None:
        w = self.window
        w.show()
        w.setWindowState((w.windowState() & ~Qt.WindowState.WindowMinimized) | Qt.WindowState.WindowActive)
        w.raise_()
        w.activateWindow()

    def translate_in_window(self, text: str) -> None:
        self.raise_window()
        self.window.source.setPlainText(text)  # type: ignore[attr-defined]
        self.window.translate()  # type: ignore[attr-defined]

    @Slot()
    def quick_translate(self, text: str | None = None) -> None:
        """The popup with `text`, or with the selection (or clipboard) when None."""
        if self.quick is not None:
            if text is None:
                self.quick.trigger()
            else:
                self.quick.show_text(text)
            return
        if text is None:  # no popup in this build: the window does the job
            clipboard = QGuiApplication.clipboard()
            mode = QClipboard.Mode.Selection if clipboard.supportsSelection() else QClipboard.Mode.Clipboard
            text = clipboard.text(mode) or clipboard.text()
        if text and text.strip():
            self.translate_in_window(text)
        else:
            self.raise_window()

    # ---- the tray and closing ----------------------------------------------------------------------------------

    @Slot()
    def toggle_window(self) -> None:
        if self.window.isVisible() and not self.window.isMinimized():
            self.window.hide()
        else:
            self.raise_window()

    def close_requested(self, event: QCloseEvent) -> bool:
        """The window's closeEvent asks first: True when the window only hides to the tray (the event is ignored)."""
        if self._quitting or self.tray is None or not self.settings.get(Key.CLOSE_TO_TRAY):
            return False
        event.ignore()
        self.window.hide()
        if not self.settings.get(Key.TRAY_NOTICE_SHOWN):
            self.settings.set(Key.TRAY_NOTICE_SHOWN, True)
            self.tray.show_message(
                self.tr("Qiao is still running"),
                self.tr("Qiao keeps running in the tray. Click its icon to open the window; Quit in its menu ends it."),
            )
        return True

    def window_closed(self) -> None:
        """The window really closed: end the app (with a tray, Qt would not quit on its own)."""
        self.shutdown()
        app = QApplication.instance()
        if isinstance(app, QApplication) and not app.quitOnLastWindowClosed():
            QTimer.singleShot(0, QCoreApplication.quit)

    @Slot()
    def quit(self) -> None:
        """Quit from the tray: close the window for real (it saves everything), then end the app."""
        self._quitting = True
        self.window.close()

    def shutdown(self) -> None:
        """Stop the API and remove the tray icon; safe to call twice."""
        if self.api is not None:
            self.api.stop()
        if self.tray is not None:
            self.tray.close()
            self.tray = None

    # ---- settings --------------------------------------------------------------------------------------------

    def start(self) -> None:
        """Once the window is up: make the autostart entry and the API match the settings."""
        self._apply_autostart(report=False)
        self._apply_api()

    @Slot(object)
    def _setting_changed(self, key: Key) -> None:
        if key is Key.AUTOSTART:
            self._apply_autostart(report=True)
        elif key in API_KEYS:
            self._apply_api()

    def _apply_autostart(self, *, report: bool) -> None:
        enabled = bool(self.settings.get(Key.AUTOSTART))
        entry = self._autostart or autostart.for_platform()
        if not report and entry.is_enabled() == enabled:
            return
        try:
            autostart.apply(enabled, entry)
        except OSError as exc:
            log.warning("autostart entry not %s: %s", "written" if enabled else "removed", exc)
            self._notice(self.tr("Qiao could not change its start-with-the-system entry: {error}").format(error=exc))

    def _apply_api(self) -> None:
        if self.api is None:
            return
        problem = self.api.apply()
        if problem == NOT_BUILT:
            self._notice(self.tr("The local translation API is not part of this build of Qiao."))
        elif problem:
            self._notice(self.tr("The local translation API did not start: {error}").format(error=problem))
        elif self.api.warning:  # the key file other users can read: it works, but they could use the API too
            self._notice(
                self.tr("The local translation API's key file is not private: {warning}").format(
                    warning=self.api.warning
                )
            )

    def notice(self, text: str) -> None:
        """Say `text` in the window's notice bar (problems of the desktop pieces: autostart, the API, the shortcut)."""
        self._notice(text)

    def _notice(self, text: str) -> None:
        notice = getattr(self.window, "notice", None)
        if notice is not None:
            notice.show_message(text)
