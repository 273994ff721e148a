"""The quick-translate popup: a small frameless always-on-top window near the mouse with the source (elided), the
streamed translation, and Copy / Open in window / Pin. Esc closes it; unpinned, it also hides when it loses focus.
Colours come from the application palette (light/dark) and texts from the installed translator (UI language)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, Qt, Signal
from PySide6.QtGui import QCursor, QGuiApplication, QKeyEvent, QPalette
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gui.quick.clipboard_text import copy_as_qiao
from gui.quick.placement import available_at, place

SOURCE_CHARS = 160  # the source line is a reminder of what was read, not a second text box
WIDTH = 420
MIN_LINES, MAX_LINES = 2, 14  # the result grows with the translation up to this, then scrolls


def elide(text: str, limit: int = SOURCE_CHARS) -> str:
    """One line, at most `limit` characters, an ellipsis where it was cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


class QuickPopup(QWidget):
    """Shows one request at a time; `begin` replaces whatever it showed (latest wins, as the worker's channel)."""

    open_in_window = Signal(str)  # the source text
    closed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(
            parent, Qt.WindowType.Tool | Qt.WindowType.FramelessWindowHint | Qt.WindowType.WindowStaysOnTopHint
        )
        self.setObjectName("quickPopup")
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, False)
        self.source_text = ""
        self.translation = ""
        self.state = "idle"  # idle | translating | done | failed | problem
        frame = self._frame = QFrame(self)
        frame.setObjectName("quickFrame")
        frame.setFrameShape(QFrame.Shape.StyledPanel)
        frame.setAutoFillBackground(True)
        frame.setBackgroundRole(QPalette.ColorRole.Window)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(frame)
        self.source_label = QLabel(frame)
        self.source_label.setObjectName("quickSource")
        self.source_label.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.source_label.setWordWrap(True)
        self.result = QPlainTextEdit(frame)
        self.result.setObjectName("quickResult")
        self.result.setReadOnly(True)
        self.result.setFrameShape(QFrame.Shape.NoFrame)
        self.result.setBackgroundRole(QPalette.ColorRole.Window)
        self.result.viewport().setAutoFillBackground(False)
        self.result.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        font = self.result.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)  # the translation is what the user came for
        self.result.setFont(font)
        # What the translation could not follow, briefly (a model that writes Simplified only while Traditional is
        # chosen); hidden when there is nothing to say
        self.note = QLabel(frame)
        self.note.setObjectName("quickNote")
        self.note.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.note.setWordWrap(True)
        self.note.hide()
        self.status = QLabel(frame)
        self.status.setObjectName("quickStatus")
        self.status.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.copy_button = QPushButton(frame)
        self.copy_button.clicked.connect(self.copy)
        self.window_button = QPushButton(frame)
        self.window_button.clicked.connect(self._open_in_window)
        self.pin_button = QToolButton(frame)
        self.pin_button.setCheckable(True)
        self.pin_button.setAutoRaise(True)
        self.pin_button.toggled.connect(self._retranslate)
        self.close_button = QToolButton(frame)
        self.close_button.setText("✕")
        self.close_button.setAutoRaise(True)
        self.close_button.clicked.connect(self.dismiss)
        top = QHBoxLayout()
        top.addWidget(self.source_label, 1)
        top.addWidget(self.pin_button, 0, Qt.AlignmentFlag.AlignTop)
        top.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.window_button)
        buttons.addWidget(self.copy_button)
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addLayout(top)
        layout.addWidget(self.result, 1)
        layout.addWidget(self.note)
        layout.addLayout(buttons)
        self.setFixedWidth(WIDTH)
        self._fit()
        self._retranslate()
        self._update_buttons()

    @property
    def pinned(self) -> bool:
        return self.pin_button.isChecked()

    def set_pinned(self, pinned: bool) -> None:
        self.pin_button.setChecked(pinned)

    # -- content ---------------------------------------------------------------------------------------------------

    def begin(self, source: str) -> None:
        """A new request: its source, an empty result, "Translating…"."""
        self.source_text, self.translation, self.state = source, "", "translating"
        self.source_label.setText(elide(source))
        self.source_label.setToolTip(source[:2000])
        self.result.clear()
        self.set_note("")
        self._set_status()
        self._update_buttons()
        self._fit()

    def append(self, delta: str) -> None:
        if self.state != "translating":
            return
        self.translation += delta
        self.result.setPlainText(self.translation)
        self.result.moveCursor(self.result.textCursor().MoveOperation.End)
        self._fit(grow_only=True)

    def finish(self, text: str, note: str = "") -> None:
        """The whole translation (the engine's final text wins over the streamed pieces), and `note`: what it could
        not follow, said under it ("" : nothing)."""
        self.translation, self.state = text, "done"
        self.result.setPlainText(text)
        self.set_note(note)
        self._set_status()
        self._update_buttons()
        self._fit(grow_only=not note)  # a note needs the popup taller even when the text did not grow

    def fail(self, message: str) -> None:
        self.state = "failed"
        self.result.setPlainText(message)
        self.set_note("")
        self._set_status()
        self._update_buttons()
        self._fit(grow_only=True)

    def show_problem(self, message: str, source: str = "") -> None:
        """Nothing to translate (empty, not text, too long): say why; "Open in window" still takes a long text."""
        self.source_text, self.translation, self.state = source, "", "problem"
        self.source_label.setText(elide(source) if source else "")
        self.result.setPlainText(message)
        self.set_note("")
        self._set_status()
        self._update_buttons()
        self._fit()

    def set_note(self, note: str) -> None:
        self.note.setText(note)
        self.note.setVisible(bool(note))
        self._describe()

    def _describe(self) -> None:
        """The translation's description for screen readers: the state ("Translating…") and the note under it,
        which a reader on the focused translation would otherwise never hear."""
        self.result.setAccessibleDescription(" ".join(t for t in (self.status.text(), self.note.text()) if t))

    # -- actions ---------------------------------------------------------------------------------------------------

    def copy(self) -> None:
        """The translation onto the clipboard, marked as Qiao's so watching does not translate it back."""
        if self.translation:
            copy_as_qiao(QGuiApplication.clipboard(), self.translation)
            self.status.setText(self.tr("Copied"))
            self._describe()

    def _open_in_window(self) -> None:
        if self.source_text:
            self.open_in_window.emit(self.source_text)
            if not self.pinned:
                self.dismiss()

    def dismiss(self) -> None:
        if self.isVisible():
            self.hide()
            self.closed.emit()

    def popup_at(self, cursor: QPoint | None = None) -> None:
        """Show near `cursor` (the mouse by default), on that screen, and take focus so Esc works."""
        cursor = QCursor.pos() if cursor is None else cursor
        self._fit()
        if not (self.isVisible() and self.pinned):  # a pinned popup stays where the user left it
            self.move(place(cursor, self.size(), available_at(cursor)))
        self.show()
        self.raise_()
        self.activateWindow()

    def _fit(self, grow_only: bool = False) -> None:
        """Height for the text (MIN_LINES to MAX_LINES lines), and still on screen when it grew while shown."""
        fm = self.result.fontMetrics()
        inner = WIDTH - 2 * 10 - 2 * int(self.result.document().documentMargin()) - 4
        text = self.result.toPlainText() or " "
        needed = fm.boundingRect(0, 0, inner, 100_000, int(Qt.TextFlag.TextWordWrap), text).height()
        lines = max(MIN_LINES, min(MAX_LINES, -(-needed // max(1, fm.lineSpacing()))))
        height = lines * fm.lineSpacing() + 2 * int(self.result.document().documentMargin()) + 4
        if grow_only and height <= self.result.height():
            return
        self.result.setFixedHeight(height)
        self._frame.layout().activate()  # hidden widgets' layouts are otherwise only computed on show
        self.layout().activate()
        self.resize(WIDTH, self.sizeHint().height())
        if self.isVisible():
            screen = available_at(self.geometry().center())
            if self.geometry().bottom() > screen.bottom():
                self.move(self.x(), max(screen.top(), screen.bottom() + 1 - self.height()))

    # -- Qt --------------------------------------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.dismiss()
            return
        super().keyPressEvent(event)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.LanguageChange:
            self._retranslate()
        elif event.type() == QEvent.Type.ActivationChange and not self.isActiveWindow() and not self.pinned:
            self.dismiss()
        super().changeEvent(event)

    def _retranslate(self) -> None:
        self.setWindowTitle(self.tr("Quick translate"))
        self.result.setAccessibleName(self.tr("Translation"))
        self.copy_button.setText(self.tr("&Copy"))
        self.window_button.setText(self.tr("Open in &window"))
        self.pin_button.setText(self.tr("Pin"))
        self.pin_button.setToolTip(
            self.tr("Pinned: stays open until you close it") if self.pinned else self.tr("Pin: keep the popup open")
        )
        self.pin_button.setAccessibleName(self.tr("Pin"))
        self.close_button.setToolTip(self.tr("Close (Esc)"))
        self.close_button.setAccessibleName(self.tr("Close"))
        self._set_status()

    def _set_status(self) -> None:
        texts = {
            "translating": self.tr("Translating…"),
            "done": "",
            "failed": self.tr("Translation failed"),
            "problem": "",
            "idle": "",
        }
        self.status.setText(texts[self.state])
        self._describe()

    def _update_buttons(self) -> None:
        self.copy_button.setEnabled(self.state == "done" and bool(self.translation))
        self.window_button.setEnabled(bool(self.source_text))
