"""The row of buttons under the panes: one line when the window is wide enough, two when it is not.

A plain QHBoxLayout's minimum width is the sum of its buttons, so a narrow window (480 px) either cannot shrink or
clips them; this row reports the narrower two-line minimum instead and wraps when one line no longer fits.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QHBoxLayout, QLayout, QWidget


class ButtonRow(QWidget):
    """`left` controls flush left, `right` ones flush right; the right group moves below the left when needed."""

    def __init__(self, left: list[QWidget | int], right: list[QWidget], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("buttonRow")
        self.left = QWidget(self)
        left_box = QHBoxLayout(self.left)
        left_box.setContentsMargins(0, 0, 0, 0)
        for item in left:
            if isinstance(item, int):
                left_box.addSpacing(item)
            else:
                left_box.addWidget(item)
        left_box.addStretch(1)
        self.right = QWidget(self)
        right_box = QHBoxLayout(self.right)
        right_box.setContentsMargins(0, 0, 0, 0)
        right_box.addStretch(1)
        for w in right:
            right_box.addWidget(w)
        self.box = QBoxLayout(QBoxLayout.Direction.LeftToRight, self)
        self.box.setContentsMargins(0, 0, 0, 0)
        self.box.setSizeConstraint(QLayout.SizeConstraint.SetNoConstraint)
        self.box.addWidget(self.left, 1)
        self.box.addWidget(self.right, 0)

    def one_line_width(self) -> int:
        return self.left.sizeHint().width() + self.box.spacing() + self.right.sizeHint().width()

    def wrapped(self) -> bool:
        return self.box.direction() == QBoxLayout.Direction.TopToBottom

    def minimumSizeHint(self) -> QSize:
        width = max(self.left.sizeHint().width(), self.right.sizeHint().width())
        return QSize(width, self.box.minimumSize().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.arrange(event.size().width())
        super().resizeEvent(event)

    def arrange(self, width: int) -> None:
        """One line if everything fits at its preferred size, else two."""
        want = QBoxLayout.Direction.LeftToRight if width >= self.one_line_width() else QBoxLayout.Direction.TopToBottom
        if self.box.direction() != want:
            self.box.setDirection(want)
            self.updateGeometry()
