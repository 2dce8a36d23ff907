"""The DAG's key, in a one-row strip above the drawing (never over a node): what the box colours
mean with the switch between colourings and the live-peak mark; while a hover or selection
colours nodes, the hover colours and what is live at the hovered node's step instead."""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFontMetrics, QLinearGradient, QPainter, QPen
from PySide6.QtWidgets import QComboBox, QWidget

from slabscope.app.views.common import palette
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.dag.dag_memory import BY_KIND, COLOURING_NAMES, COLOURINGS

MARGIN = 8          # pixels round the strip's contents
SWATCH = 10         # side of a colour swatch
TEXT_COLOR = QColor("#1D2330")
HOVER_KEYS = ((palette.ANCESTOR, "ancestors"), (palette.HOVERED, "hovered"),
              (palette.DESCENDANT, "descendants"))


class DagLegend(QWidget):
    """The key strip of `view` (a `DagView`): a colouring switch, then the scale or the kinds
    and the live peak, or while nodes are highlighted the hover colours (never in pictures)."""

    def __init__(self, view):
        super().__init__(view)
        self.view = view
        self.hover_text = ""  # what is live at the hovered node's step
        self.switch = QComboBox(self)
        self.switch.setToolTip("What the boxes' colour says (M cycles)")
        self.switch.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.switch.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.switch.activated.connect(lambda i: view.set_colouring(self.switch.itemData(i)))

    def row_height(self) -> int:
        """Pixels of one row: the switch's height."""
        return max(self.switch.sizeHint().height(), QFontMetrics(self.font()).height() + 4)

    def wanted_height(self) -> int:
        """The strip's height: one row, which the hover colours take over while they show
        (a second row would cost the drawing a row of boxes in the window's first view)."""
        return MARGIN + self.row_height() + MARGIN // 2

    def refresh(self) -> None:
        """Offer the colourings the graph supports, select the view's, and repaint."""
        offered = [c for c in COLOURINGS if c == BY_KIND or self.view.memory is not None]
        if [self.switch.itemData(i) for i in range(self.switch.count())] != offered:
            self.switch.clear()
            for key in offered:
                self.switch.addItem(f"colour: {COLOURING_NAMES[key]}", key)
            self.switch.resize(self.switch.sizeHint())
        self.switch.setCurrentIndex(max(0, self.switch.findData(self.view.colouring)))
        self.switch.move(MARGIN, MARGIN)
        self.update()

    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.fillRect(self.rect(), QColor("#F7F8FA"))
        painter.setPen(QColor("#D5D9E0"))
        painter.drawLine(0, self.height() - 1, self.width(), self.height() - 1)
        metrics = painter.fontMetrics()
        row = self.row_height()
        x = MARGIN + self.switch.width() + 12
        y = MARGIN + (row - metrics.height()) // 2
        if self.view.highlighting and not self.view.exporting:
            self._draw_hover_keys(painter, x, y, metrics)
        else:
            self._draw_peak(painter, self._draw_scale(painter, x, y, metrics), y, metrics)
        painter.end()

    def _draw_peak(self, painter: QPainter, x: int, y: int, metrics) -> None:
        """The live-peak mark and what it is, from `x`."""
        memory, peak = self.view.memory, self.view.peak_index
        if memory is None or memory.peak_node is None or peak is None:
            return
        # A small box between two brackets, as the live-peak node is drawn.
        painter.setPen(QPen(QColor("#CBD1DB"), 1))
        painter.setBrush(QColor("#FEEEDD"))
        painter.drawRect(QRectF(x + 4, y + 3, SWATCH, SWATCH))
        painter.setPen(QPen(PEAK_COLOUR, 2.5, Qt.PenStyle.SolidLine, Qt.PenCapStyle.FlatCap))
        for side in (x + 1, x + SWATCH + 7):
            painter.drawLine(QPointF(side, y + 1), QPointF(side, y + SWATCH + 5))
        text = (f"live peak: {format_bytes(memory.peak_bytes)} at "
                f"{self.view.shown_graph().nodes[peak].name}")
        painter.setPen(TEXT_COLOR)
        painter.drawText(x + SWATCH + 14, y + metrics.ascent(),
                         metrics.elidedText(text, Qt.TextElideMode.ElideRight,
                                            max(0, self.width() - x - SWATCH - 14 - MARGIN)))

    def _draw_hover_keys(self, painter: QPainter, x: int, y: int, metrics) -> None:
        """The hover colours and what is live at the hovered node's step, from `x`."""
        for colour, text in HOVER_KEYS:
            painter.setPen(QPen(colour.darker(130), 1))
            painter.setBrush(colour)
            painter.drawRect(QRectF(x, y + 3, SWATCH, SWATCH))
            painter.setPen(TEXT_COLOR)
            painter.drawText(x + SWATCH + 4, y + metrics.ascent(), text)
            x += SWATCH + 4 + metrics.horizontalAdvance(text) + 14
        if self.hover_text:
            painter.drawText(x, y + metrics.ascent(),
                             metrics.elidedText(self.hover_text, Qt.TextElideMode.ElideRight,
                                                max(0, self.width() - x - MARGIN)))

    def _draw_scale(self, painter: QPainter, x: int, y: int, metrics) -> int:
        """The colour scale (memory) or the kinds' swatches from `x`; returns where it ends."""
        view = self.view
        if view.colouring == BY_KIND:
            for kind, colour in view.kind_key():
                painter.setPen(QPen(colour.darker(130), 1))
                painter.setBrush(colour)
                painter.drawRect(QRectF(x, y + 3, SWATCH, SWATCH))
                painter.setPen(TEXT_COLOR)
                painter.drawText(x + SWATCH + 4, y + metrics.ascent(), kind)
                x += SWATCH + 4 + metrics.horizontalAdvance(kind) + 14
            return x
        top = view.scale_top()
        painter.setPen(TEXT_COLOR)
        painter.drawText(x, y + metrics.ascent(), "0")
        x += metrics.horizontalAdvance("0") + 4
        gradient = QLinearGradient(x, 0, x + 90, 0)
        for stop, colour in RAMP:
            gradient.setColorAt(stop, colour)
        painter.setPen(QPen(QColor("#9099A8"), 1))
        painter.setBrush(gradient)
        painter.drawRect(QRectF(x, y + 2, 90, SWATCH + 2))
        x += 94
        painter.setPen(TEXT_COLOR)
        text = format_bytes(top)
        painter.drawText(x, y + metrics.ascent(), text)
        return x + metrics.horizontalAdvance(text) + 18


# Pale, never dark: the bar under each box carries the magnitude, and black labels on a pale
# fill are read by OCR too (on the darker orange of an earlier scale a page read whole lost them).
RAMP = ((0.0, QColor("#FAFBFC")), (1.0, QColor("#FEEEDD")))
PEAK_COLOUR = QColor("#7B1FA2")  # the live-peak node's border: no hover colour uses it


def ramp_colour(t: float) -> QColor:
    """The scale's colour at `t` in [0, 1]."""
    t = min(1.0, max(0.0, t))
    for (a, ca), (b, cb) in zip(RAMP, RAMP[1:]):
        if t <= b:
            f = (t - a) / (b - a)
            return QColor.fromRgbF(*(ca.getRgbF()[i] * (1 - f) + cb.getRgbF()[i] * f
                                     for i in range(3)))
    return QColor(RAMP[-1][1])
