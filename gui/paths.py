"""Where the GUI keeps its own files (settings, autosaved text), per OS, via platformdirs.

`QIAO_CONFIG_DIR` / `QIAO_STATE_DIR` override them, so tests and portable installs never touch the real profile.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_config_dir, user_state_dir

APP_NAME = "Qiao"


def config_dir() -> Path:
    """Folder holding `qiao.ini` (created on demand by QSettings)."""
    override = os.environ.get("QIAO_CONFIG_DIR")
    return Path(override) if override else Path(user_config_dir(APP_NAME, appauthor=False))


def state_dir() -> Path:
    """Folder holding the autosaved source text and the last finished translation."""
    override = os.environ.get("QIAO_STATE_DIR")
    return Path(override) if override else Path(user_state_dir(APP_NAME, appauthor=False))


def settings_file() -> Path:
    return config_dir() / "qiao.ini"


def autosave_file() -> Path:
    return state_dir() / "source.txt"


def last_translation_file() -> Path:
    """The last finished translation, kept beside the source it belongs to (see gui.last_translation)."""
    return state_dir() / "translation.json"
