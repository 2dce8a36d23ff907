"""The lifetime map: each buffer a box over its lifetime (DAG layer or schedule step) and its bytes,
with the plan's slab and the planner's lower bound drawn across it and the live-peak step marked
(docs/peak.md: the same step every panel marks)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from slabscope.app.views.common.buffer_colours import ColourChoice, fills_for, rgb_for
from slabscope.app.views.common.buffer_details import describe_buffer
from slabscope.app.views.common.buffer_emphasis import pointer_emphasis
from slabscope.app.views.common.byte_axis import ByteAxis, StepAxis, format_bytes
from slabscope.app.views.common.detail_line import DetailLine, detail_text
from slabscope.app.views.common.kind_legend import KindLegend, graph_kinds
from slabscope.app.views.common.lifetimes import (buffer_lifetimes, dag_layers,  # noqa: F401 (re-exported)
                                  placement_arrays, prepare_step_model, step_model)
from slabscope.app.views.common.margin_marks import place_marks
from slabscope.app.views.common.outline_legend import OutlineLegend
from slabscope.app.views.common.peak_headline import peak_text, session_live_peak, use_live_peak
from slabscope.app.views.common.palette import ANCESTOR
from slabscope.app.views.common.range_zoom import RangeZoomViewBox
from slabscope.app.views.common.rect_layer import RectLayer, pick_fills
from slabscope.app.views.common.redraw_when_shown import RedrawWhenShown
from slabscope.app.views.common.view_keys import bring_into_view, zoom_pan_key

STEP_MARGIN = 0.06          # gap between boxes of consecutive layers
STEP_FIT_PIXELS = 4         # a fit leaves this much room beside the first and last steps
PEAK_COLOR = QColor("#B00020")  # the slab's top (the plan's size)
BOUND_COLOR = QColor("#1B7F3B")
LIVE_PEAK_COLOR = QColor("#4C78A8")  # the live-peak step, as in the live-bytes panel
HOVER_HINT = ("Point at a box for its bytes, offset, uses and conflicts; click to select. "
              "Drag across a region to zoom into it, Shift+drag pans, double-click shows all.")
PLAN_COLOR = QColor("#555555")
RESERVED_COLOR = QColor("#E67E00")


PROVISIONAL_TEXT = ("<b><span style='color:#8A5A00'>provisional</span></b>: search's best plan "
                    "so far; the search continues")

PLANNED, PYTORCH = "planned offsets", "PyTorch's addresses (segments end to end)"


def packed_addresses(trace) -> dict[str, int]:
    """Where PyTorch put each block, as a position in its segments laid end to end (lowest
    address first), so that its memory reads on one axis like the slab."""
    starts, position = [], 0
    for address, size in sorted(trace.segments):
        starts.append((address, size, position))
        position += size
    packed = {}
    for name, address in trace.addresses.items():
        for start, size, at in starts:
            if start <= address < start + size:
                packed[name] = at + address - start
                break
    return packed


class LifetimeView(QWidget):
    """Offset up, lifetime across: a box per buffer from its first to its last use, at its bytes.

    The dashed red line is the plan's slab and the green one the least slab any plan can have
    (`planner.lower_bound`, shared through the session); the blue ▼ and dotted line mark the
    live-peak step. Hover and selection behave as in the slab bar. Keys: + and - zoom, arrows
    pan, 0 fits.
    """

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self._names: list[str] = []
        self._position: dict[str, int] | None = None
        self._node_layer: dict[str, int] = {}
        self._fills: list = []
        self._rgb = np.zeros(0, np.uint32)  # the fills as numbers, for the raster
        self.lower_bound = None

        self.summary = QLabel()
        self.summary.setWordWrap(True)  # long summaries wrap instead of widening the view
        self.legend = KindLegend()
        self.colouring = ColourChoice(session, self.legend, self._recolour)
        self.details = DetailLine(HOVER_HINT)

        self.outline_legend = OutlineLegend()
        self.plot_widget = pg.PlotWidget(background="w", viewBox=RangeZoomViewBox(
                                             x_margin_pixels=STEP_FIT_PIXELS),
                                         axisItems={"left": ByteAxis("left"),
                                                    "bottom": StepAxis("bottom")})
        self.plot_widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.plot_widget.installEventFilter(self)
        plot = self.plot_widget.getPlotItem()
        plot.setLabel("left", "offset")
        # Room for the widest tick ('1,000 KiB') beside the axis title, so neither is clipped.
        plot.getAxis("left").setWidth(self.fontMetrics().horizontalAdvance("1,000.0 KiB") + 28)
        # The slab and the bound are named in the right margin, never over the boxes.
        plot.showAxis("right")
        self.marks_axis = plot.getAxis("right")
        self.marks_axis.setTicks([[]])
        self.marks_axis.setStyle(tickLength=0)  # a stacked label may sit a little off its line
        plot.hideButtons()
        self.view_box = plot.getViewBox()
        self.view_box.setDefaultPadding(0.06)  # the top tick's label stays inside the plot
        self.view_box.sigYRangeChanged.connect(self._label_marks)
        self.view_box.sigResized.connect(self._label_marks)  # pixels per byte change with the size
        self._exporting = False
        self._marks: list[tuple[float, str]] = []
        self._lines_wanted: list[tuple[float, str]] = []
        self._peak_text = ""
        self.layer = RectLayer()
        self.layer.on_hover = session.hover_buffer
        self.layer.on_click = self._clicked
        plot.addItem(self.layer)
        self.peak_line = self._line(PEAK_COLOR)
        self.lower_bound_line = self._line(BOUND_COLOR)
        # In PyTorch's-address mode: the plan's slab as a reference, and PyTorch's reserved extent.
        self.plan_line = self._line(PLAN_COLOR, Qt.PenStyle.DotLine)
        self.reserved_line = self._line(RESERVED_COLOR, Qt.PenStyle.DashDotLine)
        # The live-peak step: a ▼ over the boxes and a dotted line down through them.
        self.peak_marker = pg.ScatterPlotItem(symbol="t", size=12,
                                              brush=pg.mkBrush(LIVE_PEAK_COLOR), pen=pg.mkPen(None))
        plot.addItem(self.peak_marker, ignoreBounds=True)
        self.peak_step_line = pg.InfiniteLine(angle=90, movable=False, pen=pg.mkPen(
            LIVE_PEAK_COLOR, width=1, style=Qt.PenStyle.DotLine))
        plot.addItem(self.peak_step_line, ignoreBounds=True)
        self.peak_step_line.hide()
        use_live_peak(session)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addWidget(self.summary)
        # For a PyTorch snapshot: the same boxes at the addresses PyTorch gave them.
        self.placement_choice = QComboBox()
        self.placement_choice.addItems([PLANNED, PYTORCH])
        self.placement_choice.setToolTip("Draw each buffer at its planned offset, or where "
                                         "PyTorch's caching allocator put it")
        self.placement_choice.currentIndexChanged.connect(self._placement_chosen)
        self._packed: dict[str, int] = {}
        row = QHBoxLayout()
        row.addWidget(self.legend, 1)
        row.addWidget(self.colouring.frame_legend, 1)
        row.addWidget(self.colouring.combo)
        row.addWidget(self.placement_choice)
        layout.addLayout(row)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.outline_legend)
        layout.addWidget(self.details)

        if prepare_step_model not in session.prepare_plans:  # steps are found in the worker
            session.prepare_plans.append(prepare_step_model)
        if graph_kinds not in session.prepare_graphs:  # the legend's kinds, on loading
            session.prepare_graphs.append(graph_kinds)
        # A map behind another dock tab is drawn when it comes forward, not per plan; search's
        # best plan so far is drawn as a plan is (the executor sends one at most every 0.5 s).
        self.redraw_when_shown = RedrawWhenShown(self, self._redraw)
        session.sigGraphChanged.connect(self._graph_changed)
        session.sigPlanChanged.connect(self.redraw_when_shown)
        session.sigProvisionalPlan.connect(self.redraw_when_shown)
        session.sigHoverBuffer.connect(self._pointer_changed)
        session.sigHoverNode.connect(self._pointer_changed)
        session.sigSelectionChanged.connect(self._pointer_changed)
        session.selection_model.sigNodeSelected.connect(self._pointer_changed)
        session.selection_model.sigReveal.connect(self.reveal)
        self._graph_changed()

    def _line(self, color: QColor, style=Qt.PenStyle.DashLine) -> pg.InfiniteLine:
        line = pg.InfiniteLine(angle=0, movable=False, pen=pg.mkPen(color, width=1.5, style=style))
        self.plot_widget.getPlotItem().addItem(line, ignoreBounds=True)
        line.hide()
        return line

    def mark_labels(self) -> list[tuple[float, str]]:
        """The (bytes, text) labels beside the horizontal lines in the right margin."""
        return list(self._marks)

    def drawn_lines(self) -> dict[str, float]:
        """The value of every horizontal line on show, by role: slab (the top of the boxes drawn),
        bound, plan, reserved."""
        lines = {"slab": self.peak_line, "bound": self.lower_bound_line,
                 "plan": self.plan_line, "reserved": self.reserved_line}
        return {role: float(line.value()) for role, line in lines.items() if line.isVisible()}

    def _label_marks(self, *_) -> None:
        """Name the lines in the right margin, stacked apart where they would touch on screen."""
        if not self._lines_wanted or not self._names:
            self._marks = []
            self.marks_axis.setTicks([[]])
            self.marks_axis.setWidth(8)
            return
        (_x0, _x1), (y0, y1) = self.view_box.viewRange()
        pixels = max(self.view_box.height(), 1.0) / max(y1 - y0, 1.0)
        marks = place_marks(self._lines_wanted, pixels, self.fontMetrics().height() + 2)
        self._marks = marks
        self.marks_axis.setTicks([marks])
        metrics = self.fontMetrics()
        self.marks_axis.setWidth(max(metrics.horizontalAdvance(text) for _, text in marks) + 16)

    # --- session -------------------------------------------------------------------------

    def _graph_changed(self) -> None:
        graph = self.session.graph
        self._fills = fills_for(self.session) if graph is not None else []
        self._rgb = rgb_for(self.session) if graph is not None else np.zeros(0, np.uint32)
        if graph is not None:
            self.legend.set_kinds(graph_kinds(graph))
        self.colouring.sync()
        trace = getattr(graph, "allocator", None)
        self._packed = packed_addresses(trace) if trace is not None else {}
        self.placement_choice.blockSignals(True)
        wanted = self.session.view.addresses == "pytorch" and bool(self._packed)
        self.placement_choice.setCurrentText(PYTORCH if wanted else PLANNED)
        self.placement_choice.blockSignals(False)
        self.placement_choice.setVisible(bool(self._packed))
        self.details.setText(HOVER_HINT)
        self._redraw()
        self.view_box.enableAutoRange()

    @property
    def pending(self) -> bool:
        """Whether a plan arrived while the map was behind another tab and is not drawn yet."""
        return self.redraw_when_shown.pending

    def _redraw(self, *_) -> None:
        """Draw the plan on show (search's best so far while it runs, marked provisional)."""
        self.redraw_when_shown.pending = False
        graph, plan = self.session.graph, self.session.shown_plan
        if graph is None or plan is None:
            self._names = []
            self.layer.set_rects([], [], [], [], [], [])
            for item in (self.peak_line, self.lower_bound_line, self.peak_marker,
                         self.peak_step_line, self.plan_line, self.reserved_line):
                item.hide()
            self._lines_wanted = []
            self._label_marks()
            self._describe_hovered()
            self.summary.setText(self._no_plan_text())
            return
        # Computed in the planning worker for each plan it makes (see `prepare_step_model`).
        steps = step_model(graph, plan.conflict_model)
        first, last, step_name, self._node_layer = (steps.first, steps.last, steps.step_name,
                                                    steps.node_step)
        columns = placement_arrays(plan, graph)  # made by the planning worker too
        self._names = columns.names
        self._position: dict[str, int] | None = columns.position
        rows = columns.rows
        x = first[rows] + STEP_MARGIN
        width = last[rows] - first[rows] + 1 - 2 * STEP_MARGIN
        height = columns.reserved
        pytorch = self.placement_choice.currentText() == PYTORCH and self._packed
        if pytorch:
            # Blocks PyTorch reports no address for keep their planned offset, hidden.
            y = np.array([self._packed.get(p.name, p.offset) for p in plan.placements], dtype=float)
        else:
            y = columns.offsets
        self.layer.set_rects(self._names, x, width, y, height, pick_fills(self._fills, rows),
                             index=columns.position, rgb=self._rgb[rows])
        if pytorch:
            self.layer.set_emphasis(shown=[n in self._packed for n in self._names])
        self.plot_widget.getPlotItem().setLabel("bottom", step_name)
        self.plot_widget.getPlotItem().setLabel("left", "PyTorch address (packed)" if pytorch
                                                else "offset")
        if pytorch:
            shown = np.array([n in self._packed for n in self._names], dtype=bool)
            tops = np.where(shown, y + height, 0.0)
            peak = float(tops.max()) if tops.size else 0.0
        else:
            tops, peak = y + height, float(plan.slab_bytes)
        self._mark_peak(peak, x, width, tops)
        self._mark_lower_bound(plan, pytorch)
        if self.session.plan_provisional:
            self.summary.setText(f"{PROVISIONAL_TEXT}<br>{self.summary.text()}")
        self._label_marks()
        self._pointer_changed()

    def _recolour(self) -> None:
        """Colour the boxes by the session's colouring (by kind or by frame)."""
        graph = self.session.graph
        self._fills = fills_for(self.session) if graph is not None else []
        self._rgb = rgb_for(self.session) if graph is not None else np.zeros(0, np.uint32)
        self._redraw()

    def showEvent(self, event) -> None:
        """A map shown again follows a colouring chosen in the slab bar meanwhile."""
        super().showEvent(event)
        if self.colouring.sync():
            self._recolour()

    def _placement_chosen(self, *_) -> None:
        """The user picked where to draw the blocks: remember it in the session's view settings."""
        self.session.view.addresses = ("pytorch" if self.placement_choice.currentText() == PYTORCH
                                       else "planned")
        self._redraw()

    def _no_plan_text(self) -> str:
        """What the map says with no plan to draw: the planner's error, that the open graph is
        being planned, or that none is open."""
        if self.session.plan_error:
            return f"<span style='color:#B00020'>no plan: {self.session.plan_error}</span>"
        graph = self.session.graph
        return f"planning {graph.name}…" if graph is not None else "no graph open"

    def _mark_peak(self, peak: float, x, width, tops) -> None:
        """The top line at `peak` bytes (the plan's slab, or the top of PyTorch's highest block),
        named with the boxes that reach it; the ▼ marks the live-peak step, over that line."""
        self.peak_line.setValue(peak)
        reaching = np.flatnonzero(tops >= peak) if peak > 0 else np.zeros(0, np.int64)
        names = ", ".join(self._names[i] for i in reaching[:3])
        more = f" and {reaching.size - 3} more" if reaching.size > 3 else ""
        # "buffer 453", so that a trace's numbered buffers do not read as a count
        which = "buffer" if reaching.size == 1 else "buffers"
        self._peak_text = f", reached by {which} {names}{more}" if reaching.size else ""
        self.peak_line.show()
        live = session_live_peak(self.session)
        step = self._node_layer.get(live.node) if live is not None and live.node else None
        if step is None:
            self.peak_marker.hide()
            self.peak_step_line.hide()
            return
        self.peak_marker.setData(x=[step + 0.5], y=[float(peak)])
        self.peak_marker.show()
        self.peak_step_line.setValue(step + 0.5)
        self.peak_step_line.show()

    def live_peak_step(self) -> float | None:
        """Where the live-peak step is marked on the x axis (its column's middle), None if not."""
        return self.peak_step_line.value() if self.peak_step_line.isVisible() else None

    def _live_peak_html(self) -> str:
        live = session_live_peak(self.session)
        return (f"<b><span style='color:{LIVE_PEAK_COLOR.name()}'>▼ live peak</span></b> "
                f"{peak_text(live)} &nbsp; " if live is not None and live.buffers else "")

    def _mark_lower_bound(self, plan, pytorch: bool) -> None:
        """The bound line, the reference lines of the mode, their labels and the summary."""
        self.lower_bound = self.session.lower_bound()
        bound = self.lower_bound.bytes
        self.lower_bound_line.setValue(bound)
        self.lower_bound_line.show()
        slab = plan.slab_bytes
        over = (slab - bound) / bound if bound else 0.0
        peak = int(self.peak_line.value())
        bound_text = (f"<b><span style='color:{BOUND_COLOR.name()}'>lower bound</span></b> "
                      f"{bound:,} B ({format_bytes(bound)})")
        if not pytorch:
            self.plan_line.hide()
            self.reserved_line.hide()
            self._lines_wanted = [(float(slab), f"slab {format_bytes(slab)}"),
                                  (float(bound), f"bound {format_bytes(bound)}")]
            self.summary.setText(
                f"{self._live_peak_html()}"
                f"<b><span style='color:{PEAK_COLOR.name()}'>slab</span></b> "
                f"{slab:,} B ({format_bytes(slab)}){self._peak_text} &nbsp; {bound_text} &nbsp; "
                f"gap {over:.1%}")
            return
        trace = self.session.graph.allocator
        extent = sum(size for _, size in trace.segments)  # every segment, laid end to end
        self.plan_line.setValue(slab)
        self.plan_line.show()
        self.reserved_line.setValue(extent)
        self.reserved_line.show()
        self._lines_wanted = [(float(peak), f"PyTorch top {format_bytes(peak)}"),
                              (float(extent), f"PyTorch reserved {format_bytes(extent)}"),
                              (float(slab), f"plan {format_bytes(slab)}"),
                              (float(bound), f"bound {format_bytes(bound)}")]
        at_once = ("" if trace.peak_reserved_bytes == extent else
                   f" (at most {format_bytes(trace.peak_reserved_bytes)} at once)")
        self.summary.setText(
            f"{self._live_peak_html()}"
            f"<b><span style='color:{PEAK_COLOR.name()}'>PyTorch's highest address</span></b> "
            f"{peak:,} B ({format_bytes(peak)}){self._peak_text} &nbsp; "
            f"<b><span style='color:{RESERVED_COLOR.name()}'>PyTorch reserved</span></b> "
            f"{format_bytes(extent)} in {len(trace.segments)} segments{at_once} &nbsp; "
            f"<b><span style='color:{PLAN_COLOR.name()}'>plan's slab</span></b> "
            f"{format_bytes(slab)} ({over:.1%} above the bound) &nbsp; {bound_text}")

    # --- emphasis and pointer ------------------------------------------------------------

    def _pointer_changed(self, *_) -> None:
        if not self._names or self.pending:  # a pending redraw ends with this
            return
        pointed = self.session.hovered_node or self.session.selection_model.node
        if self._position is None and pointed is not None:  # built when first needed
            self._position = {name: i for i, name in enumerate(self._names)}
        alpha, outlines = pointer_emphasis(self.session, self._names, self._position)
        if self._exporting:  # a picture shows the plan, not where the pointer was
            alpha, outlines = np.full(len(self._names), 255.0), {}
        self.layer.set_emphasis(alpha=alpha, outlines=outlines)
        node = None if self._exporting else (self.session.hovered_node
                                             or self.session.selection_model.node)
        step = self._node_layer.get(node) if node is not None else None
        self.layer.set_bands([] if step is None else [(step, step + 1, ANCESTOR, node)])
        self._describe_hovered()

    def _describe_hovered(self) -> None:
        """The detail line for the hovered buffer, else the first selected one, else the hint;
        from the plan on show."""
        hovered = self.session.hovered_buffer
        plan = self.session.shown_plan
        known = plan.by_name if plan is not None and self._names else {}
        self.plot_widget.setToolTip(describe_buffer(self.session, hovered)
                                    if hovered in known else "")
        self.details.setText(detail_text(self.session, known, HOVER_HINT))

    def reveal(self, kind: str, name: str) -> None:
        """Pan to buffer `name`, or to node `name`'s step, if it is out of view."""
        if kind == "buffer" and name in self.layer.names:
            bring_into_view(self.view_box, self.layer.rect_of(name))
        elif kind == "node" and name in self._node_layer:
            step = self._node_layer[name]
            (_x0, _x1), (y0, y1) = self.view_box.viewRange()
            bring_into_view(self.view_box, QRectF(step, y0, 1, y1 - y0), along_y=False)

    def hover_at(self, step: float, offset: float) -> str | None:
        """Hover the point (`step`, byte `offset`) as the pointer would; returns the buffer there."""
        name = self.layer.name_at(step, offset)
        self.session.hover_buffer(name)
        return name

    def _clicked(self, name: str | None, modifiers) -> None:
        self.session.click_buffer(name, toggle=bool(modifiers & Qt.KeyboardModifier.ControlModifier))

    def enter_export(self) -> None:
        """Drop the hint, the outline key and pointer emphasis so a picture shows only the plan
        (drawn first if it arrived while the map was behind another tab)."""
        self._exporting = True
        if self.pending:
            self._redraw()
        self.details.hide()
        self.outline_legend.hide()
        self.placement_choice.hide()  # the axis title says which placement is drawn
        self.colouring.exporting = True
        self.colouring.combo.hide()  # the legend says how the boxes are coloured
        self._pointer_changed()

    def leave_export(self) -> None:
        """Bring back what `enter_export` hid."""
        self._exporting = False
        self.details.show()
        self.outline_legend.show()
        self.placement_choice.setVisible(bool(self._packed))
        self.colouring.exporting = False
        self.colouring.sync()
        self._pointer_changed()

    def eventFilter(self, watched, event) -> bool:
        """Keys pressed over the plot zoom and pan."""
        if watched is self.plot_widget and event.type() == QEvent.Type.KeyPress:
            return zoom_pan_key(self.view_box, event.key(), zoom_x=True, zoom_y=True)
        return super().eventFilter(watched, event)
