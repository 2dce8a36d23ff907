"""The Compare view: both runs' live bytes over one step axis, both live peaks marked, and the
live peak's difference attributed by a grouping; selecting a row fills those buffers' bytes
under both curves."""

from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel,
                               QSplitter, QStackedWidget, QTableWidget, QTableWidgetItem,
                               QVBoxLayout, QWidget)

from slabscope.app.views.common.byte_axis import ByteAxis, format_bytes
from slabscope.app.views.common.range_zoom import RangeZoomViewBox
from slabscope.app.views.compare.comparison import Comparison

A_COLOR = QColor("#4C78A8")
B_COLOR = QColor("#E45756")
FILL_ALPHA = 110
EMPTY_TEXT = ("File ▸ Compare With… (or drop a second file with Shift held) compares the open "
              "graph with another run: both live-bytes curves, and what changed at the live peak.")
COLUMNS = ("key", "A", "B", "B − A", "# A", "# B")
COLUMN_TIPS = ("", "bytes live at A's live peak", "bytes live at B's live peak", "B's bytes minus A's",
               "buffers live at A's live peak", "buffers live at B's live peak")
GROUPING_NAMES = {"op": "op", "kind": "kind", "module": "module", "frame": "frame (first user code)"}


def signed_bytes(size: int) -> str:
    """A difference with its sign, in the views' byte units."""
    return ("+" if size > 0 else "−" if size < 0 else "±") + format_bytes(abs(size))


class CompareView(QWidget):
    """Shows one `Comparison` (`show_comparison`), or says how to start one."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.comparison: Comparison | None = None
        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setTextFormat(Qt.TextFormat.PlainText)  # messages name files: never markup
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.summary = QLabel()
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setWordWrap(True)
        self.plot_widget = pg.PlotWidget(background="w", viewBox=RangeZoomViewBox(),
                                         axisItems={"left": ByteAxis("left")})
        plot = self.plot_widget.getPlotItem()
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.setLabel("left", "live bytes")
        plot.getAxis("left").setWidth(self.fontMetrics().horizontalAdvance("1,000.0 KiB") + 28)
        plot.showGrid(y=True, alpha=0.15)
        plot.setDownsampling(auto=True, mode="peak")  # snapshots have tens of thousands of steps
        plot.setClipToView(True)
        plot.getViewBox().setMouseEnabled(x=True, y=False)
        self.fills = {side: pg.PlotDataItem(fillLevel=0, pen=None) for side in "ab"}
        # No legend: the summary above names A and B in the curves' colours.
        self.curves = {"a": plot.plot(pen=pg.mkPen(A_COLOR, width=1.5)),
                       "b": plot.plot(pen=pg.mkPen(B_COLOR, width=1.5))}
        self.peaks = {side: pg.ScatterPlotItem(size=10, symbol="t", pen=pg.mkPen("k"),
                                               brush=color)
                      for side, color in (("a", A_COLOR), ("b", B_COLOR))}
        self.peak_labels = {side: pg.TextItem(color=color, anchor=(0.5, 1.2))
                            for side, color in (("a", A_COLOR), ("b", B_COLOR))}
        for side in "ab":
            plot.addItem(self.fills[side])
            self.fills[side].setZValue(-1)  # under the curves
            plot.addItem(self.peaks[side])
            plot.addItem(self.peak_labels[side])
        self.grouping = QComboBox()
        self.grouping.setToolTip("Group the buffers live at each run's live peak by this key")
        self.grouping.currentIndexChanged.connect(self._fill_table)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        for column, tip in enumerate(COLUMN_TIPS):
            self.table.horizontalHeaderItem(column).setToolTip(tip)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)  # one line a row; long frames elide in the middle
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.table.itemSelectionChanged.connect(self._highlight)

        table_side = QWidget()
        column = QVBoxLayout(table_side)
        column.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        row.addWidget(QLabel("Difference at the live peak by"))
        row.addWidget(self.grouping, 1)
        column.addLayout(row)
        column.addWidget(self.table, 1)
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.plot_widget)
        splitter.addWidget(table_side)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        page = QWidget()
        layout = QVBoxLayout(page)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(splitter, 1)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.empty)
        self.pages.addWidget(page)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.pages)

    def show_comparison(self, comparison: Comparison | None) -> None:
        """Draw `comparison` (None: the empty page that says how to start one)."""
        self.comparison = comparison
        self.pages.setCurrentIndex(0 if comparison is None else 1)
        if comparison is None:
            self.empty.setText(EMPTY_TEXT)
            return
        self.summary.setText(self._summary_html(comparison))
        for side in "ab":
            figures = comparison.side(side)
            x = comparison.steps(side)
            self.curves[side].setData(x, np.asarray(figures.peak.curve.bytes, dtype=np.float64))
            peak_x = float(x[figures.peak.step]) if len(x) else 0.0
            self.peaks[side].setData([peak_x], [float(figures.peak.bytes)])
            self.peak_labels[side].setText(
                f"{side.upper()} live peak {format_bytes(figures.peak.bytes)}")
            self.peak_labels[side].setPos(peak_x, float(figures.peak.bytes))
        self._place_peak_labels(comparison)
        a_steps, b_steps = comparison.a_lifetimes.steps, comparison.b_lifetimes.steps
        axis = "schedule step"
        if a_steps != b_steps:
            shorter = "A" if a_steps < b_steps else "B"
            axis += (f" ({shorter} stretched from {min(a_steps, b_steps):,} to "
                     f"{comparison.length:,} steps)")
        self.plot_widget.getPlotItem().setLabel("bottom", axis)
        top = max(comparison.diff.a.peak.bytes, comparison.diff.b.peak.bytes, 1)
        self.plot_widget.getPlotItem().getViewBox().setRange(
            xRange=(0, comparison.length - 1 or 1), yRange=(0, top * 1.15), padding=0.02)
        self.grouping.blockSignals(True)
        self.grouping.clear()
        for name in comparison.diff.attribution:
            self.grouping.addItem(GROUPING_NAMES[name], name)
        # The most specific grouping first, as `slabscope diff` reports it.
        for name in ("frame", "module", "op", "kind"):
            if name in comparison.diff.attribution:
                self.grouping.setCurrentIndex(self.grouping.findData(name))
                break
        self.grouping.blockSignals(False)
        self._fill_table()

    def show_message(self, text: str) -> None:
        """Show no comparison and, in place of how to start one, `text` (why there is none yet,
        or why there is none)."""
        self.show_comparison(None)
        self.empty.setText(text)

    def _place_peak_labels(self, comparison: Comparison) -> None:
        """Keep each peak's label inside the plot (left- or right-aligned near an end) and, when
        the two peaks are close, put the lower one's label under its mark."""
        length = max(comparison.length - 1, 1)
        spots = {}
        for side in "ab":
            x = comparison.steps(side)
            step = comparison.side(side).peak.step
            spots[side] = (float(x[step]) / length if len(x) else 0.0,
                           comparison.side(side).peak.bytes)
        (ax, ay), (bx, by) = spots["a"], spots["b"]
        close = abs(ax - bx) < 0.25 and abs(ay - by) < 0.12 * max(ay, by, 1)
        lower = min("ab", key=lambda side: spots[side][1])
        for side, (fraction, _) in spots.items():
            across = 0.0 if fraction < 0.12 else 1.0 if fraction > 0.88 else 0.5
            self.peak_labels[side].setAnchor((across, -0.3 if close and side == lower else 1.2))

    def _summary_html(self, comparison: Comparison) -> str:
        diff = comparison.diff
        lines = []
        for side, color in (("a", A_COLOR), ("b", B_COLOR)):
            s = comparison.side(side)
            source = "recorded" if s.reserved_recorded else "modelled"
            name = escape(Path(s.file).name)
            lines.append(f"<b style='color:{color.name()}'>{side.upper()}</b> {name}: live peak "
                         f"<b>{format_bytes(s.peak.bytes)}</b> at step {s.peak.step:,} · slab "
                         f"{format_bytes(s.slab_bytes)} ({s.conflicts} conflicts) · lower bound "
                         f"{format_bytes(s.lower_bound_bytes)} · reserved "
                         f"{format_bytes(s.reserved_bytes)} ({source})")
        a, b = diff.a, diff.b
        change = diff.peak_live_difference_bytes
        share = f" ({change / a.peak.bytes:+.0%})" if a.peak.bytes and change else ""
        lines.append(f"B needs <b>{signed_bytes(diff.peak_live_difference_bytes)}</b>{share} at its "
                     f"live peak, {signed_bytes(b.slab_bytes - a.slab_bytes)} in its slab, "
                     f"{signed_bytes(b.reserved_bytes - a.reserved_bytes)} reserved.")
        return "<br>".join(lines)

    def current_grouping(self) -> str | None:
        """The grouping the table shows."""
        return self.grouping.currentData()

    def _fill_table(self, *_) -> None:
        rows = self.rows()
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(rows))
        for i, row in enumerate(rows):
            cells = (row.key, format_bytes(row.a_bytes), format_bytes(row.b_bytes),
                     signed_bytes(row.difference_bytes), f"{row.a_count:,}", f"{row.b_count:,}")
            for j, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if j:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if j == 0:
                    item.setToolTip(row.key)
                self.table.setItem(i, j, item)
        self._highlight()

    def rows(self):
        """The attribution rows of the grouping shown."""
        if self.comparison is None or self.current_grouping() is None:
            return ()
        return self.comparison.diff.attribution[self.current_grouping()]

    def select_row(self, index: int) -> None:
        """Select the table's row `index` (highlighting its buffers)."""
        self.table.selectRow(index)

    def _highlight(self) -> None:
        """Fill, under each curve, the live bytes of the selected row's buffers on that side."""
        selected = self.table.selectionModel().selectedRows()
        rows = self.rows()
        row = rows[selected[0].row()] if selected and rows else None
        for side, color in (("a", A_COLOR), ("b", B_COLOR)):
            buffers = (row.a_buffers if side == "a" else row.b_buffers) if row else ()
            if not buffers:
                self.fills[side].setData([], [])
                continue
            fill = QColor(color)
            fill.setAlpha(FILL_ALPHA)
            self.fills[side].setBrush(pg.mkBrush(fill))
            self.fills[side].setData(self.comparison.steps(side),
                                     self.comparison.live_bytes(side, buffers))
