"""The lifetime map: each buffer a box over its lifetime (DAG layer or schedule step) and its bytes,
with the peak of the plan and the planner's lower bound drawn across it."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from slabscope import planner

from slabscope.app.views.buffer_details import describe_buffer, describe_buffer_line
from slabscope.app.views.buffer_emphasis import buffer_fills, pointer_emphasis
from slabscope.app.views.byte_axis import ByteAxis, StepAxis, format_bytes
from slabscope.app.views.kind_legend import KindLegend
from slabscope.app.views.outline_legend import OutlineLegend
from slabscope.app.views.palette import ANCESTOR
from slabscope.app.views.range_zoom import RangeZoomViewBox
from slabscope.app.views.rect_layer import RectLayer
from slabscope.app.views.view_keys import bring_into_view, zoom_pan_key

STEP_MARGIN = 0.06          # gap between boxes of consecutive layers
PEAK_COLOR = QColor("#B00020")
BOUND_COLOR = QColor("#1B7F3B")
HOVER_HINT = ("Point at a box for its bytes, offset, uses and conflicts; click to select. "
              "Drag across a region to zoom into it, Shift+drag pans, double-click shows all.")
MERGE_MARKS = 0.04          # of the visible bytes: closer than this, peak and bound share one label


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


def dag_layers(graph) -> list[int]:
    """Per node index, its longest-path layer: 0 for sources, else one past its deepest predecessor."""
    layer = [0] * len(graph.nodes)
    for v in graph.reachability.topo:
        for s in graph.successors[v]:
            layer[s] = max(layer[s], layer[v] + 1)
    return layer


def buffer_lifetimes(graph, conflicts: str) -> tuple[np.ndarray, np.ndarray, str]:
    """First and last step of every buffer (by buffer index) and what a step is.

    Serial model: positions in the planner's schedule. Otherwise: DAG layers of the uses.
    """
    model = planner.conflict_model(graph, conflicts)
    if hasattr(model, "first") and hasattr(model, "last"):
        return np.asarray(model.first), np.asarray(model.last), "schedule step"
    layer = np.array(dag_layers(graph), dtype=np.int64)
    flat, starts = graph.use_arrays  # every buffer has a use, so no run is empty
    used = layer[flat]
    first = np.minimum.reduceat(used, starts[:-1]) if len(flat) else np.zeros(0, np.int64)
    last = np.maximum.reduceat(used, starts[:-1]) if len(flat) else np.zeros(0, np.int64)
    return first, last, "DAG layer"


class LifetimeView(QWidget):
    """Offset up, lifetime across: a box per buffer from its first to its last use, at its bytes.

    The dashed red line is the plan's peak (its slab size) and the green one the least slab any plan
    can have (`planner.lower_bound`, shared through the session). Hover and selection behave as in
    the slab bar. Keys: + and - zoom, arrows pan, 0 fits.
    """

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self._names: list[str] = []
        self._node_layer: dict[str, int] = {}
        self._lifetime_cache: dict = {}
        self._fills: list = []
        self.lower_bound = None

        self.summary = QLabel()
        self.summary.setWordWrap(True)  # long summaries wrap instead of widening the view
        self.legend = KindLegend()
        self.details = QLabel(HOVER_HINT)
        self.details.setWordWrap(True)
        self.details.setMinimumHeight(self.details.fontMetrics().height() * 2 + 4)
        self.details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)

        self.outline_legend = OutlineLegend()
        self.plot_widget = pg.PlotWidget(background="w", viewBox=RangeZoomViewBox(),
                                         axisItems={"left": ByteAxis("left"),
                                                    "bottom": StepAxis("bottom")})
        self.plot_widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.plot_widget.installEventFilter(self)
        plot = self.plot_widget.getPlotItem()
        plot.setLabel("left", "offset")
        # Room for the widest tick ('1,000 KiB') beside the axis title, so neither is clipped.
        plot.getAxis("left").setWidth(self.fontMetrics().horizontalAdvance("1,000.0 KiB") + 28)
        # The peak and the bound are named in the right margin, never over the boxes.
        plot.showAxis("right")
        self.marks_axis = plot.getAxis("right")
        self.marks_axis.setTicks([[]])
        self.marks_axis.setStyle(tickLength=6)
        plot.hideButtons()
        self.view_box = plot.getViewBox()
        self.view_box.setDefaultPadding(0.06)  # the top tick's label stays inside the plot
        self.view_box.sigYRangeChanged.connect(self._label_marks)
        self._exporting = False
        self._described: str | None = None
        self._marks: list[tuple[float, str]] = []
        self._peak_text = ""
        self.layer = RectLayer()
        self.layer.on_hover = session.hover_buffer
        self.layer.on_click = self._clicked
        plot.addItem(self.layer)
        self.peak_line = self._line(PEAK_COLOR)
        self.lower_bound_line = self._line(BOUND_COLOR)
        self.peak_marker = pg.ScatterPlotItem(symbol="t", size=12, brush=pg.mkBrush(PEAK_COLOR),
                                              pen=pg.mkPen(None))
        plot.addItem(self.peak_marker, ignoreBounds=True)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        layout.addWidget(self.summary)
        # For a PyTorch snapshot: the same boxes at the addresses PyTorch gave them.
        self.placement_choice = QComboBox()
        self.placement_choice.addItems([PLANNED, PYTORCH])
        self.placement_choice.setToolTip("Draw each buffer at its planned offset, or where "
                                         "PyTorch's caching allocator put it")
        self.placement_choice.currentIndexChanged.connect(self._redraw)
        self._packed: dict[str, int] = {}
        row = QHBoxLayout()
        row.addWidget(self.legend, 1)
        row.addWidget(self.placement_choice)
        layout.addLayout(row)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.outline_legend)
        layout.addWidget(self.details)

        session.sigGraphChanged.connect(self._graph_changed)
        session.sigPlanChanged.connect(self._redraw)
        session.sigHoverBuffer.connect(self._pointer_changed)
        session.sigHoverNode.connect(self._pointer_changed)
        session.sigSelectionChanged.connect(self._pointer_changed)
        session.selection_model.sigNodeSelected.connect(self._pointer_changed)
        session.selection_model.sigReveal.connect(self.reveal)
        self._graph_changed()

    def _line(self, color: QColor) -> pg.InfiniteLine:
        line = pg.InfiniteLine(angle=0, movable=False,
                               pen=pg.mkPen(color, width=1.5, style=Qt.PenStyle.DashLine))
        self.plot_widget.getPlotItem().addItem(line, ignoreBounds=True)
        line.hide()
        return line

    def mark_labels(self) -> list[tuple[float, str]]:
        """The (bytes, text) labels beside the peak and bound lines in the right margin."""
        return list(self._marks)

    def _label_marks(self, *_) -> None:
        """Name the peak and the bound in the right margin: one label when they would touch."""
        plan = self.session.plan
        if plan is None or self.lower_bound is None or not self._names:
            self._marks = []
            self.marks_axis.setTicks([[]])
            self.marks_axis.setWidth(8)
            return
        peak, bound = plan.slab_bytes, self.lower_bound.bytes
        (_x0, _x1), (y0, y1) = self.view_box.viewRange()
        if abs(peak - bound) <= MERGE_MARKS * max(y1 - y0, 1.0):
            marks = [(float(peak), f"peak = bound {format_bytes(peak)}" if peak == bound else
                      f"peak {format_bytes(peak)} ≈ bound")]
        else:
            marks = [(float(peak), f"peak {format_bytes(peak)}"),
                     (float(bound), f"bound {format_bytes(bound)}")]
        self._marks = marks
        self.marks_axis.setTicks([marks])
        metrics = self.fontMetrics()
        self.marks_axis.setWidth(max(metrics.horizontalAdvance(text) for _, text in marks) + 16)

    # --- session -------------------------------------------------------------------------

    def _graph_changed(self) -> None:
        graph = self.session.graph
        self._lifetime_cache = {}
        self._fills = buffer_fills(graph) if graph is not None else []
        if graph is not None:
            self.legend.set_kinds(b.kind for b in graph.buffers)
        trace = getattr(graph, "allocator", None)
        self._packed = packed_addresses(trace) if trace is not None else {}
        self.placement_choice.blockSignals(True)
        self.placement_choice.setCurrentIndex(0)
        self.placement_choice.blockSignals(False)
        self.placement_choice.setVisible(bool(self._packed))
        self._described = None  # nothing of the old graph may linger in the detail line
        self.details.setText(HOVER_HINT)
        self._redraw()
        self.view_box.enableAutoRange()

    def _redraw(self, *_) -> None:
        graph, plan = self.session.graph, self.session.plan
        if graph is None or plan is None:
            self._names = []
            self.layer.set_rects([], [], [], [], [], [])
            for item in (self.peak_line, self.lower_bound_line, self.peak_marker):
                item.hide()
            self._label_marks()
            self._describe_hovered()
            self.summary.setText(f"<span style='color:#B00020'>no plan: {self.session.plan_error}"
                                 "</span>" if self.session.plan_error else "no graph open")
            return
        conflicts = self.session.conflicts
        if conflicts not in self._lifetime_cache:
            lifetimes = buffer_lifetimes(graph, conflicts)
            self._lifetime_cache[conflicts] = (*lifetimes, self._node_steps(graph, lifetimes[2]))
        first, last, step_name, self._node_layer = self._lifetime_cache[conflicts]
        index = graph.buffer_index
        self._names = [p.name for p in plan.placements]
        rows = np.array([index[n] for n in self._names], dtype=np.int64)
        x = first[rows] + STEP_MARGIN
        width = last[rows] - first[rows] + 1 - 2 * STEP_MARGIN
        height = np.array([p.reserved for p in plan.placements], dtype=float)
        pytorch = self.placement_choice.currentText() == PYTORCH and self._packed
        if pytorch:
            # Blocks PyTorch reports no address for keep their planned offset, hidden.
            y = np.array([self._packed.get(p.name, p.offset) for p in plan.placements], dtype=float)
        else:
            y = np.array([p.offset for p in plan.placements], dtype=float)
        self.layer.set_rects(self._names, x, width, y, height, [self._fills[i] for i in rows])
        if pytorch:
            self.layer.set_emphasis(shown=[n in self._packed for n in self._names])
        self.plot_widget.getPlotItem().setLabel("bottom", step_name)
        self.plot_widget.getPlotItem().setLabel("left", "PyTorch address (packed)" if pytorch
                                                else "offset")
        self._mark_peak(plan, x, width, y + height)
        self._mark_lower_bound(graph, plan)
        self._label_marks()
        self._pointer_changed()

    def _node_steps(self, graph, step_name: str) -> dict[str, int]:
        model = planner.conflict_model(graph, self.session.conflicts)
        if step_name == "schedule step":
            return {graph.nodes[v].name: s for s, v in enumerate(model.schedule)}
        return {node.name: layer for node, layer in zip(graph.nodes, dag_layers(graph))}

    def _mark_peak(self, plan, x, width, tops) -> None:
        """The peak is the slab size; a marker sits over each buffer that reaches it."""
        self.peak_line.setValue(plan.slab_bytes)
        reaching = np.flatnonzero(tops >= plan.slab_bytes)
        names = ", ".join(self._names[i] for i in reaching[:3])
        more = f" and {reaching.size - 3} more" if reaching.size > 3 else ""
        self._peak_text = f", reached by {names}{more}" if reaching.size else ""
        self.peak_line.show()
        self.peak_marker.setData(x=x[reaching] + width[reaching] / 2,
                                 y=np.full(reaching.size, float(plan.slab_bytes)))
        self.peak_marker.show()

    def _mark_lower_bound(self, graph, plan) -> None:
        self.lower_bound = self.session.lower_bound()
        bound = self.lower_bound.bytes
        self.lower_bound_line.setValue(bound)
        self.lower_bound_line.show()
        over = (plan.slab_bytes - bound) / bound if bound else 0.0
        self.summary.setText(
            f"<b><span style='color:{PEAK_COLOR.name()}'>peak</span></b> "
            f"{plan.slab_bytes:,} B ({format_bytes(plan.slab_bytes)}){self._peak_text} &nbsp; "
            f"<b><span style='color:{BOUND_COLOR.name()}'>lower bound</span></b> {bound:,} B "
            f"({format_bytes(bound)}) &nbsp; the plan is {over:.1%} above the bound")

    # --- emphasis and pointer ------------------------------------------------------------

    def _pointer_changed(self, *_) -> None:
        if not self._names:
            return
        alpha, outlines = pointer_emphasis(self.session, self._names)
        if self._exporting:  # a picture shows the plan, not where the pointer was
            alpha, outlines = np.full(len(self._names), 255.0), {}
        self.layer.set_emphasis(alpha=alpha, outlines=outlines)
        node = None if self._exporting else (self.session.hovered_node
                                             or self.session.selection_model.node)
        step = self._node_layer.get(node) if node is not None else None
        self.layer.set_bands([] if step is None else [(step, step + 1, ANCESTOR, node)])
        self._describe_hovered()

    def _describe_hovered(self) -> None:
        """The detail line for the hovered buffer, or the last one hovered, from the plan on show;
        the hint once that buffer is no longer in the plan."""
        hovered = self.session.hovered_buffer
        known = self.session.plan.by_name if self.session.plan is not None and self._names else {}
        if hovered is not None and hovered in known:
            self._described = hovered
        self.plot_widget.setToolTip(describe_buffer(self.session, hovered)
                                    if hovered in known else "")
        if self._described in known:
            self.details.setText(describe_buffer_line(self.session, self._described))
        else:
            self._described = None
            self.details.setText(HOVER_HINT)

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
        self.session.pick_buffer(name, toggle=bool(modifiers & Qt.KeyboardModifier.ControlModifier))

    def enter_export(self) -> None:
        """Drop the hint, the outline key and pointer emphasis so a picture shows only the plan."""
        self._exporting = True
        self.details.hide()
        self.outline_legend.hide()
        self._pointer_changed()

    def leave_export(self) -> None:
        """Bring back what `enter_export` hid."""
        self._exporting = False
        self.details.show()
        self.outline_legend.show()
        self._pointer_changed()

    def eventFilter(self, watched, event) -> bool:
        """Keys pressed over the plot zoom and pan."""
        if watched is self.plot_widget and event.type() == QEvent.Type.KeyPress:
            return zoom_pan_key(self.view_box, event.key(), zoom_x=True, zoom_y=True)
        return super().eventFilter(watched, event)
