"""The translator window's actions (with their shortcuts) and its menu bar: File, Edit, View, Tools (shown once
something attaches an entry, as the glossary does) and Help.

The actions run the commands they are given (`MenuCommands`) or flip a view setting; nothing here knows the window
beyond the QMainWindow that holds the menu bar. Its strings keep the "MainWindow" translation context they had when
the window built its menus itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu

from gui import pair_text
from gui.documents.wording import FORMAT_LABELS
from gui.settings import Key, Settings


@dataclass(frozen=True)
class MenuCommands:
    """What the menu entries do."""

    translate: Callable[[], object]
    cancel: Callable[[], object]
    copy: Callable[[], object]
    clear: Callable[[], object]
    settings: Callable[[], object]
    quit: Callable[[], object]
    zoom: Callable[[int], object]  # +1 larger text, -1 smaller
    about: Callable[[], object]
    swap: Callable[[], object]
    models: Callable[[], object]
    open_document: Callable[[], object]


class Menus(QObject):
    """The actions and menus of `window`; `retranslate` words them, `show_settings` ticks the view settings."""

    def __init__(self, window: QMainWindow, settings: Settings, commands: MenuCommands) -> None:
        super().__init__(window)
        self.window = window
        self.settings = settings
        self._build_actions(commands)
        self._build_menus()

    def _action(self, slot: Callable[[], object], *shortcuts: QKeySequence | str) -> QAction:
        action = QAction(self.window)
        action.triggered.connect(slot)
        if shortcuts:
            action.setShortcuts([QKeySequence(s) for s in shortcuts])
        self.window.addAction(action)
        return action

    def _toggle(self, key: Key) -> QAction:
        """A checkable action that sets `key` to its own checked state."""
        action = self._action(lambda: self.settings.set(key, action.isChecked()))
        action.setCheckable(True)
        return action

    def _build_actions(self, do: MenuCommands) -> None:
        self.translate_action = self._action(do.translate, "Ctrl+Return", "Ctrl+Enter")
        self.cancel_action = self._action(do.cancel, "Esc")
        self.copy_action = self._action(do.copy, "Ctrl+Shift+C")
        self.clear_action = self._action(do.clear, "Ctrl+Shift+Backspace")
        # Ctrl+, first: the menu shows the first shortcut, and StandardKey.Preferences is empty on Linux and Windows
        preferences = QKeySequence(QKeySequence.StandardKey.Preferences)
        extra = [preferences] if not preferences.isEmpty() and preferences != QKeySequence("Ctrl+,") else []
        self.settings_action = self._action(do.settings, "Ctrl+,", *extra)
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        self.quit_action = self._action(do.quit, QKeySequence.StandardKey.Quit)
        self.quit_action.setMenuRole(QAction.MenuRole.QuitRole)
        self.stacked_action = self._toggle(Key.STACKED)
        self.live_action = self._toggle(Key.LIVE_TRANSLATE)
        self.bigger_action = self._action(lambda: do.zoom(+1), QKeySequence.StandardKey.ZoomIn, "Ctrl+=")
        self.smaller_action = self._action(lambda: do.zoom(-1), QKeySequence.StandardKey.ZoomOut)
        self.about_action = self._action(do.about)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        self.swap_action = self._action(do.swap, "Ctrl+Shift+S")
        self.models_action = self._action(do.models)
        self.open_document_action = self._action(do.open_document, "Ctrl+O")
        self.underline_action = self._toggle(Key.CONFIDENCE_UNDERLINE)
        self.sync_scroll_action = self._toggle(Key.SYNC_SCROLL)

    def _build_menus(self) -> None:
        bar = self.window.menuBar()
        self.file_menu = QMenu(self.window)
        self.file_menu.addAction(self.open_document_action)
        self.file_menu.addAction(self.models_action)
        self.file_menu.addSeparator()
        self.file_menu.addAction(self.quit_action)
        self.edit_menu = QMenu(self.window)
        for a in (self.translate_action, self.cancel_action, None, self.copy_action, self.clear_action, None):
            self.edit_menu.addAction(a) if a else self.edit_menu.addSeparator()
        self.edit_menu.addAction(self.live_action)
        self.edit_menu.addAction(self.swap_action)
        self.edit_menu.addSeparator()
        self.edit_menu.addAction(self.settings_action)
        self.view_menu = QMenu(self.window)
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
        self.tools_menu = QMenu(self.window)
        self.tools_menu.installEventFilter(self)
        self.help_menu = QMenu(self.window)
        self.help_menu.addAction(self.about_action)
        for m in (self.file_menu, self.edit_menu, self.view_menu, self.tools_menu, self.help_menu):
            bar.addMenu(m)
        self.tools_menu.menuAction().setVisible(False)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.tools_menu and event.type() in (QEvent.Type.ActionAdded, QEvent.Type.ActionRemoved):
            # After the change is done: ActionRemoved comes while the action is still listed
            QTimer.singleShot(0, self._update_tools_menu)
            self._update_tools_menu()
        return super().eventFilter(watched, event)

    def _update_tools_menu(self) -> None:
        shown = any(not a.isSeparator() for a in self.tools_menu.actions())
        self.tools_menu.menuAction().setVisible(shown)

    def show_settings(self) -> None:
        """The checkable entries show what the settings say now."""
        self.live_action.setChecked(self.settings.get(Key.LIVE_TRANSLATE))
        self.stacked_action.setChecked(self.settings.get(Key.STACKED))
        self.underline_action.setChecked(self.settings.get(Key.CONFIDENCE_UNDERLINE))
        self.sync_scroll_action.setChecked(self.settings.get(Key.SYNC_SCROLL))

    def retranslate(self) -> None:
        """Every menu title and action text; called again when the interface language changes."""
        self.file_menu.setTitle(QCoreApplication.translate("MainWindow", "&File"))
        self.edit_menu.setTitle(QCoreApplication.translate("MainWindow", "&Edit"))
        self.view_menu.setTitle(QCoreApplication.translate("MainWindow", "&View"))
        self.tools_menu.setTitle(QCoreApplication.translate("MainWindow", "T&ools"))
        self.help_menu.setTitle(QCoreApplication.translate("MainWindow", "&Help"))
        self.translate_action.setText(QCoreApplication.translate("MainWindow", "&Translate"))
        self.cancel_action.setText(QCoreApplication.translate("MainWindow", "&Cancel translation"))
        self.copy_action.setText(QCoreApplication.translate("MainWindow", "C&opy translation"))
        self.clear_action.setText(QCoreApplication.translate("MainWindow", "C&lear"))
        self.live_action.setText(QCoreApplication.translate("MainWindow", "Translate as you t&ype"))
        self.settings_action.setText(QCoreApplication.translate("MainWindow", "&Settings…"))
        self.quit_action.setText(QCoreApplication.translate("MainWindow", "&Quit"))
        self.stacked_action.setText(QCoreApplication.translate("MainWindow", "&Stacked layout"))
        self.bigger_action.setText(QCoreApplication.translate("MainWindow", "&Larger text"))
        self.smaller_action.setText(QCoreApplication.translate("MainWindow", "S&maller text"))
        self.about_action.setText(QCoreApplication.translate("MainWindow", "&About Qiao"))
        self.swap_action.setText(QCoreApplication.translate("MainWindow", "S&wap languages"))
        self.swap_action.setIconText("⇄")  # what the button beside the headings shows; the menu shows the text
        self.models_action.setText(QCoreApplication.translate("MainWindow", "&Models…"))
        self.open_document_action.setText(QCoreApplication.translate("MainWindow", "Open &document…"))
        self.underline_action.setText(QCoreApplication.translate("MainWindow", "&Underline unsure words"))
        self.underline_action.setToolTip(
            QCoreApplication.translate("MainWindow", "A wavy line under the words the model was unsure of")
        )
        self.sync_scroll_action.setText(QCoreApplication.translate("MainWindow", "Scroll panes toge&ther"))
        self.open_document_action.setToolTip(
            QCoreApplication.translate("MainWindow", "Translate whole files: {formats}").format(
                formats=pair_text.listing(
                    [QCoreApplication.translate("DocumentsPanel", label) for label in FORMAT_LABELS.values()]
                )
            )
        )
