"""Every per-user folder and file Qiao writes, and every `QIAO_*` environment variable it reads, in one place.

Folders come from platformdirs (app name "Qiao", no app author), so each OS gets its own convention; the
`QIAO_*_DIR` overrides move them, so tests and portable installs never touch the real profile. `ENV_VARS` is the
documented table of every `QIAO_*` variable (the README's "Files and environment variables" section is checked
against it by tests/engine/test_paths.py). platformdirs is imported only when a folder is asked for.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "Qiao"
BUNDLE_NAME = "opus-mt-en-zh"


@dataclass(frozen=True)
class EnvVar:
    """One `QIAO_*` variable: what it does, what happens when it is unset, and who reads it (app, build, bench)."""

    name: str
    meaning: str
    default: str
    read_by: str = "app"


CONFIG_DIR = EnvVar("QIAO_CONFIG_DIR", "folder for the settings file `qiao.ini`", "the per-user config folder")
STATE_DIR = EnvVar(
    "QIAO_STATE_DIR",
    "folder for the autosaved English (`source.txt`) and the last translation (`translation.json`)",
    "the per-user state folder",
)
CACHE_DIR = EnvVar(
    "QIAO_CACHE_DIR",
    "folder for `verified-files.json`, the bundle files that already passed their sha256 check",
    "the per-user cache folder",
)
DATA_DIR = EnvVar(
    "QIAO_DATA_DIR",
    "folder whose `models/` holds the installed model bundles (`qiao model import`, `qiao model download`)",
    "the per-user data folder",
)
MODEL_DIR = EnvVar(
    "QIAO_MODEL_DIR",
    "model bundle to load, second only to `--model`; final: a folder without a bundle is the error",
    "search beside the program, then the source checkout, then the per-user models folder",
)
CATALOGUE_URL = EnvVar(
    "QIAO_CATALOGUE_URL",
    "model catalogue `qiao model download` and the Models dialog read (https, http on 127.0.0.1/localhost, "
    "file, or a path)",
    "the project's release catalogue",
)
STARTUP_PROBE = EnvVar(
    "QIAO_STARTUP_PROBE",
    "file the window appends `window T` and `ready T` (or `failed T`) to, T in wall-clock seconds: the smoke "
    "test's start-up timing",
    "no probe",
)
CODESIGN_IDENTITY = EnvVar(
    "QIAO_CODESIGN_IDENTITY",
    "macOS Developer ID identity: qiao.spec signs with the hardened runtime, package.sh notarises",
    "ad-hoc signed, not notarised",
    "build",
)
NOTARY_PROFILE = EnvVar(
    "QIAO_NOTARY_PROFILE", "macOS `xcrun notarytool` keychain profile for notarising the .dmg", "not notarised", "build"
)
NOTARY_APPLE_ID = EnvVar(
    "QIAO_NOTARY_APPLE_ID", "macOS notarisation Apple ID (with the team id and password)", "not notarised", "build"
)
NOTARY_TEAM_ID = EnvVar("QIAO_NOTARY_TEAM_ID", "macOS notarisation team id", "not notarised", "build")
NOTARY_PASSWORD = EnvVar("QIAO_NOTARY_PASSWORD", "macOS notarisation app-specific password", "not notarised", "build")
BENCH_ORT_SPINNING = EnvVar(
    "QIAO_BENCH_ORT_SPINNING",
    "set by bench/run.py for its children: onnxruntime's `allow_spinning` for the peers",
    "bench/systems.py's default",
    "bench",
)
BENCH_BUNDLE_ARGS = EnvVar(
    "QIAO_BENCH_BUNDLE_ARGS",
    "set by bench/run.py for its children: extra `qiao model build` arguments for the bench's bundle",
    "none",
    "bench",
)

ENV_VARS: tuple[EnvVar, ...] = (
    CONFIG_DIR,
    STATE_DIR,
    CACHE_DIR,
    DATA_DIR,
    MODEL_DIR,
    CATALOGUE_URL,
    STARTUP_PROBE,
    CODESIGN_IDENTITY,
    NOTARY_PROFILE,
    NOTARY_APPLE_ID,
    NOTARY_TEAM_ID,
    NOTARY_PASSWORD,
    BENCH_ORT_SPINNING,
    BENCH_BUNDLE_ARGS,
)
# The variables that move a per-user folder (packaging/offline_trace.py removes them to get a fresh HOME).
# DATA_DIR belongs here too once offline_trace.fresh_home_env drops it as well (its list is spelled out there).
FOLDER_OVERRIDES: tuple[EnvVar, ...] = (CONFIG_DIR, STATE_DIR, CACHE_DIR, DATA_DIR)


def _override(var: EnvVar) -> Path | None:
    value = os.environ.get(var.name)
    return Path(value) if value else None


def config_dir() -> Path:
    """Folder holding `qiao.ini` (created on demand by QSettings)."""
    from platformdirs import user_config_dir

    return _override(CONFIG_DIR) or Path(user_config_dir(APP_NAME, appauthor=False))


def state_dir() -> Path:
    """Folder holding the autosaved source text and the last finished translation."""
    from platformdirs import user_state_dir

    return _override(STATE_DIR) or Path(user_state_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    """Folder holding the verified-files cache: losing it only costs a re-hash at the next start."""
    from platformdirs import user_cache_dir

    return _override(CACHE_DIR) or Path(user_cache_dir(APP_NAME, appauthor=False))


def data_dir() -> Path:
    """The per-user data folder (`QIAO_DATA_DIR` moves it; `QIAO_MODEL_DIR` names one bundle, not this folder)."""
    from platformdirs import user_data_dir

    return _override(DATA_DIR) or Path(user_data_dir(APP_NAME, appauthor=False))


def models_dir() -> Path:
    """The per-user models folder: one bundle per sub-folder, installed by hand, `qiao model import` or download."""
    return data_dir() / "models"


def downloads_dir() -> Path:
    """Partial and finished downloads (`<id>-<sha>.part`): inside models_dir(), so the final move is a rename."""
    return models_dir() / ".downloads"


def user_bundle_dir() -> Path:
    """Where the default (en→zh) bundle goes in the per-user models folder."""
    return models_dir() / BUNDLE_NAME


def catalogue_url_override() -> str | None:
    """`$QIAO_CATALOGUE_URL`, or None when unset or empty (engine.store.catalogue then uses its default)."""
    return os.environ.get(CATALOGUE_URL.name) or None


def model_dir_override() -> Path | None:
    """`$QIAO_MODEL_DIR` (`~` expanded), or None when unset or empty."""
    value = os.environ.get(MODEL_DIR.name)
    return Path(value).expanduser() if value else None


def startup_probe_file() -> str | None:
    """`$QIAO_STARTUP_PROBE`, or None: the window then writes no start-up marks."""
    return os.environ.get(STARTUP_PROBE.name) or None


def settings_file() -> Path:
    return config_dir() / "qiao.ini"


def autosave_file() -> Path:
    """The autosaved English; the last translation is kept beside it (gui.window.session_store's `translation.json`)."""
    return state_dir() / "source.txt"


def verified_files_file() -> Path:
    return cache_dir() / "verified-files.json"
