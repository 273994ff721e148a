"""Fit a table's columns to its width: every column as wide as its contents, then the long ones (names, locations,
problems) cut down, widest first, to what the viewport leaves them, their text elided (the full text stays in the
tooltip), and the last column takes what is left. The Models dialog's tables then need no horizontal scrolling at
ordinary window widths (1220 px) with a dozen columns; the user can still drag a column wider.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QHeaderView, QTableWidget

MIN_WIDTH = 72  # a shrunk column keeps this many pixels (a few characters and the ellipsis)


class ColumnFit(QObject):
    """Keeps `table`'s columns fitted (`fit`) whenever its viewport changes size; call `fit` after filling it."""

    def __init__(self, table: QTableWidget, shrinkable: Sequence[int]) -> None:
        super().__init__(table)
        self.table, self.shrinkable = table, tuple(shrinkable)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)  # the user may still drag one wider
        header.setStretchLastSection(False)  # fit() gives the last column what is left
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        table.viewport().installEventFilter(self)

    def fit(self) -> None:
        fit(self.table, self.shrinkable)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize:
            self.fit()
        return False


def capped(widths: Sequence[int], shrinkable: Sequence[int], room: int, minimum: int = MIN_WIDTH) -> list[int]:
    """`widths` with the `shrinkable` columns capped at one width, the largest that makes them all fit in `room`
    (never below `minimum`, nor below a column's own width when that is smaller): the widest are cut first."""
    out = list(widths)
    if sum(out) <= room:
        return out
    fixed = sum(w for c, w in enumerate(out) if c not in shrinkable)
    wide = [out[c] for c in shrinkable]
    low, high = minimum, max(wide, default=minimum)
    while low < high:  # the largest cap whose total fits
        cap = (low + high + 1) // 2
        if fixed + sum(min(w, cap) for w in wide) <= room:
            low = cap
        else:
            high = cap - 1
    for c in shrinkable:
        out[c] = min(out[c], max(low, minimum))
    return out


def fit(table: QTableWidget, shrinkable: Sequence[int]) -> None:
    """Size the columns to their contents, cap the `shrinkable` ones so the whole row fits the viewport, and give
    the last column what is left (a stretched last section would keep a 100 px minimum and overflow)."""
    header = table.horizontalHeader()
    count = table.columnCount()
    natural = []
    for column in range(count):
        contents = table.sizeHintForColumn(column) if table.rowCount() else 0
        natural.append(max(contents, header.sectionSizeHint(column)))
    room = max(table.viewport().width(), 0)  # the vertical scroll bar, when shown, is outside it
    widths = capped(natural, shrinkable, room)
    if widths and sum(widths) < room:
        widths[-1] += room - sum(widths)
    for column, width in enumerate(widths):
        header.resizeSection(column, width)
