"""A one-line label that gives way: short of room it ends its text in "…" (the whole text in
its tooltip) instead of pushing its neighbours off the status bar."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel

MIN_WIDTH = 120  # what it keeps when squeezed: enough to read the first few words


class ElidedLabel(QLabel):
    """A `QLabel` of plain one-line text, elided at the right when narrower than the text."""

    def setText(self, text: str) -> None:
        super().setText(text)
        self.setToolTip(text)

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return QSize(min(MIN_WIDTH, hint.width()), hint.height())

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        area = self.contentsRect()
        shown = self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight, area.width())
        painter.drawText(area, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, shown)
