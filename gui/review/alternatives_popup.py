"""The click-a-word popup: a list of alternatives, each the whole sentence as it would become.

Each row shows the unchanged start plainly and the changed part (the alternative word, prominent, and the rest of
the sentence re-decoded after it) in the palette's accent colour, so the reader sees at a glance what a choice
rewrites. The popup knows nothing of the engine: the controller (gui.review.alternatives_controller) fills it, first
with
the bare words (their rest "…"), then again as the rests are decoded: `set_alternatives` updates the rows in place,
so the row the user is on stays current.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtCore import QEvent, QModelIndex, QObject, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QGuiApplication,
    QHideEvent,
    QKeyEvent,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from engine.results import Alternative

PARTS_ROLE = Qt.ItemDataRole.UserRole + 1  # (head, word, rest) of a row
ALT_ROLE = Qt.ItemDataRole.UserRole + 2  # the row's Alternative (None for the "Loading…" / message row)
MAX_WIDTH = 560  # px: longer sentences wrap
MIN_WIDTH = 220
MAX_ROWS_SHOWN = 8
# keys the list keeps (choosing); other keys with text, and these editing keys, go on to the editor
NAVIGATION = {Qt.Key.Key_Up, Qt.Key.Key_Down, Qt.Key.Key_PageUp, Qt.Key.Key_PageDown, Qt.Key.Key_Home, Qt.Key.Key_End}
EDITING = {Qt.Key.Key_Backspace, Qt.Key.Key_Delete, Qt.Key.Key_Left, Qt.Key.Key_Right}
MODIFIERS = {Qt.Key.Key_Shift, Qt.Key.Key_Control, Qt.Key.Key_Alt, Qt.Key.Key_Meta, Qt.Key.Key_AltGr}
PENDING = "…"  # shown after a rest that is still being decoded


def row_key(alt: Alternative) -> tuple:
    """What identifies a row across updates: its word at the position (the rest changes as it is decoded)."""
    if alt.position is not None:
        return (alt.position, tuple(alt.tokens[: alt.position + 1]))
    return (None, tuple(alt.tokens))


def split_alternative(current: str, prefix_end: int, text: str, word: str = "") -> tuple[str, str, str]:
    """(unchanged start, the alternative word, the changed rest) of an alternative's `text`.

    `prefix_end` is where the changed position starts in `current` (the sentence as shown); the start is the part
    both texts share up to there (detokenisation may differ slightly). Without a `word` (an n-best entry), the
    changed part begins where the texts first differ."""
    shared = next((i for i, (a, b) in enumerate(zip(current, text)) if a != b), min(len(current), len(text)))
    head_len = min(prefix_end, shared)
    wanted = word.strip()
    start = head_len
    while start < len(text) and text[start].isspace() and not text.startswith(wanted, start):
        start += 1
    if wanted and text.startswith(wanted, start):
        return text[:start], wanted, text[start + len(wanted) :]
    return text[:head_len], "", text[head_len:]


def blend(palette: QPalette, fore: QPalette.ColorRole, back: QPalette.ColorRole, share: float) -> QColor:
    """`share` of `fore` over `back`, opaque: a colour with the theme's contrast whatever its lightness."""
    a = palette.color(QPalette.ColorGroup.Active, fore)
    b = palette.color(QPalette.ColorGroup.Active, back)
    mix = [round(x * share + y * (1 - share)) for x, y in zip(a.getRgb()[:3], b.getRgb()[:3], strict=True)]
    return QColor(*mix)


def muted(palette: QPalette) -> str:
    """A message row's colour: halfway from the text to the background (rich text drops the alpha that the
    palette's placeholder colour relies on)."""
    return blend(palette, QPalette.ColorRole.Text, QPalette.ColorRole.Base, 0.5).name()


def row_html(parts: tuple[str, str, str], palette: QPalette, selected: bool) -> str:
    """A row as rich text: the start plain, the word bold and larger, the rest emphasised (accent colour; when
    the row is selected, everything in the selection's text colour and the rest underlined)."""
    head, word, rest = (html.escape(p) for p in parts)
    if selected:
        plain = palette.color(QPalette.ColorRole.HighlightedText).name()
        accent, deco = plain, "underline"
    else:
        plain = palette.color(QPalette.ColorRole.Text).name()
        accent, deco = palette.color(QPalette.ColorRole.Link).name(), "none"
    out = f'<span style="color:{plain}">{head}</span>'
    if word:
        out += f'<span style="color:{accent}; font-weight:bold; font-size:large">{word}</span>'
    if rest:
        out += f'<span style="color:{accent}; text-decoration:{deco}">{rest}</span>'
    return out


class _RowDelegate(QStyledItemDelegate):
    """Paints a row's parts as rich text, wrapped to the list's width."""

    def _document(self, option: QStyleOptionViewItem, index: QModelIndex, width: int) -> QTextDocument:
        doc = QTextDocument()
        doc.setDocumentMargin(6)
        doc.setDefaultFont(option.font)
        parts = index.data(PARTS_ROLE)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        if parts is None:  # a message row ("Loading…")
            color = muted(option.palette)
            doc.setHtml(f'<span style="color:{color}">{html.escape(str(index.data()))}</span>')
        else:
            doc.setHtml(row_html(parts, option.palette, selected))
        doc.setTextWidth(max(width, 40))
        return doc

    def _width(self, option: QStyleOptionViewItem) -> int:
        view = self.parent()
        if isinstance(view, QListWidget):
            return view.viewport().width()
        return option.rect.width()

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        text_free = QStyleOptionViewItem(opt)
        text_free.text = ""
        style = opt.widget.style() if opt.widget is not None else QGuiApplication.instance().style()  # type: ignore[union-attr]
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, text_free, painter, opt.widget)
        doc = self._document(opt, index, opt.rect.width())
        painter.save()
        painter.translate(opt.rect.topLeft())
        painter.setClipRect(QRect(0, 0, opt.rect.width(), opt.rect.height()))
        context = QAbstractTextDocumentLayout.PaintContext()
        doc.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        width = self._width(opt)
        doc = self._document(opt, index, width)
        return QSize(width, int(doc.size().height()) + 2)


class AlternativesPopup(QFrame):
    """A Qt.Popup frame at the clicked word: a heading ("Instead of “…”") and the list.

    Up/Down choose, Enter or a click takes (`chosen`), Esc or a click outside closes (`dismissed`)."""

    chosen = Signal(object)  # the Alternative taken
    dismissed = Signal()  # closed without a choice

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setObjectName("alternativesPopup")
        self.setFrameShape(QFrame.Shape.NoFrame)  # paintEvent draws the edge
        self.setAccessibleName(self.tr("Alternatives"))
        self.heading = QLabel(self)
        self.heading.setObjectName("alternativesHeading")
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.list = QListWidget(self)
        self.list.setObjectName("alternativesList")
        self.list.setItemDelegate(_RowDelegate(self.list))
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setVerticalScrollMode(QListWidget.ScrollMode.ScrollPerPixel)
        self.list.setWordWrap(True)
        self.list.setFrameShape(QFrame.Shape.NoFrame)
        self.list.itemClicked.connect(self._take)
        self.list.installEventFilter(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(2)
        layout.addWidget(self.heading)
        layout.addWidget(self.list)
        self._current = ""
        self._prefix_end = 0
        self._anchor = QRect()
        self._taken = False
        self.forward_to: QWidget | None = None  # where typing goes on (the editor the popup belongs to)

    # ---- filling ------------------------------------------------------------------------------------------------

    def open_at(self, anchor: QRect, current: str, prefix_end: int, word: str = "") -> None:
        """Show "Loading…" under `anchor` (the word's rectangle, global coordinates). `current` is the sentence as
        shown, `prefix_end` where the alternatives start in it, `word` the text they replace ("" for n-best)."""
        self._current, self._prefix_end, self._anchor, self._taken = current, prefix_end, QRect(anchor), False
        if word.strip():
            self.heading.setText(self.tr("Instead of “{word}”:").format(word=word.strip()))
            self.list.setAccessibleName(self.tr("Alternatives for “{word}”").format(word=word.strip()))
        else:
            self.heading.setText(self.tr("Other translations of this sentence:"))
            self.list.setAccessibleName(self.tr("Other translations of this sentence"))
        self.set_message(self.tr("Loading…"))
        self.show()
        self.list.setFocus(Qt.FocusReason.PopupFocusReason)

    def set_text_font(self, font: QFont) -> None:
        """The rows in the translation's own font (its Chinese faces and the user's zoom); the heading keeps the
        interface font."""
        self.list.setFont(font)

    def set_message(self, text: str) -> None:
        """One row that cannot be taken: "Loading…", "No alternatives", a failure."""
        self.list.clear()
        item = QListWidgetItem(text)
        item.setFlags(Qt.ItemFlag.NoItemFlags)  # not current, not selectable: it does not look like a choice
        item.setData(ALT_ROLE, None)
        self.list.addItem(item)
        self.list.setCurrentRow(-1)
        self._fit()

    def set_alternatives(self, alternatives: Sequence[Alternative]) -> None:
        """The rows, best first. The first fill makes the first row current so Enter takes it; a later fill of the
        same opening (the rests decoded further) updates the rows and keeps the current one (by its word)."""
        rows = [a for a in alternatives if not a.complete or a.text != self._current]
        if not rows:
            self.set_message(self.tr("No alternatives found"))
            return
        shown = self.alternatives()
        current = self.current()
        if [row_key(a) for a in shown] == [row_key(a) for a in rows]:
            for i, alt in enumerate(rows):  # in place: the selection and the scroll position stay
                self._fill(self.list.item(i), alt)
        else:
            self.list.clear()
            for alt in rows:
                item = QListWidgetItem()
                self._fill(item, alt)
                self.list.addItem(item)
            keys = [row_key(a) for a in rows]
            keep = keys.index(row_key(current)) if current is not None and row_key(current) in keys else 0
            self.list.setCurrentRow(keep)
        self._fit()

    def _fill(self, item: QListWidgetItem, alt: Alternative) -> None:
        prefix_end = self._prefix_end if alt.position is not None else len(self._current)
        head, word, rest = split_alternative(self._current, prefix_end, alt.text, alt.word)
        shown = alt.text if alt.complete else alt.text + PENDING
        item.setText(shown)
        item.setData(PARTS_ROLE, (head, word, rest if alt.complete else rest + PENDING))
        item.setData(ALT_ROLE, alt)
        item.setData(Qt.ItemDataRole.AccessibleTextRole, shown)
        if word:
            item.setData(Qt.ItemDataRole.AccessibleDescriptionRole, self.tr("“{word}”").format(word=word))
        item.setToolTip(shown)

    def alternatives(self) -> list[Alternative]:
        """The rows that can be taken, in order."""
        found = (self.list.item(i).data(ALT_ROLE) for i in range(self.list.count()))
        return [a for a in found if a is not None]

    def current(self) -> Alternative | None:
        item = self.list.currentItem()
        return item.data(ALT_ROLE) if item is not None else None

    # ---- geometry -----------------------------------------------------------------------------------------------

    def _fit(self) -> None:
        """As wide as the longest row (wrapped beyond MAX_WIDTH), as tall as its rows (scrolling beyond a few), and
        under the word, or above it where the screen ends."""
        metrics = self.list.fontMetrics()
        # the sentence as shown counts too: rows whose rests are still coming grow towards about its length, and a
        # popup sized for them at once does not widen under the pointer at every update
        texts = [self.list.item(i).text() for i in range(self.list.count())] + [self.heading.text(), self._current]
        ideal = max((metrics.horizontalAdvance(t) * 1.15 + 24 for t in texts), default=MIN_WIDTH)
        screen = QGuiApplication.screenAt(self._anchor.center()) or QGuiApplication.primaryScreen()
        area = screen.availableGeometry()
        width = int(min(max(ideal, MIN_WIDTH), MAX_WIDTH, area.width() - 16))
        self.list.setFixedWidth(width)
        self.list.doItemsLayout()
        heights = [self.list.sizeHintForRow(i) for i in range(min(self.list.count(), MAX_ROWS_SHOWN))]
        self.list.setFixedHeight(sum(heights) + 2 * self.list.frameWidth() + 2)
        self.adjustSize()
        x = min(max(self._anchor.left(), area.left()), area.right() - self.width())
        y = self._anchor.bottom() + 2
        if y + self.height() > area.bottom() and self._anchor.top() - self.height() - 2 >= area.top():
            y = self._anchor.top() - self.height() - 2
        self.move(QPoint(x, y))

    def paintEvent(self, event: QPaintEvent) -> None:
        """A 1 px edge a third of the way from the background to the text: visible in dark themes too, where the
        style's panel frame is as dark as the editor behind the popup."""
        super().paintEvent(event)
        painter = QPainter(self)
        painter.setPen(blend(self.palette(), QPalette.ColorRole.WindowText, QPalette.ColorRole.Window, 0.35))
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
        painter.end()

    # ---- choosing -----------------------------------------------------------------------------------------------

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.list and event.type() == QEvent.Type.KeyPress:
            key = event.key()  # type: ignore[attr-defined]
            if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
                self._take(self.list.currentItem())
                return True
            if key == Qt.Key.Key_Escape:
                self.close()
                return True
            if key not in NAVIGATION and self._pass_on(event):  # type: ignore[arg-type]
                return True
        return super().eventFilter(watched, event)

    def _pass_on(self, event: QKeyEvent) -> bool:
        """Typing while the popup is open goes on in the text (the popup closes), as if it had never opened: a
        click into an editable translation must not swallow the keys that follow."""
        target = self.forward_to
        if target is None or event.key() in MODIFIERS or not (event.text() or event.key() in EDITING):
            return False
        self.close()
        copy = QKeyEvent(
            event.type(), event.key(), event.modifiers(), event.text(), event.isAutoRepeat(), event.count()
        )
        QApplication.sendEvent(target, copy)
        return True

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
            return
        super().keyPressEvent(event)

    def _take(self, item: QListWidgetItem | None) -> None:
        alt = item.data(ALT_ROLE) if item is not None else None
        if alt is None:  # "Loading…" or a message: nothing to take yet
            return
        self._taken = True
        self.close()
        self.chosen.emit(alt)

    def hideEvent(self, event: QHideEvent) -> None:
        """Esc, a click outside (Qt closes a popup itself) or the controller: all end here, once per opening."""
        super().hideEvent(event)
        if not self._taken:
            self._taken = True
            self.dismissed.emit()
