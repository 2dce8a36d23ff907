"""The central panel for graphs that are only a chain of time steps: live bytes over time.

The curve is the reserved bytes of the buffers live at each schedule step (`planner.conflicts.live_bytes`).
Its maximum is the live peak (docs/peak.md), here also the lower bound; the plan's slab is drawn across it, and for a
PyTorch snapshot so are the bytes PyTorch's caching allocator held reserved and live at each step.
Pointing at a step hovers it, so the lifetime map marks it too.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QStackedWidget, QVBoxLayout, QWidget

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.common.byte_axis import ByteAxis, format_bytes
from slabscope.app.views.common.next_turn import NextTurn
from slabscope.app.views.common.range_zoom import RangeZoomViewBox
from slabscope.planner.conflicts.live_bytes import LiveBytes, is_time_chain, live_bytes

# Both depend on the graph only; computed by the loading worker (`Session.prepare_graphs`).
graph_live_bytes = IdentityCache(live_bytes, size=2)
graph_is_time_chain = IdentityCache(is_time_chain, size=2)

LIVE_COLOR = QColor("#4C78A8")
SLAB_COLOR = QColor("#B00020")
BOUND_COLOR = QColor("#1B7F3B")
RESERVED_COLOR = QColor("#9D755D")
ALLOCATED_COLOR = QColor("#F58518")
HINT = ("Drag across a range of steps to zoom into it, Shift+drag pans, double-click shows all; "
        "point at a step to mark it in the lifetime map.")


# From this many buffers a new graph's curve is drawn on the turn after the graph arrives (Y_1's
# takes 17 ms), so the request list, inspector and slab bar are painted first, in their own slice.
STAGED_BUFFERS = 10_000


class LiveBytesView(QWidget):
    """Live bytes per schedule step, with the live peak (the lower bound) and the slab marked."""

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.curve: LiveBytes | None = None
        self._slab_line: pg.PlotDataItem | None = None  # the plan's slab across the curve
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.hint = QLabel(HINT)
        self.hint.setWordWrap(True)
        self.plot_widget = pg.PlotWidget(background="w", viewBox=RangeZoomViewBox(),
                                         axisItems={"left": ByteAxis("left")})
        plot = self.plot_widget.getPlotItem()
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.setLabel("left", "live bytes")
        plot.setLabel("bottom", "schedule step")
        plot.getAxis("left").setWidth(self.fontMetrics().horizontalAdvance("1,000.0 KiB") + 28)
        plot.showGrid(y=True, alpha=0.15)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")  # 70,000 steps draw as fast as 1,000
        self.view_box = plot.getViewBox()
        self.view_box.setMouseEnabled(x=True, y=False)
        plot.scene().sigMouseMoved.connect(self._pointer_moved)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.hint)
        for prepare in (graph_live_bytes, graph_is_time_chain):
            if prepare not in session.prepare_graphs:
                session.prepare_graphs.append(prepare)
        self._drawn_graph = None  # the graph whose curves are drawn
        self._stale = False  # a change arrived while the page was behind the DAG
        self._slab_line = None
        self._redraw_next_turn = NextTurn(self, self.redraw)
        session.sigGraphChanged.connect(self._graph_changed)
        session.sigPlanChanged.connect(self._plan_changed)
        # Search's best plan so far moves the slab line only: the curves stay as drawn.
        session.sigProvisionalPlan.connect(self._plan_changed)
        self.redraw()

    def _behind_the_dag(self) -> bool:
        """Whether the central panel shows the DAG instead, or is about to: it shows this page
        only for a chain of time steps (`GraphPanel`, which hears of a new graph after this)."""
        if not isinstance(self.parentWidget(), QStackedWidget):
            return False
        graph = self.session.graph
        return graph is None or not graph_is_time_chain(graph)

    def _graph_changed(self, *_) -> None:
        # Behind the DAG the curves wait until the page is shown (a graph with a DAG never
        # shows them): the GUI thread's time on a new graph goes to the panels on screen.
        self._stale = self._behind_the_dag()
        if self._stale:
            return
        graph = self.session.graph
        large = graph is not None and len(graph.buffers) >= STAGED_BUFFERS
        # The window, not this page: the central panel turns to this page after this call.
        if large and self.window().isVisible():
            self.curve = None  # no hover on the old graph's curve meanwhile
            self._redraw_next_turn.start()
        else:
            self.redraw()

    def _plan_changed(self, *_) -> None:
        """A plan (or search's best so far) changes only the slab's line and the summary; the
        curves are the graph's."""
        if self._behind_the_dag():
            self._stale = True  # redrawn whole when shown
        elif self._redraw_next_turn.pending:
            return  # the new graph's curve, drawn on the next turn, takes this plan's marks
        elif self.session.graph is not self._drawn_graph or self.curve is None:
            self.redraw()
        else:
            self.follow_plan()

    def showEvent(self, event) -> None:
        if self._stale:
            self.redraw()
        super().showEvent(event)

    def redraw(self, *_) -> None:
        """Draw the curve of the session's graph and the marks of its plan."""
        self._redraw_next_turn.stop()
        plot = self.plot_widget.getPlotItem()
        plot.clear()
        graph = self._drawn_graph = self.session.graph
        self._stale, self._slab_line = False, None
        if graph is None:
            self.curve = None
            self.summary.setText("no graph open")
            return
        self.curve = curve = graph_live_bytes(graph)
        steps = np.arange(len(curve.bytes) + 1, dtype=float)
        trace = getattr(graph, "allocator", None)
        if trace is not None:
            self._step_curve(plot, steps, trace.step_reserved_bytes, RESERVED_COLOR,
                             "PyTorch reserved", fill=False)
            self._step_curve(plot, steps, trace.step_live_bytes, ALLOCATED_COLOR,
                             "PyTorch live", fill=False)
        self._step_curve(plot, steps, curve.bytes, LIVE_COLOR, "live bytes (planned buffers)",
                         fill=True)
        plot.addItem(pg.ScatterPlotItem(x=[curve.peak_step + 0.5], y=[float(curve.peak)],
                                        symbol="t", size=12, brush=pg.mkBrush(BOUND_COLOR),
                                        pen=pg.mkPen(None)))
        self._level(plot, curve.peak, BOUND_COLOR, "live peak = lower bound")
        self.follow_plan()

    def follow_plan(self, *_) -> None:
        """Draw the slab of the plan on show across the curve (search's best so far while it
        runs, marked provisional) and say it in the summary."""
        if self.curve is None:
            return
        plan = self.session.shown_plan
        if self._slab_line is not None and plan is None:
            self.plot_widget.getPlotItem().removeItem(self._slab_line)
            self._slab_line = None
        elif self._slab_line is None and plan is not None:
            self._slab_line = self._level(self.plot_widget.getPlotItem(), plan.slab_bytes,
                                          SLAB_COLOR, "slab of the plan")
        elif plan is not None:
            self._slab_line.setData([0, len(self.curve.bytes)], [float(plan.slab_bytes)] * 2)
        self.summary.setText(self._summary_html(self.curve, plan,
                                                getattr(self.session.graph, "allocator", None)))
        self.view_box.autoRange()

    def _step_curve(self, plot, steps, values, colour: QColor, name: str, fill: bool) -> None:
        fill_colour = QColor(colour)
        fill_colour.setAlpha(70)
        # Steps as an explicit staircase: pyqtgraph's stepMode breaks under downsampling.
        x = np.repeat(steps, 2)[1:-1]
        y = np.repeat(np.asarray(values, dtype=float), 2)
        item = pg.PlotDataItem(x, y, pen=pg.mkPen(colour, width=1.5), name=name,
                               fillLevel=0 if fill else None,
                               brush=pg.mkBrush(fill_colour) if fill else None)
        plot.addItem(item)

    def _level(self, plot, value: int, colour: QColor, name: str) -> pg.PlotDataItem:
        line = pg.PlotDataItem([0, len(self.curve.bytes)], [float(value)] * 2, name=name,
                               pen=pg.mkPen(colour, width=1.5, style=Qt.PenStyle.DashLine))
        plot.addItem(line)
        return line

    def _summary_html(self, curve: LiveBytes, plan, trace) -> str:
        step = curve.step_names[curve.peak_step] if curve.step_names else "-"
        # The summary is the key to the curves' colours: a legend inside would cover the curve.
        parts = [f"<b>{len(curve.bytes):,} steps</b> &nbsp; "
                 f"<b style='color:{LIVE_COLOR.name()}'>live bytes</b> of the planned buffers, "
                 f"<b style='color:{BOUND_COLOR.name()}'>live peak</b> {curve.peak:,} B "
                 f"({format_bytes(curve.peak)}) at step {curve.peak_step:,} ({step}), "
                 "the lower bound: the least slab any plan can have"]
        if plan is not None:
            over = plan.slab_bytes / curve.peak - 1 if curve.peak else 0.0
            which = ("slab of search's best plan so far (provisional)"
                     if self.session.plan_provisional else "slab of the plan")
            parts.append(f"<b style='color:{SLAB_COLOR.name()}'>{which}</b> "
                         f"{plan.slab_bytes:,} B "
                         f"({format_bytes(plan.slab_bytes)}), {over:.1%} above it")
        if trace is not None:
            parts.append(f"<b style='color:{RESERVED_COLOR.name()}'>PyTorch reserved</b> "
                         f"{format_bytes(trace.peak_reserved_bytes)} (recorded) · "
                         f"<b style='color:{ALLOCATED_COLOR.name()}'>PyTorch allocated</b> at most "
                         f"{format_bytes(trace.peak_allocated_bytes)}")
        return " &nbsp; ".join(parts)

    def _pointer_moved(self, position) -> None:
        if self.curve is None or not self.plot_widget.sceneBoundingRect().contains(position):
            return
        step = int(np.floor(self.view_box.mapSceneToView(position).x()))
        inside = 0 <= step < len(self.curve.step_names)
        self.session.hover_node(self.curve.step_names[step] if inside else None)
        if inside:
            self.plot_widget.setToolTip(f"step {step:,} ({self.curve.step_names[step]}): "
                                        f"{format_bytes(int(self.curve.bytes[step]))} live")

    def leaveEvent(self, event) -> None:
        self.session.hover_node(None)
        super().leaveEvent(event)

    def enter_export(self) -> None:
        """Drop the hint, so that a picture shows only the curve."""
        self.hint.hide()

    def leave_export(self) -> None:
        """Bring back what `enter_export` hid."""
        self.hint.show()
