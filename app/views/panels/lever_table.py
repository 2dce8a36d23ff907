"""The Peak panel's levers table: one row a lever, as tall as its rows. What to change wraps
in the column the others leave (breaking inside a long token only where its line is too short),
so it reads whole at the dock's width where the lever saves bytes; elsewhere it takes one line.
A lever that saves bytes has an Apply button; how it was measured is in the row's tooltips."""

from __future__ import annotations

import math
from typing import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QTextLayout, QTextOption
from PySide6.QtWidgets import (QHBoxLayout, QHeaderView, QPushButton, QSizePolicy, QStyle,
                               QStyledItemDelegate, QStyleOptionViewItem, QTreeWidget,
                               QTreeWidgetItem, QWidget)

WRAP_ROLE = Qt.ItemDataRole.UserRole + 1  # whether a row's what to change wraps
COLUMNS = 5  # lever, saves, after, its button, what to change (how it was measured: tooltips)
BUTTON_COLUMN = 3
LEVER_ROWS_HEIGHT = 220  # pixels the levers take at most before they scroll


# A zero-width space after these lets a line break inside a long token such as
# PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True (the style wraps at word boundaries only and
# cuts a word longer than the line).
_BREAK_AFTER = str.maketrans({c: c + "\u200b" for c in "=:_/,"})


class WrappedText(QStyledItemDelegate):
    """A column whose text wraps at the column's width in the rows marked `WRAP_ROLE` (one
    line, cut at the end, in the others): a tree view asks its cells' heights without saying
    that width, so this works it out as the style draws the text."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        if index.data(WRAP_ROLE):
            option.text = option.text.translate(_BREAK_AFTER)
        else:
            option.features &= ~QStyleOptionViewItem.ViewItemFeature.WrapText

    def sizeHint(self, option, index) -> QSize:
        size = super().sizeHint(option, index)
        if not index.data(WRAP_ROLE):
            return size
        view = self.parent()
        margin = view.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1
        width = max(view.header().sectionSize(index.column()) - 2 * margin, 1)
        wrap = QTextOption()
        wrap.setWrapMode(QTextOption.WrapMode.WordWrap)
        text = QTextLayout(str(index.data() or "").translate(_BREAK_AFTER), option.font)
        text.setTextOption(wrap)
        text.beginLayout()
        height = 0.0
        line = text.createLine()
        while line.isValid():
            line.setLineWidth(width)
            height += line.height()
            line = text.createLine()
        text.endLayout()
        return QSize(size.width(), max(size.height(), math.ceil(height) + 4))


class LeverTable(QTreeWidget):
    """The levers, one row each, asking for the height of their rows: what to change wraps in
    the column left over, so it reads whole at the dock's width; a lever that saves bytes has
    an Apply button."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setRootIsDecorated(False)
        self.setWordWrap(True)
        self.setHeaderLabels(["lever", "saves", "after", "", "what to change"])
        header = self.header()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COLUMNS - 1, QHeaderView.ResizeMode.Stretch)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Maximum)
        self.setItemDelegateForColumn(COLUMNS - 1, WrappedText(self))
        # A wrapped row's height follows its column's width.
        header.sectionResized.connect(self.fit_rows)

    def add_button(self, item: QTreeWidgetItem, text: str, apply: Callable[[], None]) -> None:
        """An Apply button in `item`'s row, kept to one line's height, that calls `apply`;
        `text` says what it does."""
        button = QPushButton("Apply")
        button.setToolTip(text)
        button.setAccessibleName(text)
        button.clicked.connect(lambda checked=False: apply())
        holder = QWidget()
        line = QHBoxLayout(holder)
        line.setContentsMargins(2, 0, 2, 0)
        line.addWidget(button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.setItemWidget(item, BUTTON_COLUMN, holder)

    def apply_button(self, item: QTreeWidgetItem) -> QPushButton | None:
        """The Apply button in `item`'s row, if it has one."""
        holder = self.itemWidget(item, BUTTON_COLUMN)
        return holder.findChild(QPushButton) if holder is not None else None

    def fit_rows(self, *_) -> None:
        """Lay the rows out at the columns' widths and ask for their height anew."""
        self.doItemsLayout()
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        rows = sum(self.visualItemRect(self.topLevelItem(i)).height()
                   for i in range(self.topLevelItemCount()))
        height = self.header().sizeHint().height() + rows + 2 * self.frameWidth()
        return QSize(super().sizeHint().width(), min(height, LEVER_ROWS_HEIGHT))

    def minimumSizeHint(self) -> QSize:
        rows = self.topLevelItemCount()
        first = self.visualItemRect(self.topLevelItem(0)).height() if rows else 0
        return QSize(super().minimumSizeHint().width(),
                     self.header().sizeHint().height() + first + 2 * self.frameWidth())

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.fit_rows()
