"""The translator window's widgets and their arrangement: the two panes (side by side or stacked) with ⇄ between
their headings, the button row under them, the model panel and the notice bar above, the status bar; the panes'
fonts and zoom, and the window's saved geometry.

It builds, words and sizes widgets; what they do is wired by gui.window.main_window and the parts it hands them to.
Its strings keep the "MainWindow" translation context they had when the window built them itself.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QCoreApplication, QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QCheckBox,
    QLabel,
    QMainWindow,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui.models.model_status import ModelStatusPanel
from gui.notice_bar import NoticeBar
from gui.settings import Key, Settings
from gui.window.button_row import ButtonRow
from gui.window.source_pane import SourcePane
from gui.window.target_pane import TargetPane


class StatusLabel(QLabel):
    """The status bar's message: one line that never pushes the precision label and the model indicator aside nor
    is cut off under them. A message wider than the room left is shown ending in "…", the whole of it as tooltip
    (and accessible description); `text()` is the whole message."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._full = ""
        # Takes the room the status bar has left, not the room its text would like (a QLabel's minimum is its text)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def setText(self, text: str) -> None:
        self._full = text
        self._elide()

    def text(self) -> str:
        return self._full

    def shown(self) -> str:
        """What the label shows now (the message, or its start and "…")."""
        return super().text()

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._elide()

    def _elide(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin()
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(0, width))
        if shown != super().text():
            super().setText(shown)
        whole = self._full if shown != self._full else ""
        self.setToolTip(whole)
        self.setAccessibleDescription(whole)


class WindowLayout:
    """The widgets of `window` (a QMainWindow: their parent, its central widget and status bar are filled here)."""

    def __init__(self, window: QMainWindow, settings: Settings) -> None:
        self.window = window
        self.settings = settings
        self.source_pane = SourcePane(window)
        self.target_pane = TargetPane(window)
        self.splitter = QSplitter(window)
        self.splitter.setObjectName("splitter")
        self.splitter.setChildrenCollapsible(False)
        self.splitter.addWidget(self.source_pane)
        self.splitter.addWidget(self.target_pane)
        self.swap_button = QToolButton(window)
        self.swap_button.setObjectName("swapButton")
        self.swap_button.setText("⇄")
        self.swap_button.setAutoRaise(True)
        arrow_font = self.swap_button.font()
        arrow_font.setPointSizeF(arrow_font.pointSizeF() * 1.4)  # ⇄ is a small glyph at the UI size
        self.swap_button.setFont(arrow_font)
        self.target_pane.head.insertWidget(0, self.swap_button)
        # Both heading rows as tall as the button, so the two editors start at the same height
        self.source_pane.heading.setMinimumHeight(self.swap_button.sizeHint().height())

        self.translate_button = QPushButton(window)
        self.translate_button.setObjectName("translateButton")
        self.cancel_button = QPushButton(window)
        self.cancel_button.setObjectName("cancelButton")
        self.live_check = QCheckBox(window)
        self.live_check.setObjectName("liveCheck")
        self.live_check.setChecked(settings.get(Key.LIVE_TRANSLATE))
        self.live_check.toggled.connect(lambda on: settings.set(Key.LIVE_TRANSLATE, on))
        self.clear_button = QPushButton(window)
        self.clear_button.setObjectName("clearButton")
        self.copy_button = QPushButton(window)
        self.copy_button.setObjectName("copyButton")
        for b in (self.translate_button, self.cancel_button, self.clear_button, self.copy_button):
            b.setAutoDefault(False)
        self.translate_button.setDefault(True)  # drawn as the primary action; Return still types a newline
        self.button_row = ButtonRow(
            [self.translate_button, self.cancel_button, 12, self.live_check],
            [self.clear_button, self.copy_button],
            window,
        )

        self.notice = NoticeBar(window)
        self.model_panel = ModelStatusPanel(window)

        central = QWidget(window)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(10, 8, 10, 4)
        layout.addWidget(self.model_panel)
        layout.addWidget(self.notice)
        layout.addWidget(self.splitter, 1)
        layout.addWidget(self.button_row)
        window.setCentralWidget(central)

        self.status_label = StatusLabel(window)
        self.status_label.setObjectName("statusLabel")
        self.status_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.progress = QProgressBar(window)
        self.progress.setObjectName("progress")
        self.progress.setTextVisible(True)
        self.progress.hide()
        self.precision_label = QLabel(window)
        self.precision_label.setObjectName("precisionLabel")
        window.statusBar().addWidget(self.status_label, 1)
        window.statusBar().addPermanentWidget(self.progress)
        window.statusBar().addPermanentWidget(self.precision_label)

    def retranslate(self) -> None:
        """The widgets' own strings (the menus and the panes' headings are worded by their owners)."""
        self.translate_button.setText(QCoreApplication.translate("MainWindow", "&Translate"))
        self.translate_button.setToolTip(QCoreApplication.translate("MainWindow", "Translate (Ctrl+Enter)"))
        self.translate_button.setAccessibleName(QCoreApplication.translate("MainWindow", "Translate"))
        self.cancel_button.setText(QCoreApplication.translate("MainWindow", "Cancel"))
        self.cancel_button.setToolTip(
            QCoreApplication.translate("MainWindow", "Stop translating and keep what is done (Esc)")
        )
        self.cancel_button.setAccessibleName(QCoreApplication.translate("MainWindow", "Cancel translation"))
        self.live_check.setText(QCoreApplication.translate("MainWindow", "Translate as you t&ype"))
        self.live_check.setAccessibleName(QCoreApplication.translate("MainWindow", "Translate as you type"))
        self.clear_button.setText(QCoreApplication.translate("MainWindow", "C&lear"))
        self.clear_button.setToolTip(
            QCoreApplication.translate(
                "MainWindow", "Clear both panes (Ctrl+Shift+Backspace); Ctrl+Z brings the text back"
            )
        )
        self.clear_button.setAccessibleName(QCoreApplication.translate("MainWindow", "Clear"))
        self.copy_button.setText(QCoreApplication.translate("MainWindow", "&Copy translation"))
        self.copy_button.setToolTip(QCoreApplication.translate("MainWindow", "Copy the translation (Ctrl+Shift+C)"))
        self.copy_button.setAccessibleName(QCoreApplication.translate("MainWindow", "Copy translation"))
        self.progress.setAccessibleName(QCoreApplication.translate("MainWindow", "Sentences translated"))
        self.progress.setFormat(QCoreApplication.translate("MainWindow", "%v / %m sentences"))
        self.size_progress()
        self.status_label.setAccessibleName(QCoreApplication.translate("MainWindow", "Status"))
        self.precision_label.setAccessibleName(QCoreApplication.translate("MainWindow", "Precision"))
        self.precision_label.setToolTip(
            QCoreApplication.translate("MainWindow", "Model precision (change it in Settings)")
        )
        self.splitter.setAccessibleName(QCoreApplication.translate("MainWindow", "Source and translation"))

    def size_progress(self) -> None:
        """Wide enough for "1000 / 1000 sentences" at its largest value, so the text never wraps or clips."""
        top = max(self.progress.maximum(), 10)
        text = self.progress.format().replace("%v", str(top)).replace("%m", str(top)).replace("%p", "100")
        metrics = self.progress.fontMetrics()
        self.progress.setFixedWidth(metrics.horizontalAdvance(text) + 2 * metrics.height())

    def apply_fonts(self) -> None:
        """Each pane's font follows its language's script (the CJK faces on whichever pane is Chinese)."""
        size = self.settings.get(Key.FONT_SIZE)
        self.source_pane.apply_font(size)
        self.target_pane.apply_font(size)

    def zoom(self, step: int) -> None:
        """Larger or smaller text (View menu, Ctrl+= / Ctrl+-): the font size setting, a beep at its limits."""
        size = self.settings.get(Key.FONT_SIZE) + step
        try:
            self.settings.set(Key.FONT_SIZE, size)
        except ValueError:
            QApplication.beep()

    def apply_orientation(self) -> None:
        stacked = self.settings.get(Key.STACKED)
        self.splitter.setOrientation(Qt.Orientation.Vertical if stacked else Qt.Orientation.Horizontal)

    def show_live(self, on: bool) -> None:
        """The "Translate as you type" box follows the setting (without setting it again)."""
        self.live_check.blockSignals(True)
        self.live_check.setChecked(on)
        self.live_check.blockSignals(False)

    def restore_geometry(self) -> None:
        """The window's size and place and the panes' split as they were left; a default size the first time."""
        geometry = self.settings.get(Key.WINDOW_GEOMETRY)
        if not (geometry and self.window.restoreGeometry(QByteArray(geometry))):
            self.window.resize(1000, 620)
        splitter = self.settings.get(Key.SPLITTER_STATE)
        if splitter:
            self.splitter.restoreState(QByteArray(splitter))
            self.apply_orientation()  # the saved state carries an orientation; the setting decides

    def save_geometry(self) -> None:
        self.settings.set(Key.WINDOW_GEOMETRY, bytes(self.window.saveGeometry().data()))
        self.settings.set(Key.SPLITTER_STATE, bytes(self.splitter.saveState().data()))
