"""The Peak panel's ranked list: who is live at the live peak, one buffer (or group) a row, its
name given the room it needs before the columns that describe it."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QWidget

HEADERS = ("bytes", "share", "buffer", "op", "kind", "module or frame")
NAME_COLUMN, KIND_COLUMN, WHERE_COLUMN = 2, 4, 5
# The name's share of the room the figures leave, when the columns do not all fit whole: op and
# module are cut (in the middle, whole on hover) before the kind, a word of a few, and the kind
# before the name.
NAME_SHARE = 0.45
# Rows the list keeps in view however tall the levers under it grow (they scroll first): the
# largest buffers live at the peak are the panel's answer.
MIN_ROWS = 4


class RankedRows(QTreeWidget):
    """A list without sideways scrolling: the figures at their width, the name at its width or
    `NAME_SHARE` of what is left, the kind whole where it fits in the rest, op and module in
    proportion to their widths in what remains."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setRootIsDecorated(False)
        self.setUniformRowHeights(True)
        self.setHeaderLabels(list(HEADERS))
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        rows = self.topLevelItemCount()
        row = self.sizeHintForRow(0) if rows else self.fontMetrics().height() + 2
        return QSize(super().minimumSizeHint().width(), self.header().sizeHint().height()
                     + MIN_ROWS * row + 2 * self.frameWidth())

    def fit_columns(self) -> None:
        """Share the viewport's width among the shown columns (see the class)."""
        header = self.header()
        shown = [c for c in range(len(HEADERS)) if not self.isColumnHidden(c)]
        natural = {c: max(self.sizeHintForColumn(c), header.sectionSizeHint(c)) for c in shown}
        room = max(self.viewport().width() - natural.get(0, 0) - natural.get(1, 0), 0)
        described = [c for c in shown if c > NAME_COLUMN]
        wanted = sum(natural[c] for c in described)
        name = natural.get(NAME_COLUMN, 0)
        if name + wanted > room:
            name = min(name, max(int(room * NAME_SHARE), room - wanted))
            left = room - name
            if KIND_COLUMN in natural:
                natural[KIND_COLUMN] = min(natural[KIND_COLUMN], left)
                left -= natural[KIND_COLUMN]
            cut = [c for c in described if c != KIND_COLUMN]
            total = sum(natural[c] for c in cut)
            scale = left / total if total else 0.0
            for c in cut:
                natural[c] = int(natural[c] * scale)
        if NAME_COLUMN in natural:  # the name takes what the others leave
            natural[NAME_COLUMN] = room - sum(natural[c] for c in described)
        for c, width in natural.items():
            header.resizeSection(c, width)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.fit_columns()
