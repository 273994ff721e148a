"""The Settings dialog's "Review" tab: the confidence underline (on/off, its threshold) and scrolling together."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QCheckBox, QFormLayout, QLabel, QSpinBox, QWidget

from gui.settings import SPECS, Key


class ReviewPage(QWidget):
    """Edits the review settings; the dialog stores `values()` on OK with everything else."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reviewPage")
        self.underline = QCheckBox(self.tr("&Underline words the model is unsure of"), self)
        self.underline.setObjectName("underlineUnsure")
        self.underline.setAccessibleName(self.tr("Underline words the model is unsure of"))
        self.underline.setToolTip(
            self.tr("A wavy line under the words the model gave a low probability: the places worth a second look.")
        )
        spec = SPECS[Key.CONFIDENCE_THRESHOLD]
        self.threshold = QSpinBox(self)
        self.threshold.setObjectName("unsureThreshold")
        self.threshold.setRange(spec.minimum or 1, spec.maximum or 99)
        self.threshold.setSuffix(self.tr(" %"))
        self.threshold.setAccessibleName(self.tr("Unsure below this probability"))
        self.threshold.setToolTip(
            self.tr("A word is underlined when the model's probability for it is below this; higher marks more.")
        )
        self.underline.toggled.connect(self.threshold.setEnabled)
        self.sync_scroll = QCheckBox(self.tr("&Scroll the panes together"), self)
        self.sync_scroll.setObjectName("syncScroll")
        self.sync_scroll.setAccessibleName(self.tr("Scroll the panes together"))
        self.sync_scroll.setToolTip(self.tr("Scrolling one pane shows the same sentences in the other."))
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)  # a percentage, not a line
        form.addRow("", self.underline)
        label = QLabel(self.tr("Unsure &below:"), self)
        label.setBuddy(self.threshold)
        form.addRow(label, self.threshold)
        form.addRow("", self.sync_scroll)

    def load_from(self, get: Any) -> None:
        self.underline.setChecked(get(Key.CONFIDENCE_UNDERLINE))
        self.threshold.setValue(get(Key.CONFIDENCE_THRESHOLD))
        self.threshold.setEnabled(self.underline.isChecked())
        self.sync_scroll.setChecked(get(Key.SYNC_SCROLL))

    def values(self) -> dict[Key, Any]:
        return {
            Key.CONFIDENCE_UNDERLINE: self.underline.isChecked(),
            Key.CONFIDENCE_THRESHOLD: self.threshold.value(),
            Key.SYNC_SCROLL: self.sync_scroll.isChecked(),
        }
