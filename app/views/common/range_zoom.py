"""A plot view box the mouse zooms into a range of: drag across a range to show just that range.

Shift+drag (or the middle button) pans, the wheel zooms around the pointer, a double click
shows everything again. Only the axes the view box lets the mouse move are zoomed.
"""

from __future__ import annotations

from typing import Callable

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt

MIN_DRAG_PIXELS = 4  # shorter drags are taken for a shaky click, not a range


class RangeZoomViewBox(pg.ViewBox):
    """`pg.ViewBox` with a left-drag that zooms into the dragged range; `on_fit()` runs on a
    double click (default: show everything)."""

    def __init__(self, *args, x_margin_pixels: float | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.on_fit: Callable[[], None] = self.autoRange
        # A fit leaves this many pixels beside the data on the x axis (None: pyqtgraph's
        # default, a fraction of the range that grows as the view shrinks).
        self.x_margin_pixels = x_margin_pixels

    def suggestPadding(self, axis: int) -> float:
        """The fraction of the data range a fit adds on each side of `axis`."""
        if axis == 0 and self.x_margin_pixels is not None:
            return self.x_margin_pixels / max(self.width(), 1.0)
        return super().suggestPadding(axis)

    def mouseDragEvent(self, ev, axis=None):
        pans = ev.modifiers() & Qt.KeyboardModifier.ShiftModifier
        if ev.button() != Qt.MouseButton.LeftButton or pans or axis is not None:
            super().mouseDragEvent(ev, axis)
            return
        ev.accept()
        start, end = ev.buttonDownPos(ev.button()), ev.pos()
        if not ev.isFinish():
            self.updateScaleBox(start, end)
            return
        self.rbScaleBox.hide()
        if max(abs(end.x() - start.x()), abs(end.y() - start.y())) < MIN_DRAG_PIXELS:
            return
        self.zoom_to(self.childGroup.mapRectFromParent(QRectF(start, end)).normalized())

    def zoom_to(self, rect: QRectF) -> None:
        """Show `rect` (data coordinates) along the axes the mouse may zoom."""
        x_free, y_free = self.state["mouseEnabled"]
        if x_free and rect.width() > 0:
            self.setXRange(rect.left(), rect.right(), padding=0)
        if y_free and rect.height() > 0:
            self.setYRange(rect.top(), rect.bottom(), padding=0)
        self.sigRangeChangedManually.emit(self.state["mouseEnabled"])

    def mouseClickEvent(self, ev):
        if ev.double() and ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self.on_fit()
        else:
            super().mouseClickEvent(ev)
