"""The tray (menu-bar) icon, where the desktop has one: show/hide the window, quick translate, pause clipboard
watching, quit.

It only says what was asked (signals); the app decides what that means. "Pause clipboard watching" is bound to the
`CLIPBOARD_WATCH_PAUSED` setting both ways, and is offered only while clipboard watching is on.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Signal, Slot
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon, QWidget

from gui.settings import Key, Settings


def tray_available() -> bool:
    """Whether this desktop shows tray icons (GNOME without an extension, some Wayland shells: no)."""
    return QSystemTrayIcon.isSystemTrayAvailable()


class TrayIcon(QObject):
    """Qiao's tray icon and its menu."""

    toggle_window = Signal()  # show the window if hidden, else hide it
    quick_translate = Signal()  # the popup helper's controller connects `trigger` here
    quit_requested = Signal()

    def __init__(self, settings: Settings, window: QWidget, icon: QIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.window = window
        self.icon = QSystemTrayIcon(icon, self)
        self.menu = QMenu()
        self.menu.setObjectName("trayMenu")
        self.show_action = QAction(self.menu)
        self.show_action.setObjectName("trayShow")
        self.show_action.triggered.connect(self.toggle_window)
        self.quick_action = QAction(self.menu)
        self.quick_action.setObjectName("trayQuick")
        self.quick_action.triggered.connect(self.quick_translate)
        self.pause_action = QAction(self.menu)
        self.pause_action.setObjectName("trayPause")
        self.pause_action.setCheckable(True)
        self.pause_action.toggled.connect(self._pause_toggled)
        self.quit_action = QAction(self.menu)
        self.quit_action.setObjectName("trayQuit")
        self.quit_action.triggered.connect(self.quit_requested)
        self.menu.addAction(self.show_action)
        self.menu.addAction(self.quick_action)
        self.menu.addSeparator()
        self.menu.addAction(self.pause_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.menu.aboutToShow.connect(self.refresh)
        self.menu.installEventFilter(self)  # LanguageChange reaches the menu (a widget), not this object
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        settings.changed.connect(self._setting_changed)
        self.retranslate()
        self.refresh()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def close(self) -> None:
        self.icon.hide()
        self.menu.deleteLater()

    def retranslate(self) -> None:
        self.icon.setToolTip(self.tr("Qiao: offline translator"))
        self.quick_action.setText(self.tr("&Quick translate"))
        self.pause_action.setText(self.tr("&Pause clipboard watching"))
        self.quit_action.setText(self.tr("&Quit Qiao"))
        self._word_show_action()

    def _word_show_action(self) -> None:
        shown = self.window.isVisible() and not self.window.isMinimized()
        self.show_action.setText(self.tr("&Hide window") if shown else self.tr("&Show window"))

    @Slot()
    def refresh(self) -> None:
        """Bring the menu up to date (window shown or not, clipboard watching on or not)."""
        self._word_show_action()
        watching = bool(self.settings.get(Key.CLIPBOARD_WATCH))
        self.pause_action.setVisible(watching)
        self.pause_action.blockSignals(True)
        self.pause_action.setChecked(bool(self.settings.get(Key.CLIPBOARD_WATCH_PAUSED)))
        self.pause_action.blockSignals(False)

    def show_message(self, title: str, text: str) -> None:
        self.icon.showMessage(title, text, QSystemTrayIcon.MessageIcon.Information, 8000)

    @Slot(bool)
    def _pause_toggled(self, paused: bool) -> None:
        self.settings.set(Key.CLIPBOARD_WATCH_PAUSED, paused)

    @Slot(object)
    def _setting_changed(self, key: Key) -> None:
        if key in (Key.CLIPBOARD_WATCH, Key.CLIPBOARD_WATCH_PAUSED):
            self.refresh()

    @Slot(QSystemTrayIcon.ActivationReason)
    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.toggle_window.emit()
        elif reason == QSystemTrayIcon.ActivationReason.MiddleClick:
            self.quick_translate.emit()

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.menu and event.type() == QEvent.Type.LanguageChange:
            self.retranslate()
        return False
