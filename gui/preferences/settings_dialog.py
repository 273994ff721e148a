"""Preferences: precision, the target variant (the Chinese script: shown whenever Chinese is the target, with a
note when the model in use cannot write the chosen one; hidden for English), quality, threads,
translate-as-you-type, font size, language, theme; on the "Review" tab (gui.preferences.review_settings) the confidence
underline and scrolling together; and on the "Desktop" tab (gui.preferences.desktop_settings) the tray, start
with the system, quick translate, clipboard and local API settings.

Values are written to `Settings` only on OK, all together; `Settings.changed` then tells the window, which applies
view changes at once and decides once, after the whole batch, whether the translation shown must be redone (a
precision switch reloads the model on the worker, no restart).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from engine.config import MAX_BEAMS, PRECISIONS
from engine.languages import LanguagePair
from gui.pair_text import NATIVE_VARIANTS, chosen_variant, script_choices, script_limit, variant_name
from gui.preferences.desktop_settings import DesktopPage
from gui.preferences.review_settings import ReviewPage
from gui.settings import MAX_THREADS, SPECS, Key, Settings
from gui.worker.scheduler import ModelInfo


class SettingsDialog(QDialog):
    """Edits a copy of the settings; `accept()` stores what changed."""

    def __init__(
        self,
        settings: Settings,
        model: ModelInfo | None = None,
        parent: QWidget | None = None,
        pair: LanguagePair | None = None,
        has_tray: bool | None = None,
    ) -> None:
        """`pair`: the direction shown (the loaded model's, or the one asked for); defaults to the model's.
        `has_tray`: whether close-to-tray can work here (None: ask the desktop)."""
        super().__init__(parent)
        default_beams = model.default_beams if model else None
        if pair is None and model is not None:
            pair = model.pair
        self.pair = pair
        self.model = model
        self.settings = settings
        self.setWindowTitle(self.tr("Settings"))
        self.setObjectName("settingsDialog")
        self.setMinimumWidth(460)

        precision_labels = {
            "int8": self.tr("INT8: faster, smaller (recommended)"),
            "fp32": self.tr("FP32: full precision, slower"),
        }
        self.precision = self._combo(
            self.tr("Precision"), [(precision_labels.get(p, p.upper()), p) for p in PRECISIONS]
        )
        chinese = pair is None or pair.target.code == "zh"
        script_name = self.tr("Chinese script") if chinese else self.tr("Variant")
        self.script = self._combo(script_name, self._variant_items(pair))
        # Beside the script: what the model in use cannot write ("… writes Simplified only"), for the choice shown
        self.script_note = QLabel(self)
        self.script_note.setObjectName("scriptNote")
        self.script_note.setWordWrap(True)
        self.script.currentIndexChanged.connect(self._update_script_note)
        if default_beams == 1:  # one beam is greedy search: never "1 beams"
            default_label = self.tr("Model default (greedy)")
        elif default_beams:
            default_label = self.tr("Model default ({n} beams)").format(n=default_beams)
        else:
            default_label = self.tr("Model default")
        presets = [
            (self.tr("Fastest (greedy)"), 1),
            (self.tr("Balanced (2 beams)"), 2),
            (self.tr("Better (4 beams)"), 4),
            (self.tr("Best (6 beams, slowest)"), 6),
        ]
        self.quality = self._combo(
            self.tr("Quality"), [*((text, n) for text, n in presets if n <= MAX_BEAMS), (default_label, 0)]
        )
        self.join_lines = QCheckBox(self.tr("&Join lines broken by wrapping"), self)
        self.join_lines.setObjectName("joinLines")
        self.join_lines.setAccessibleName(self.tr("Join lines broken by wrapping"))
        self.join_lines.setToolTip(
            self.tr("Text copied from a PDF or an e-mail often breaks sentences over lines; translate them whole.")
        )
        self.normalize = QCheckBox(self.tr("&Normalise punctuation (full-width between Chinese)"), self)
        self.normalize.setObjectName("normalizePunctuation")
        self.normalize.setAccessibleName(self.tr("Normalise punctuation"))
        self.normalize.setToolTip(
            self.tr("Write ！？，：； between Chinese characters; numbers, Latin text and web addresses stay.")
        )
        if model is not None:  # offer only what the loaded bundle has
            self._limit(self.precision, model.available_precisions, self.tr("This model has no {v} files."))
        self.threads = QSpinBox(self)
        self.threads.setRange(0, MAX_THREADS)
        self.threads.setSpecialValueText(self.tr("Automatic"))
        self.threads.setAccessibleName(self.tr("Threads"))
        self.live = QCheckBox(self.tr("Translate as you type"), self)
        self.live.setAccessibleName(self.tr("Translate as you type"))
        self.live_delay = QSpinBox(self)
        self.live_delay.setRange(SPECS[Key.LIVE_DELAY_MS].minimum or 0, SPECS[Key.LIVE_DELAY_MS].maximum or 0)
        self.live_delay.setSingleStep(100)
        self.live_delay.setSuffix(self.tr(" ms"))
        self.live_delay.setAccessibleName(self.tr("Delay before translating while typing"))
        self.live.toggled.connect(self.live_delay.setEnabled)
        self.font_size = QSpinBox(self)
        self.font_size.setRange(SPECS[Key.FONT_SIZE].minimum or 8, SPECS[Key.FONT_SIZE].maximum or 48)
        self.font_size.setSuffix(self.tr(" pt"))
        self.font_size.setAccessibleName(self.tr("Text size"))
        self.language = self._combo(
            self.tr("Interface language"),
            [(self.tr("System default"), "system"), ("English", "en"), ("简体中文", "zh_CN")],
        )
        self.theme = self._combo(
            self.tr("Appearance"),
            [(self.tr("System default"), "system"), (self.tr("Light"), "light"), (self.tr("Dark"), "dark")],
        )

        form = self.form = QFormLayout()
        form.addRow(self._buddy(self.tr("&Precision:"), self.precision), self.precision)
        script_label = self.tr("Chinese &script:") if chinese else self.tr("&Variant:")
        form.addRow(self._buddy(script_label, self.script), self.script)
        form.addRow("", self.script_note)
        # A target without variants (zh→en) has nothing to choose; punctuation is normalised only in Chinese output
        form.setRowVisible(self.script, pair is None or bool(script_choices(pair)))
        form.setRowVisible(self.script_note, False)
        form.addRow(self._buddy(self.tr("&Quality:"), self.quality), self.quality)
        form.addRow("", self.join_lines)
        form.addRow("", self.normalize)
        form.setRowVisible(self.normalize, pair is None or pair.target.script == "han")
        form.addRow(self._buddy(self.tr("&Threads:"), self.threads), self.threads)
        form.addRow("", self.live)
        form.addRow(self._buddy(self.tr("&Delay:"), self.live_delay), self.live_delay)
        form.addRow(self._buddy(self.tr("Text si&ze:"), self.font_size), self.font_size)
        form.addRow(self._buddy(self.tr("Interface &language:"), self.language), self.language)
        form.addRow(self._buddy(self.tr("&Appearance:"), self.theme), self.theme)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults,
            self,
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        restore = self.buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        restore.clicked.connect(self.restore_defaults)

        if has_tray is None:
            from gui.desktop.tray import tray_available

            has_tray = tray_available()
        self.desktop = DesktopPage(has_tray, self)
        self.review = ReviewPage(self)
        general = QWidget(self)
        general.setLayout(form)
        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("settingsTabs")
        self.tabs.addTab(general, self.tr("&General"))
        self.tabs.addTab(self.review, self.tr("Re&view"))
        self.tabs.addTab(self.desktop, self.tr("Des&ktop"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.buttons)
        self.load_from(lambda key: settings.get(key))

    def _variant_items(self, pair: LanguagePair | None) -> list[tuple[str, str]]:
        """ "Simplified (简体)": the translated name with the native one; every script of the pair's target (also
        those the model cannot write: the note says so), or the two Chinese scripts while no pair is known."""
        if pair is None:
            return [(self.tr("Simplified (简体)"), "hans"), (self.tr("Traditional (繁體)"), "hant")]
        items = []
        for key in script_choices(pair):
            name = variant_name(pair, key)
            native = NATIVE_VARIANTS.get(key)
            items.append((f"{name} ({native})" if native and native != name else name, key))
        return items

    def _update_script_note(self) -> None:
        """Say beside the script when the loaded model cannot write the one chosen (its translations stay in the
        script it writes); nothing while no model of this pair is loaded."""
        model, pair = self.model, self.pair
        text = ""
        if model is not None and model.pair is not None and pair is not None and model.pair.key == pair.key:
            wanted = self.script.currentData()
            limit = script_limit(Path(model.bundle_dir).name, model.pair, wanted)
            if limit:
                written = variant_name(model.pair, chosen_variant(model.pair, wanted) or "")
                text = self.tr("{limit}: its translations are in {written}.").format(limit=limit, written=written)
        self.script_note.setText(text)
        self.form.setRowVisible(self.script_note, bool(text) and self.form.isRowVisible(self.script))

    def _combo(self, name: str, items: list[tuple[str, Any]]) -> QComboBox:
        combo = QComboBox(self)
        combo.setAccessibleName(name)
        for label, data in items:
            combo.addItem(label, data)
        return combo

    @staticmethod
    def _limit(combo: QComboBox, allowed: tuple[str, ...], why: str) -> None:
        model = combo.model()
        assert isinstance(model, QStandardItemModel)
        for row in range(combo.count()):
            value = combo.itemData(row)
            if value not in allowed:
                item = model.item(row)
                item.setEnabled(False)
                item.setToolTip(why.format(v=str(value).upper()))

    def _buddy(self, text: str, widget: QWidget) -> QLabel:
        label = QLabel(text, self)
        label.setBuddy(widget)
        return label

    @staticmethod
    def _select(combo: QComboBox, value: Any) -> None:
        index = combo.findData(value)
        combo.setCurrentIndex(max(index, 0))

    def load_from(self, get: Any) -> None:
        """Show the values `get(key)` returns."""
        self._select(self.precision, get(Key.PRECISION))
        self._select_variant(get(Key.VARIANT))
        self._select(self.quality, get(Key.BEAMS))
        self.join_lines.setChecked(get(Key.JOIN_WRAPPED_LINES))
        self.normalize.setChecked(get(Key.NORMALIZE_PUNCTUATION))
        self.threads.setValue(get(Key.THREADS))
        self.live.setChecked(get(Key.LIVE_TRANSLATE))
        self.live_delay.setValue(get(Key.LIVE_DELAY_MS))
        self.live_delay.setEnabled(self.live.isChecked())
        self.font_size.setValue(get(Key.FONT_SIZE))
        self._select(self.language, get(Key.UI_LANGUAGE))
        self._select(self.theme, get(Key.THEME))
        self.review.load_from(get)
        self.desktop.load_from(get)

    def _select_variant(self, value: str) -> None:
        """The stored variant, or the pair's default when this pair does not have it."""
        if self.script.findData(value) < 0 and self.pair is not None and self.pair.default_variant:
            value = self.pair.default_variant
        self._select(self.script, value)
        self._update_script_note()

    def restore_defaults(self) -> None:
        """Put the defaults in the form; nothing is stored until OK."""
        self.load_from(lambda key: SPECS[key].default)

    def values(self) -> dict[Key, Any]:
        """What OK stores; the variant only when this pair offers one (the choice is kept for the other pair)."""
        variant = {Key.VARIANT: self.script.currentData()} if self.script.count() else {}
        return {
            Key.PRECISION: self.precision.currentData(),
            **variant,
            Key.BEAMS: self.quality.currentData(),
            Key.JOIN_WRAPPED_LINES: self.join_lines.isChecked(),
            Key.NORMALIZE_PUNCTUATION: self.normalize.isChecked(),
            Key.THREADS: self.threads.value(),
            Key.LIVE_TRANSLATE: self.live.isChecked(),
            Key.LIVE_DELAY_MS: self.live_delay.value(),
            Key.FONT_SIZE: self.font_size.value(),
            Key.UI_LANGUAGE: self.language.currentData(),
            Key.THEME: self.theme.currentData(),
            **self.review.values(),
            **self.desktop.values(),
        }

    def accept(self) -> None:
        for key, value in self.values().items():
            self.settings.set(key, value)
        self.settings.sync()
        super().accept()
