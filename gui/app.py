"""Start-up: the QApplication, translations, theme and the window. `qiao` (no arguments) calls `run()`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from PySide6.QtWidgets import QApplication

from gui import paths
from gui.i18n import install_translators
from gui.icons import app_icon
from gui.main_window import MainWindow
from gui.settings import Key, Settings
from gui.theme import apply_theme

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


def create_window(model_dir: str | None = None, **engine_hooks: object) -> MainWindow:
    """Settings, language and theme applied, window built (not shown). `engine_hooks` go to MainWindow (tests)."""
    app = create_app()
    settings = Settings(paths.settings_file())
    install_translators(settings.get(Key.UI_LANGUAGE))
    apply_theme(app, settings.get(Key.THEME))
    return MainWindow(settings, paths.autosave_file(), model_dir, **engine_hooks)  # type: ignore[arg-type]


def run(model_dir: str | None = None) -> int:
    """Open the window and run until it is closed; returns the exit code. `model_dir` is `qiao --model DIR`."""
    app = create_app()
    window = create_window(model_dir)
    app.aboutToQuit.connect(window.shutdown)
    window.show()
    return app.exec()


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `qiao-gui` gui-script."""
    parser = argparse.ArgumentParser(prog="qiao-gui", description="Qiao: offline English → Chinese translator")
    parser.add_argument("--model", metavar="DIR", help="model bundle folder (default: search the usual places)")
    args, _qt_args = parser.parse_known_args(list(argv) if argv is not None else None)
    return run(args.model)


if __name__ == "__main__":
    raise SystemExit(main())
