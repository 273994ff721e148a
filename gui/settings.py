"""Typed, validated settings over QSettings.

Every setting is a `Key` with one default and one validator, so no widget ever reads a raw string from the INI
file. A settings file that cannot be parsed is moved aside and replaced by defaults, with a notice for the user;
a single bad value falls back to its default and is reported the same way.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from PySide6.QtCore import QT_TRANSLATE_NOOP, QByteArray, QCoreApplication, QObject, QSettings, Signal

from engine.config import DEFAULT_PRECISION, MAX_BEAMS, MIN_BEAMS, PRECISIONS

MAX_THREADS = max(1, os.cpu_count() or 1)
BEAM_CHOICES = (0, *range(MIN_BEAMS, MAX_BEAMS + 1))  # 0 = whatever the model's manifest asks for
DEFAULT_DIRECTION = "en-zh"
_PAIR_KEY = re.compile(r"[a-z]{2,3}-[a-z]{2,3}")  # "en-zh": a LanguagePair.key
_VARIANT_KEY = re.compile(r"[a-z0-9_]{1,32}")  # "hans": which variants exist is the loaded model's business
DEFAULT_NAME_TEMPLATE = "{stem}.{lang}{suffix}"  # as engine.documents.job.DocumentOptions
# A result's name: {stem} somewhere, only the fields DocumentOptions knows, no folder separators or braces otherwise
# A global shortcut: one to four modifiers and one key, as QKeySequence.toString() writes it ("Ctrl+Alt+T")
SHORTCUT = re.compile(
    r"(?:(?:Ctrl|Alt|Shift|Meta)\+){1,4}(?:F[1-9]|F1[0-2]|[A-Za-z0-9]|Space|Ins|Del|Home|End|PgUp|PgDown)"
)
DEFAULT_API_PORT = 5454  # engine.api.guard.DEFAULT_PORT (not 5000: macOS AirPlay takes it); kept equal by a test
NAME_TEMPLATE = re.compile(r"(?=.*\{stem\})(?:[^{}/\\\x00-\x1f:*?\"<>|]|\{(?:stem|suffix|lang)\}){1,120}")
# An installed bundle's name (engine.store.installed.bundle_name), or "" for no choice
_BUNDLE_NAME = re.compile(r"|[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
# Catalogue ids, space-separated (QSettings quotes a value with commas)
_BUNDLE_NAMES = re.compile(r"|[A-Za-z0-9][A-Za-z0-9._-]{0,99}(?: [A-Za-z0-9][A-Za-z0-9._-]{0,99}){0,63}")
_SCRIPT_NOTICE = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}/[a-z0-9_]{1,32}"  # bundle name / variant key
_SCRIPT_NOTICES = re.compile(rf"|{_SCRIPT_NOTICE}(?: {_SCRIPT_NOTICE}){{0,63}}")


class Key(Enum):
    """Every setting Qiao stores; the value is the INI key."""

    PRECISION = "engine/precision"
    DIRECTION = "engine/direction"  # the pair key ("en-zh") of the bundle to load
    VARIANT = "engine/script"  # the target variant ("hans"); the INI key predates pairs, so old settings survive
    BEAMS = "engine/beams"
    JOIN_WRAPPED_LINES = "engine/join_wrapped_lines"
    NORMALIZE_PUNCTUATION = "engine/normalize_punctuation"
    THREADS = "engine/threads"
    LIVE_TRANSLATE = "editor/live_translate"
    LIVE_DELAY_MS = "editor/live_delay_ms"
    FONT_SIZE = "editor/font_size"
    UI_LANGUAGE = "interface/language"
    THEME = "interface/theme"
    STACKED = "window/stacked"
    WINDOW_GEOMETRY = "window/geometry"
    SPLITTER_STATE = "window/splitter"
    DOCUMENT_FOLDER = "documents/result_folder"  # "" = beside each input
    DOCUMENT_NAME = "documents/name_template"
    DOCUMENT_OPEN_DIR = "documents/last_folder"  # where "Open document…" starts
    CLOSE_TO_TRAY = "desktop/close_to_tray"  # closing the window hides it to the tray
    TRAY_NOTICE_SHOWN = "desktop/tray_notice_shown"  # the one-time "Qiao keeps running in the tray" was shown
    AUTOSTART = "desktop/autostart"  # a per-user autostart entry exists (gui.desktop.autostart)
    QUICK_SHORTCUT = "quick/shortcut"  # the global shortcut that opens the quick-translate popup
    COPY_TWICE = "quick/copy_twice"  # copying the same text twice within 0.5 s opens the popup
    CLIPBOARD_WATCH = "quick/clipboard_watch"  # new English text on the clipboard is translated in the popup
    CLIPBOARD_WATCH_PAUSED = "quick/clipboard_watch_paused"  # paused from the tray
    API_ENABLED = "api/enabled"  # the app serves the local translation API (127.0.0.1 only)
    API_PORT = "api/port"
    API_KEY_FILE = "api/key_file"  # "" = no key asked for
    CONFIDENCE_UNDERLINE = "review/underline_unsure"  # wavy underline under words the model was unsure of
    CONFIDENCE_THRESHOLD = "review/unsure_below_percent"  # a word is unsure below this probability (percent)
    SYNC_SCROLL = "review/sync_scroll"  # the panes scroll together
    GLOSSARY_ENABLED = "glossary/enabled"  # the glossary applies to every translation
    HISTORY_ENABLED = "history/enabled"  # finished translations are kept in the history database
    HISTORY_LIMIT = "history/max_entries"  # the oldest entries go beyond this many
    # The model chosen for a direction: an installed bundle's name, "" = the best installed one. The engine reads
    # these from the same file (engine.store.choice: section [models], the pair key), so the CLI follows the window.
    MODEL_EN_ZH = "models/en-zh"
    MODEL_ZH_EN = "models/zh-en"
    MODEL_IMPORT_DIR = "models/import_folder"  # where the Models dialog's Import… file dialogs start
    MODELS_OFFERED = "models/offered"  # catalogue ids of the better models the window has offered once
    SCRIPT_NOTICES = "models/script_notices"  # "bundle/variant": a model that cannot write a chosen script, said once


@dataclass(frozen=True)
class Spec:
    """Type, default and allowed values of one key."""

    kind: type
    default: Any
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    pattern: re.Pattern[str] | None = None  # for strings whose allowed values are not known here


SPECS: dict[Key, Spec] = {
    Key.PRECISION: Spec(str, DEFAULT_PRECISION, PRECISIONS),
    Key.DIRECTION: Spec(str, DEFAULT_DIRECTION, pattern=_PAIR_KEY),
    Key.VARIANT: Spec(str, "hans", pattern=_VARIANT_KEY),
    Key.BEAMS: Spec(int, 0, BEAM_CHOICES),
    Key.JOIN_WRAPPED_LINES: Spec(bool, True),
    Key.NORMALIZE_PUNCTUATION: Spec(bool, True),
    Key.THREADS: Spec(int, 0, minimum=0, maximum=MAX_THREADS),  # 0 = automatic
    Key.LIVE_TRANSLATE: Spec(bool, False),
    Key.LIVE_DELAY_MS: Spec(int, 700, minimum=200, maximum=5000),
    Key.FONT_SIZE: Spec(int, 13, minimum=8, maximum=48),
    Key.UI_LANGUAGE: Spec(str, "system", ("system", "en", "zh_CN")),
    Key.THEME: Spec(str, "system", ("system", "light", "dark")),
    Key.STACKED: Spec(bool, False),
    Key.WINDOW_GEOMETRY: Spec(bytes, b""),
    Key.SPLITTER_STATE: Spec(bytes, b""),
    Key.DOCUMENT_FOLDER: Spec(str, ""),
    Key.DOCUMENT_NAME: Spec(str, DEFAULT_NAME_TEMPLATE, pattern=NAME_TEMPLATE),
    Key.DOCUMENT_OPEN_DIR: Spec(str, ""),
    Key.CLOSE_TO_TRAY: Spec(bool, False),
    Key.TRAY_NOTICE_SHOWN: Spec(bool, False),
    Key.AUTOSTART: Spec(bool, False),
    Key.QUICK_SHORTCUT: Spec(str, "Ctrl+Alt+T", pattern=SHORTCUT),
    Key.COPY_TWICE: Spec(bool, False),
    Key.CLIPBOARD_WATCH: Spec(bool, False),
    Key.CLIPBOARD_WATCH_PAUSED: Spec(bool, False),
    Key.API_ENABLED: Spec(bool, False),
    Key.API_PORT: Spec(int, DEFAULT_API_PORT, minimum=1024, maximum=65535),
    Key.API_KEY_FILE: Spec(str, ""),
    Key.CONFIDENCE_UNDERLINE: Spec(bool, True),
    Key.CONFIDENCE_THRESHOLD: Spec(int, 35, minimum=1, maximum=99),
    Key.SYNC_SCROLL: Spec(bool, True),
    Key.GLOSSARY_ENABLED: Spec(bool, True),
    Key.HISTORY_ENABLED: Spec(bool, True),
    Key.HISTORY_LIMIT: Spec(int, 10_000, minimum=100, maximum=1_000_000),
    Key.MODEL_EN_ZH: Spec(str, "", pattern=_BUNDLE_NAME),
    Key.MODEL_ZH_EN: Spec(str, "", pattern=_BUNDLE_NAME),
    Key.MODEL_IMPORT_DIR: Spec(str, ""),
    Key.MODELS_OFFERED: Spec(str, "", pattern=_BUNDLE_NAMES),
    Key.SCRIPT_NOTICES: Spec(str, "", pattern=_SCRIPT_NOTICES),
}
# The per-direction model choice's key, by pair key
MODEL_CHOICE: dict[str, Key] = {"en-zh": Key.MODEL_EN_ZH, "zh-en": Key.MODEL_ZH_EN}

# What a person calls each setting (the Settings dialog's wording), for notices; never the raw INI key.
LABELS: dict[Key, str] = {
    Key.PRECISION: QT_TRANSLATE_NOOP("Settings", "Precision"),
    Key.DIRECTION: QT_TRANSLATE_NOOP("Settings", "Translation direction"),
    Key.VARIANT: QT_TRANSLATE_NOOP("Settings", "Chinese script"),
    Key.BEAMS: QT_TRANSLATE_NOOP("Settings", "Quality"),
    Key.JOIN_WRAPPED_LINES: QT_TRANSLATE_NOOP("Settings", "Join lines broken by wrapping"),
    Key.NORMALIZE_PUNCTUATION: QT_TRANSLATE_NOOP("Settings", "Normalise punctuation"),
    Key.THREADS: QT_TRANSLATE_NOOP("Settings", "Threads"),
    Key.LIVE_TRANSLATE: QT_TRANSLATE_NOOP("Settings", "Translate as you type"),
    Key.LIVE_DELAY_MS: QT_TRANSLATE_NOOP("Settings", "Delay"),
    Key.FONT_SIZE: QT_TRANSLATE_NOOP("Settings", "Text size"),
    Key.UI_LANGUAGE: QT_TRANSLATE_NOOP("Settings", "Interface language"),
    Key.THEME: QT_TRANSLATE_NOOP("Settings", "Appearance"),
    Key.STACKED: QT_TRANSLATE_NOOP("Settings", "Stacked layout"),
    Key.WINDOW_GEOMETRY: QT_TRANSLATE_NOOP("Settings", "Window size and position"),
    Key.SPLITTER_STATE: QT_TRANSLATE_NOOP("Settings", "Pane sizes"),
    Key.DOCUMENT_FOLDER: QT_TRANSLATE_NOOP("Settings", "Folder for translated documents"),
    Key.DOCUMENT_NAME: QT_TRANSLATE_NOOP("Settings", "Name of translated documents"),
    Key.DOCUMENT_OPEN_DIR: QT_TRANSLATE_NOOP("Settings", "Last folder documents were opened from"),
    Key.CLOSE_TO_TRAY: QT_TRANSLATE_NOOP("Settings", "Keep running in the tray when the window is closed"),
    Key.TRAY_NOTICE_SHOWN: QT_TRANSLATE_NOOP("Settings", "Tray notice shown"),
    Key.AUTOSTART: QT_TRANSLATE_NOOP("Settings", "Start Qiao when I log in"),
    Key.QUICK_SHORTCUT: QT_TRANSLATE_NOOP("Settings", "Quick translate shortcut"),
    Key.COPY_TWICE: QT_TRANSLATE_NOOP("Settings", "Copy twice to translate"),
    Key.CLIPBOARD_WATCH: QT_TRANSLATE_NOOP("Settings", "Translate English copied to the clipboard"),
    Key.CLIPBOARD_WATCH_PAUSED: QT_TRANSLATE_NOOP("Settings", "Clipboard watching paused"),
    Key.API_ENABLED: QT_TRANSLATE_NOOP("Settings", "Local translation API"),
    Key.CONFIDENCE_UNDERLINE: QT_TRANSLATE_NOOP("Settings", "Underline words the model is unsure of"),
    Key.CONFIDENCE_THRESHOLD: QT_TRANSLATE_NOOP("Settings", "Unsure below"),
    Key.SYNC_SCROLL: QT_TRANSLATE_NOOP("Settings", "Scroll the panes together"),
    Key.GLOSSARY_ENABLED: QT_TRANSLATE_NOOP("Settings", "Apply the glossary"),
    Key.HISTORY_ENABLED: QT_TRANSLATE_NOOP("Settings", "Keep a history of translations"),
    Key.HISTORY_LIMIT: QT_TRANSLATE_NOOP("Settings", "History size"),
    Key.API_PORT: QT_TRANSLATE_NOOP("Settings", "API port"),
    Key.API_KEY_FILE: QT_TRANSLATE_NOOP("Settings", "API key file"),
    Key.MODEL_EN_ZH: QT_TRANSLATE_NOOP("Settings", "English → Chinese model"),
    Key.MODEL_ZH_EN: QT_TRANSLATE_NOOP("Settings", "Chinese → English model"),
    Key.MODEL_IMPORT_DIR: QT_TRANSLATE_NOOP("Settings", "Last folder models were imported from"),
    Key.MODELS_OFFERED: QT_TRANSLATE_NOOP("Settings", "Better models offered"),
    Key.SCRIPT_NOTICES: QT_TRANSLATE_NOOP("Settings", "Script notices shown"),
}

_CORRUPT = QT_TRANSLATE_NOOP(
    "Settings", "Your settings file could not be read, so Qiao started with the default settings."
)
_CORRUPT_KEPT = QT_TRANSLATE_NOOP(
    "Settings",
    "Your settings file could not be read, so Qiao started with the default settings. "
    "The unreadable file was kept as {path}.",
)
_INVALID_VALUE = QT_TRANSLATE_NOOP(
    "Settings", "The setting “{name}” had an invalid value ({value}) and was reset to its default."
)

_TRUE = {"true", "1", "yes", "on"}
_FALSE = {"false", "0", "no", "off"}


def _coerce(spec: Spec, raw: Any) -> Any:
    """Turn what QSettings returns into the key's type, or raise ValueError."""
    if spec.kind is bool:
        if isinstance(raw, bool):
            value: Any = raw
        elif str(raw).strip().lower() in _TRUE:
            value = True
        elif str(raw).strip().lower() in _FALSE:
            value = False
        else:
            raise ValueError(raw)
    elif spec.kind is int:
        if isinstance(raw, bool):
            raise ValueError(raw)
        value = int(str(raw).strip())
    elif spec.kind is bytes:
        if isinstance(raw, QByteArray):
            value = bytes(raw.data())
        elif isinstance(raw, bytes | bytearray):
            value = bytes(raw)
        else:
            raise ValueError(raw)
    else:
        if not isinstance(raw, str):
            raise ValueError(raw)
        value = raw.strip()
    if spec.choices is not None and value not in spec.choices:
        raise ValueError(raw)
    if spec.pattern is not None and not spec.pattern.fullmatch(value):
        raise ValueError(raw)
    if spec.minimum is not None and value < spec.minimum:
        raise ValueError(raw)
    if spec.maximum is not None and value > spec.maximum:
        raise ValueError(raw)
    return value


def _looks_corrupt(path: Path, qsettings: QSettings) -> bool:
    """QSettings' INI reader accepts almost anything, so also reject binary junk and files with no readable key."""
    if qsettings.status() == QSettings.Status.FormatError:
        return True
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    if not data.strip():
        return False
    if b"\x00" in data:
        return True
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    meaningful = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith((";", "#"))]
    return bool(meaningful) and not qsettings.allKeys()


def label(key: Key) -> str:
    """The setting's name in the interface language."""
    return QCoreApplication.translate("Settings", LABELS[key])


def _shown_value(raw: Any) -> str:
    text = bytes(raw.data()).decode("utf-8", "replace") if isinstance(raw, QByteArray) else str(raw)
    return text if len(text) <= 40 else text[:39] + "…"


class Settings(QObject):
    """The app's settings file; emits `changed(Key)` whenever a value really changes.

    Every stored value is validated when the file is opened, so an invalid one is reported at start-up even if the
    key is read only later (precision and quality are read after the window shows its first notices).
    `noticed` fires for a notice found after that.
    """

    changed = Signal(object)
    noticed = Signal()

    def __init__(self, path: str | Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.path = Path(path)
        # (untranslated text, format arguments): translated when shown, after the UI language is known
        self.notices: list[tuple[str, dict[str, str]]] = []
        self._reported: set[Key] = set()
        self._qs = QSettings(str(self.path), QSettings.Format.IniFormat)
        if _looks_corrupt(self.path, self._qs):
            self._move_aside()
        for key in Key:
            self.get(key)

    def _move_aside(self) -> None:
        backup = self.path.with_name(f"{self.path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
        del self._qs
        try:
            os.replace(self.path, backup)
            where = str(backup)
        except OSError:
            where = ""
        self._qs = QSettings(str(self.path), QSettings.Format.IniFormat)
        self._qs.clear()
        if where:
            self.notices.append((_CORRUPT_KEPT, {"path": where}))
        else:
            self.notices.append((_CORRUPT, {}))

    def get(self, key: Key) -> Any:
        """The stored value, or the default if missing or invalid (an invalid value is reported once)."""
        spec = SPECS[key]
        raw = self._qs.value(key.value)
        if raw is None:
            return spec.default
        try:
            return _coerce(spec, raw)
        except (ValueError, TypeError):
            if key not in self._reported:
                self._reported.add(key)
                self.notices.append((_INVALID_VALUE, {"key": key.value, "value": _shown_value(raw)}))
                self.noticed.emit()
            self._qs.remove(key.value)
            return spec.default

    def set(self, key: Key, value: Any) -> None:
        """Validate and store; raises ValueError for a value the key does not allow."""
        spec = SPECS[key]
        value = _coerce(spec, value)
        if self.get(key) == value:
            return
        stored: Any = QByteArray(value) if spec.kind is bytes else value
        self._qs.setValue(key.value, stored)
        self.changed.emit(key)

    def reset(self, key: Key) -> None:
        """Forget a stored value so the default applies again."""
        before = self.get(key)
        self._qs.remove(key.value)
        if before != SPECS[key].default:
            self.changed.emit(key)

    def sync(self) -> None:
        """Write to disk now (QSettings otherwise writes lazily)."""
        self._qs.sync()

    def take_notices(self) -> list[str]:
        """Notices for the user, each returned once."""
        notices, self.notices = self.notices, []
        out = []
        for text, args in notices:
            if "key" in args:  # worded with the setting's name in the language shown now
                args = {**args, "name": label(Key(args["key"]))}
            out.append(QCoreApplication.translate("Settings", text).format(**args))
        return out
