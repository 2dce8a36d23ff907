"""The slab bar: every buffer a box at its byte offset, reuse stacked in lanes, and the animated
replay of first fit (which request is placed, what it must avoid, which gaps it skips, where it lands)."""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetricsF
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QSizePolicy, QSlider, QSpinBox,
                               QStyle, QToolButton, QVBoxLayout, QWidget)

from slabscope.app.qt.placement_replay import SPEEDS, PlacementReplay
from slabscope.app.views.common.buffer_colours import ColourChoice, fills_for, rgb_for
from slabscope.app.views.common.buffer_details import describe_buffer
from slabscope.app.views.common.buffer_emphasis import buffer_fills, node_roles, pointer_emphasis
from slabscope.app.views.common.byte_axis import ByteAxis, format_bytes
from slabscope.app.views.common.detail_line import DetailLine, detail_text
from slabscope.app.views.common.kind_legend import KindLegend, graph_kinds
from slabscope.app.views.common.outline_legend import POINTER_OUTLINES, REPLAY_OUTLINES, OutlineLegend
from slabscope.app.views.common.palette import CONFLICT_OUTLINE, HOVERED
from slabscope.app.views.common.range_zoom import RangeZoomViewBox
from slabscope.app.views.common.rect_layer import RASTER_BOXES, RectLayer, pick_fills
from slabscope.app.views.common.rich_text import ITEM_GAP, summary_line
from slabscope.app.views.common.view_keys import (FIT_KEYS, bring_into_view, ZOOM_IN_KEYS, ZOOM_OUT_KEYS,
                                                  zoom_pan_key)
from slabscope.app.views.common.peak_headline import graph_live_peak, use_live_peak
from slabscope.app.views.slab.slab_lanes import LANE_FILL, lanes_legible, slab_layout
from slabscope.app.views.slab.slab_section import section_lanes, slab_section
from slabscope.planner.support.text import counted

TWEEN_MS = 220              # old layout to new layout after a re-plan
FRAME_MS = 16
PLACED_ALPHA = 150          # already-placed buffers the current request may overlap
LANDING = QColor("#111111")
MANY_LANES = 24             # beyond this the lane axis zooms too
LABEL_HEADROOM = 0.35       # of a lane, above the top one
LINE_LABEL_AT = 0.98        # of the plot's height: the slab end's and bound's labels hang here
FIT_MARGIN = 0.03           # of the slab, right of its end, so the end line and label show
LANE_KEYS = ZOOM_IN_KEYS + ZOOM_OUT_KEYS + (Qt.Key.Key_Up, Qt.Key.Key_Down)
SUMMARY_MIN_WIDTH = 120      # pixels the summary keeps beside the legend in a narrow bar
SECTION_LANES = 200         # past this many lanes (slivers at any dock height) it opens at one step
LABEL_FILL = pg.mkBrush(255, 255, 255, 210)  # line labels stay readable over boxes
ALL_LANES, ONE_STEP = "all buffers, in lanes", "live at one step"
LANES_TIP = ("Lanes: a buffer sits one lane above the earlier-placed buffers whose bytes it reuses, "
             "so every box shows although buffers share bytes; the height means nothing else.")
STEP_TIP = ("The slab at one step of the lifetime map: only the buffers live then, at their "
            "offsets. Drag the slider to move through the steps.")
BOUND_COLOR = QColor("#1B7F3B")
GAP_FILL = QColor(176, 0, 32, 28)
HOVER_HINT = ("Point at a box for its bytes, offset, uses and conflicts; click to select. "
              "Drag across a range to zoom into it, Shift+drag pans, double-click shows all.")


class LayoutTween(QObject):
    """Moves the boxes from one layout to another over `TWEEN_MS` on a timer (never blocks)."""

    def __init__(self, layer: RectLayer, parent: QObject | None = None):
        super().__init__(parent)
        self.layer = layer
        self._timer = QTimer(self)
        self._timer.setInterval(FRAME_MS)
        self._timer.timeout.connect(self._frame)
        self._start = self._end = None
        self._began = 0.0

    @property
    def running(self) -> bool:
        """Whether boxes are still moving."""
        return self._timer.isActive()

    def run(self, start: np.ndarray, end: np.ndarray) -> None:
        """Animate geometry (4 x n: x, width, y, height) from `start` to `end`."""
        self._start, self._end = start, end
        self._began = time.perf_counter()
        self.layer.set_geometry(*start)
        self._timer.start()

    def finish(self) -> None:
        """Jump to the end layout now."""
        if self._timer.isActive():
            self._timer.stop()
            self.layer.set_geometry(*self._end)

    def _frame(self) -> None:
        t = min(1.0, (time.perf_counter() - self._began) * 1000 / TWEEN_MS)
        eased = 1 - (1 - t) ** 3
        self.layer.set_geometry(*(self._start + (self._end - self._start) * eased))
        if t >= 1.0:
            self._timer.stop()


class SlabView(QWidget):
    """The slab as a horizontal byte axis with one box per buffer, coloured by kind.

    Listens to the session: re-plans animate from the old layout to the new; hovering a box calls
    `session.hover_buffer`; the hovered node's buffers, the hovered buffer and the selection are
    outlined. `animation` (a `PlacementReplay`) steps through the plan's placement trace.
    Keys: + and - zoom, arrows pan, 0 fits, Space plays or pauses, [ and ] step.
    """

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.animation = PlacementReplay(self)
        self._graph = None
        self._order: list[str] = []
        self._position: dict[str, int] = {}
        self._target = np.zeros((4, 0))
        self._zoom_lanes = False

        self.summary = QLabel()
        self.summary.setWordWrap(True)  # long summaries wrap instead of widening the view
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # Its items never break inside, but a narrow bar may still squeeze it (clipping one).
        self.summary.setMinimumWidth(SUMMARY_MIN_WIDTH)
        self.legend = KindLegend()
        self.colouring = ColourChoice(session, self.legend, self._recolour)
        self.narration_label = QLabel()
        bold = QFont(self.narration_label.font())
        bold.setBold(True)
        self.narration_label.setFont(bold)
        self.narration_label.setWordWrap(True)
        self.details = DetailLine(HOVER_HINT)

        self.outline_legend = OutlineLegend(POINTER_OUTLINES + REPLAY_OUTLINES)
        self.plot_widget = pg.PlotWidget(background="w", viewBox=RangeZoomViewBox(),
                                         axisItems={"bottom": ByteAxis("bottom")})
        self.plot_widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.plot_widget.installEventFilter(self)
        plot = self.plot_widget.getPlotItem()
        plot.hideAxis("left")
        plot.setLabel("bottom", "offset in the slab")
        plot.setMouseEnabled(x=True, y=False)
        plot.hideButtons()
        self.view_box = plot.getViewBox()
        self.view_box.on_fit = self.fit
        self.view_box.sigXRangeChanged.connect(self._fit_lanes_in_view)
        self.view_box.sigResized.connect(self._follow_size)
        self.view_box.sigYRangeChanged.connect(self._lanes_moved)
        self.view_box.sigRangeChangedManually.connect(self._zoomed_by_user)
        self.section = None      # the SlabSection of the plan on show, in one-step mode
        self.section_step = 0    # the step shown in one-step mode
        self._layout_target = np.zeros((4, 0))  # the whole bar's geometry (lanes of all buffers)
        self._mode_graph = None  # the graph the mode was last chosen for
        self._live = np.zeros(0, dtype=bool)
        self._plan_text = self._lane_text = ""
        self._fitting = False
        self._lanes = np.zeros(0)
        self._exporting = False
        self.layer = RectLayer()
        self.layer.on_hover = session.hover_buffer
        self.layer.on_click = self._clicked
        plot.addItem(self.layer)
        self.slab_end = pg.InfiniteLine(angle=90, movable=False,
                                        pen=pg.mkPen("#444444", width=1, style=Qt.PenStyle.DashLine),
                                        label="slab end",
                                        # Left of the line, hanging below the top: never clipped.
                                        labelOpts={"position": LINE_LABEL_AT,
                                                   "color": "#444444",
                                                   "fill": LABEL_FILL,
                                                   "anchors": [(1.05, 0), (1.05, 0)]})
        plot.addItem(self.slab_end, ignoreBounds=True)
        # The least slab any plan can have, and the gap from it to this plan's end.
        self.gap_band = pg.LinearRegionItem(orientation="vertical", movable=False,
                                            brush=pg.mkBrush(GAP_FILL), pen=pg.mkPen(None))
        self.gap_band.setZValue(-10)
        plot.addItem(self.gap_band, ignoreBounds=True)
        self._end_text = self._bound_text = ""
        self.bound_line = pg.InfiniteLine(angle=90, movable=False,
                                          pen=pg.mkPen(BOUND_COLOR, width=1.5,
                                                       style=Qt.PenStyle.DashLine),
                                          label="bound",
                                          # In the slab end's row above the boxes; left of
                                          # its line, as the slab end's is of its own.
                                          labelOpts={"position": LINE_LABEL_AT,
                                                     "color": BOUND_COLOR,
                                                     "fill": LABEL_FILL,
                                                     "anchors": [(1.05, 0), (1.05, 0)]})
        plot.addItem(self.bound_line, ignoreBounds=True)
        for item in (self.gap_band, self.bound_line):
            item.hide()
        for line in (self.slab_end, self.bound_line):
            line.setZValue(20)  # their labels over the boxes
        self.view_box.sigXRangeChanged.connect(self._label_lines)
        self.view_box.sigResized.connect(self._label_lines)
        self.view_box.sigResized.connect(self._fit_lanes_in_view)  # the labels' row, in pixels
        plot.showAxis("left")
        plot.getAxis("left").setTicks([[]])
        # No ticks, so no scale either: an empty bar's 0..1 range read "lanes (x0.001)".
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.getAxis("left").setToolTip(LANES_TIP)
        plot.setLabel("left", "lanes")
        # Names the request being placed even when its box is a sliver at this zoom.
        self.landing_label = pg.TextItem(color="#111111", anchor=(0.5, 1.0))
        self.landing_label.setZValue(10)
        plot.addItem(self.landing_label, ignoreBounds=True)
        self.landing_label.hide()
        self.tween = LayoutTween(self.layer, self)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(3)
        top = QHBoxLayout()
        top.addWidget(self.summary, 1)
        self.fit_button = QToolButton()
        self.fit_button.setText("Fit")
        self.fit_button.setToolTip("zoomed in: show the whole slab  0 or double-click")
        self.fit_button.clicked.connect(self.fit)
        self.fit_button.hide()
        top.addWidget(self.fit_button)
        top.addWidget(self.legend)
        top.addWidget(self.colouring.combo)
        layout.addLayout(top)
        layout.addWidget(self.colouring.frame_legend)
        self.mode_choice = QComboBox()
        self.mode_choice.addItems([ALL_LANES, ONE_STEP])
        self.mode_choice.setToolTip(f"{LANES_TIP}\n{STEP_TIP}")
        self.mode_choice.currentIndexChanged.connect(self._mode_changed)
        # A narrow bar elides the choice rather than growing wider than asked for.
        self.mode_choice.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.mode_choice.setMinimumContentsLength(16)  # "live at one step" whole
        self.controls = QWidget()
        self.controls.setLayout(self._build_controls())
        # A narrow bar clips its replay controls rather than growing wider than asked for.
        self.controls.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout.addWidget(self.controls)
        layout.addWidget(self.narration_label)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.outline_legend)
        layout.addWidget(self.details)

        for prepare in (slab_layout, slab_section):  # laid out in the planning worker
            if prepare not in session.prepare_plans:
                session.prepare_plans.append(prepare)
        for prepare in (buffer_fills, node_roles):  # colours and node roles too, on loading
            if prepare not in session.prepare_graphs:
                session.prepare_graphs.append(prepare)
        use_live_peak(session)  # the summary leads with it; the section opens at its step
        if graph_kinds not in session.prepare_graphs:  # the legend's kinds, on loading
            session.prepare_graphs.append(graph_kinds)
        session.sigGraphChanged.connect(self._graph_changed)
        session.sigPlanChanged.connect(self._plan_changed)
        session.sigHoverBuffer.connect(self._pointer_changed)
        session.sigHoverNode.connect(self._pointer_changed)
        session.sigSelectionChanged.connect(self._pointer_changed)
        session.selection_model.sigNodeSelected.connect(self._pointer_changed)
        session.selection_model.sigReveal.connect(self.reveal)
        self.animation.sigStepChanged.connect(self._step_changed)
        self.animation.sigPlayingChanged.connect(self._playing_changed)
        self._graph_changed()
        self._plan_changed(None, session.plan)

    # --- construction --------------------------------------------------------------------

    def _build_controls(self) -> QHBoxLayout:
        style = self.style()
        row = QHBoxLayout()

        def button(icon, text, tip, slot):
            b = QToolButton()
            b.setIcon(style.standardIcon(icon))
            b.setText(text)
            b.setToolTip(tip)
            b.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
            b.clicked.connect(slot)
            row.addWidget(b)
            return b

        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.mode_choice)
        SP = QStyle.StandardPixmap
        self.back_button = button(SP.SP_MediaSeekBackward, "Back", "previous request  [",
                                  self.animation.step_back)
        self.play_button = button(SP.SP_MediaPlay, "Play", "replay first fit  Space",
                                  self.animation.toggle)
        self.forward_button = button(SP.SP_MediaSeekForward, "Step", "next request  ]",
                                     self.animation.step_forward)
        self.plan_button = button(SP.SP_MediaStop, "Whole plan", "leave the replay",
                                  self.animation.show_plan)
        self.speed = QComboBox()
        for speed in SPEEDS:
            self.speed.addItem(f"{speed:g} steps/s", speed)
        self.speed.setCurrentIndex(SPEEDS.index(self.animation.speed))
        self.speed.currentIndexChanged.connect(
            lambda i: self.animation.set_speed(self.speed.itemData(i)))
        row.addWidget(self.speed)
        # The scrubber: drag through the steps, or type one into "go to step".
        self.scrubber = QSlider(Qt.Orientation.Horizontal)
        self.scrubber.setToolTip("drag through the placement steps")
        self.scrubber.valueChanged.connect(self._scrubbed)
        self.scrubber.setMinimumWidth(60)
        row.addWidget(self.scrubber, 1)
        self.step_box = QSpinBox()
        self.step_box.setPrefix("step ")
        self.step_box.setToolTip("go to step: type its number")
        self.step_box.setKeyboardTracking(False)  # jump when the number is complete, not per digit
        self.step_box.valueChanged.connect(lambda v: self._scrubbed(v - 1))
        row.addWidget(self.step_box)
        self.replay_note = QLabel()
        self.replay_note.setStyleSheet("color: #666666")
        row.addWidget(self.replay_note)
        self.replay_widgets = (self.back_button, self.play_button, self.forward_button,
                               self.plan_button, self.speed, self.scrubber, self.step_box)
        return row

    def _scrubbed(self, index: int) -> None:
        """The slider or step box moved: to a step of the lifetime map in one-step mode, else to
        a step of the placement replay."""
        if self.section is not None:
            self.show_step(index)
        else:
            self.animation.go_to(index)

    def _sync_replay_controls(self) -> None:
        """Enable the replay only when the plan has a trace; otherwise say why, in tooltips too.
        In one-step mode the slider and step box move through the lifetime map's steps."""
        if self.section is not None:
            for widget in self.replay_widgets:
                widget.setEnabled(widget in (self.scrubber, self.step_box))
            self.replay_note.setText(self.section.step_name)
            self.replay_note.setVisible(True)
            self.replay_note.setToolTip(STEP_TIP)
            self.controls.setToolTip("")
            count = self.section.steps
            for widget in (self.scrubber, self.step_box):
                widget.blockSignals(True)
            self.scrubber.setRange(0, max(0, count - 1))
            self.step_box.setRange(0, max(0, count - 1))
            self.step_box.setSuffix(f" of 0–{count - 1:,}")
            self.scrubber.setValue(self.section_step)
            self.step_box.setValue(self.section_step)
            for widget in (self.scrubber, self.step_box):
                widget.blockSignals(False)
            return
        reason = self.animation.unavailable_reason
        count = self.animation.step_count
        for widget in self.replay_widgets:
            widget.setEnabled(reason is None)
        self.replay_note.setText("no placement trace")
        self.replay_note.setVisible(reason is not None)
        self.replay_note.setToolTip(reason or "")
        self.controls.setToolTip(reason or "")
        for widget in (self.scrubber, self.step_box):
            widget.blockSignals(True)
        self.scrubber.setRange(0, max(0, count - 1))
        self.step_box.setRange(1 if count else 0, count)
        self.step_box.setSuffix(f" of {count:,}")
        self._show_step_in_controls(self.animation.current_step)
        for widget in (self.scrubber, self.step_box):
            widget.blockSignals(False)

    def _show_step_in_controls(self, index) -> None:
        shown = self.animation.step_count - 1 if index is None else index
        for widget, value in ((self.scrubber, shown), (self.step_box, shown + 1)):
            widget.blockSignals(True)
            widget.setValue(value)
            widget.blockSignals(False)

    # --- session -------------------------------------------------------------------------

    def _graph_changed(self) -> None:
        graph = self.session.graph
        self.details.setText(HOVER_HINT)
        if graph is not None:
            self.legend.set_kinds(graph_kinds(graph))
        self.colouring.sync()
        if self.session.plan is None and self._order:
            self._plan_changed(None, None)  # no box of the old graph stays while the new one plans
        elif graph is not None and self.session.plan is None:
            self.summary.setText(self._error_text())

    def _plan_changed(self, old, new) -> None:
        same_graph = self.session.graph is self._graph
        # Only a bar small enough to animate needs the boxes' old places.
        small = new is not None and len(new.placements) <= RASTER_BOXES
        before = self.layer.geometry() if same_graph and small else {}
        self._graph = self.session.graph
        self.tween.finish()
        self._layout_plan(new)
        self.animation.set_plan(new)
        if self.animation.speed in SPEEDS:  # a plan's default speed is not the user's choice
            self.speed.blockSignals(True)
            self.speed.setCurrentIndex(SPEEDS.index(self.animation.speed))
            self.speed.blockSignals(False)
        self._sync_replay_controls()
        if before and old is not None and new is not None and len(self._order) <= RASTER_BOXES:
            # New buffers grow from zero width where they land; known ones slide from where they were.
            start = self._target.copy()
            for i, name in enumerate(self._order):
                if name in before:
                    start[:, i] = before[name]
                else:
                    start[1, i] = 0.0
            self.tween.run(start, self._target)
        self._show_zoom()  # every new plan is shown whole, unless the user zoomed
        self._refresh_emphasis()
        self._describe_hovered()

    def fit(self) -> None:
        """Show the whole slab from byte 0, its lanes filling the height (and following the
        bytes in view); a new plan refits until the user zooms again."""
        self.session.view.zoom = None
        self.fit_button.hide()
        plan = self.session.shown_plan if self._order else None
        end = float(plan.slab_bytes) if plan is not None else 1.0
        if self._target.shape[1]:
            end = max(end, float((self._target[0] + self._target[1]).max()))
        self._fitting = True
        try:
            # An explicit range rather than auto-range: it does not depend on the view's size,
            # so a bar laid out while its tab was hidden starts at 0 too.
            self.view_box.disableAutoRange()
            self.view_box.setXRange(0.0, max(end, 1.0) * (1 + FIT_MARGIN), padding=0)
        finally:
            self._fitting = False
        self._follow_lanes = True
        self._fit_lanes_in_view()

    # Zoom and lane following live in the session's view settings, so that a session file
    # keeps them and an export can set them.

    @property
    def zoomed(self) -> bool:
        """Whether the user zoomed or panned the bytes since the last fit: then a new plan keeps
        the view and the fit button says the slab may reach beyond it."""
        return self.session.view.zoom is not None

    @property
    def _follow_lanes(self) -> bool:
        # True until the user zooms or pans the lanes themselves.
        return self.session.view.follow_lanes

    @_follow_lanes.setter
    def _follow_lanes(self, follow: bool) -> None:
        self.session.view.follow_lanes = follow

    def _show_zoom(self) -> None:
        """Fit the slab, or show the bytes the view settings were zoomed to."""
        zoom = self.session.view.zoom
        if zoom is None:
            self.fit()
            return
        self._fitting = True
        try:
            self.view_box.disableAutoRange()
            self.view_box.setXRange(*zoom, padding=0)
        finally:
            self._fitting = False
        self.fit_button.setVisible(not self._exporting)
        self._fit_lanes_in_view()

    def _zoomed_by_user(self, *_) -> None:
        if self._fitting:
            return
        self.session.view.zoom = self._bytes_in_view()
        self.fit_button.setVisible(not self._exporting)

    def _bytes_in_view(self) -> tuple[float, float]:
        (first, last), _ = self.view_box.viewRange()
        return float(first), float(last)

    def showEvent(self, event) -> None:
        """A bar shown again after a plan arrived while it was hidden shows that plan whole
        (or as zoomed), coloured as chosen meanwhile in the lifetime map."""
        super().showEvent(event)
        if self.colouring.sync():
            self._recolour()
        self._follow_size()
        self._show_zoom()

    def _recolour(self) -> None:
        """Colour the boxes by the session's colouring (by kind or by frame)."""
        self.tween.finish()
        self._layout_plan(self.session.shown_plan)  # search's best so far too
        self._refresh_emphasis()

    def _lanes_moved(self, *_) -> None:
        if not self._fitting:
            self._follow_lanes = False

    def _fit_lanes_in_view(self, *_) -> None:
        """Lane height follows what is in view: the lanes of the boxes within the visible bytes
        fill the plot's height."""
        if self.zoomed and not self._fitting:  # a pan or zoom by the user: keep where it went
            self.session.view.zoom = self._bytes_in_view()
        if not self._lanes.size or not self._follow_lanes:
            return
        (x0, x1), _ = self.view_box.viewRange()
        x, width = self._target[0], self._target[1]
        in_view = (x < x1) & (x + width > x0) & self._shown_mask()
        top = int(self._lanes[in_view].max()) + 1 if in_view.any() else 1
        self._fitting = True
        try:
            self.view_box.setYRange(0, top + self._headroom(top), padding=0)
        finally:
            self._fitting = False

    def _headroom(self, lanes: float) -> float:
        """Lanes to leave free above the top one of `lanes`: room for the name of the request
        being placed, and a row of the plot's height for the slab end's and the bound's
        labels, so that they never cover a box."""
        headroom = LABEL_HEADROOM * max(1, lanes / 4)
        height = self.view_box.height()
        text = self.slab_end.label.textItem
        label = QFontMetricsF(text.font()).height() + 2 * text.document().documentMargin()
        row = (1 - LINE_LABEL_AT) * height + label + 2
        if height > 2 * row:  # a bar too short for both keeps its lanes
            headroom = max(headroom, lanes * row / (height - row))
        return headroom

    def _layout_plan(self, plan) -> None:
        graph = self.session.graph
        if plan is None or graph is None:
            self._order, self._position, self._target = [], {}, np.zeros((4, 0))
            self.layer.set_rects([], [], [], [], [], [])
            self._lanes = np.zeros(0)
            self.section = None
            for item in (self.slab_end, self.bound_line, self.gap_band):
                item.hide()
            self.summary.setText(self._error_text())
            return
        placements = plan.placements
        layout = slab_layout(graph, plan)
        self._order, self._position = layout.order, layout.position
        self._target = self._layout_target = layout.target
        fills = fills_for(self.session)
        rows = np.asarray(layout.rows, dtype=np.int64)
        self.layer.set_rects(self._order, *self._target, pick_fills(fills, rows),
                             index=layout.position, rgb=rgb_for(self.session)[rows])
        lanes = layout.lanes
        lane_count = int(lanes.max()) + 1 if lanes.size else 1
        self._lanes = lanes
        new_graph = self._mode_graph is not graph
        if new_graph:
            self._mode_graph = graph
            self.section_step = None
        # Until the user picks a mode, the bar shows the one that suits the plan at its size.
        wanted = self.session.view.slab or self._suited_mode(layout, lane_count, plan, new_graph)
        self.mode_choice.blockSignals(True)
        self.mode_choice.setCurrentText(ONE_STEP if wanted == "step" else ALL_LANES)
        self.mode_choice.blockSignals(False)
        # Lanes get thin on big graphs, so there the lanes can be zoomed as well as the bytes.
        self._zoom_lanes = lane_count > MANY_LANES
        self.plot_widget.getPlotItem().setMouseEnabled(x=True, y=self._zoom_lanes)
        self.slab_end.setValue(plan.slab_bytes)
        self._end_text = f"slab end {format_bytes(plan.slab_bytes)}"
        self.slab_end.show()
        bound_items = self._mark_bound(plan)
        self._label_lines()
        share = plan.saved_bytes / plan.no_reuse_bytes if plan.no_reuse_bytes else 0.0
        # Figures stay with their labels; the plain words after them may wrap, so the bar can
        # still be narrow, but not before the buffer count (a snapshot's "2,609 buffers" went
        # to a line of its own).
        live = graph_live_peak(graph)
        self._plan_text = summary_line([
            f"<b>live peak</b> {format_bytes(live.bytes)} at step {live.step:,}",
            f"<b>slab</b> {plan.slab_bytes:,} B ({format_bytes(plan.slab_bytes)})", *bound_items,
            f"<b>without reuse</b> {format_bytes(plan.no_reuse_bytes)} (the slab saves "
            f"{share:.1%})"]) + ITEM_GAP + \
            f"{plan.algorithm}, {plan.conflict_model}&nbsp;conflicts,&nbsp;" + \
            f"{len(placements):,}&nbsp;buffers"
        self._lane_text = f", {lane_count:,} lanes (buffers reusing bytes stack upward)"
        self.section = slab_section(graph, plan) if self.mode_choice.currentText() == ONE_STEP \
            else None
        if self.section is not None:
            peak = self.section.peak_step
            self.section_step = peak if self.section_step is None else \
                min(self.section_step, self.section.steps - 1)
            self._show_section()
        else:
            self.plot_widget.getPlotItem().setLabel("left", "lanes")
            self.summary.setText(self._plan_text + self._lane_text)

    def _suited_mode(self, layout, lane_count: int, plan, new_graph: bool = False) -> str:
        """"lanes" when the whole bar's lanes are legible in the plot's pixels, else "step"
        (the slab at its peak step). A bar not on show goes by the lane count alone for a new
        graph and keeps its mode for another plan of the same one, until it is shown."""
        if lane_count > SECTION_LANES:
            return "step"
        if not self.plot_widget.isVisible():  # its size is a placeholder until it is shown
            keep = self.mode_choice.currentText() == ONE_STEP and not new_graph
            return "step" if keep else "lanes"
        headroom = self._headroom(lane_count)
        width = self.view_box.width() / (1 + FIT_MARGIN)
        return "lanes" if lanes_legible(layout, plan.slab_bytes, width, self.view_box.height(),
                                        headroom) else "step"

    def _follow_size(self, *_) -> None:
        """The plot was resized or shown: switch between lanes and one step where the other now
        suits it, unless the user chose one."""
        graph, plan = self.session.graph, self.session.shown_plan
        if self.session.view.slab or plan is None or graph is None or not self._lanes.size:
            return
        lane_count = int(self._lanes.max()) + 1
        wanted = self._suited_mode(slab_layout(graph, plan), lane_count, plan)
        if (wanted == "step") != (self.mode_choice.currentText() == ONE_STEP):
            self.animation.show_plan()
            self._layout_plan(plan)
            self._sync_replay_controls()
            self._refresh_emphasis()
            if not self.zoomed:
                self.fit()

    def _label_lines(self, *_) -> None:
        """Label the slab end and the bound, each left of its line in one row; where the slab
        end's label would reach the bound's line on screen, both read in one label left of the
        bound's line, so that neither line crosses it."""
        if not self.slab_end.isVisible():
            return
        (x0, x1), _ = self.view_box.viewRange()
        pixels = max(self.view_box.width(), 1.0) / max(x1 - x0, 1e-300)
        apart = (self.slab_end.value() - self.bound_line.value()) * pixels
        room = self.fontMetrics().horizontalAdvance(self._end_text) + 12
        merged = self.bound_line.isVisible() and apart < room
        at_bound = merged and apart <= 0
        end, bound = self._end_text, "" if merged else self._bound_text
        if at_bound:  # the lines meet (or the bound is past the end): the end's label says it
            end = self._end_text.replace("slab end", "slab end = bound")
        elif merged:
            end, bound = "", f"{self._end_text} · {self._bound_text}"
        for line, text in ((self.slab_end, end), (self.bound_line, bound)):
            line.label.setFormat(text)
            line.label.setVisible(bool(text))  # an empty label would still draw its white fill
            line.label.valueChanged()  # a label only refreshes itself while visible

    def _mark_bound(self, plan) -> list[str]:
        """Draw the lower bound and the gap from it to the slab's end; their summary items."""
        bound = self.session.lower_bound()
        if bound is None:
            self.bound_line.hide()
            self.gap_band.hide()
            return []
        gap = plan.slab_bytes - bound.bytes
        share = gap / bound.bytes if bound.bytes else 0.0
        self.bound_line.setValue(bound.bytes)
        label = f"bound {format_bytes(bound.bytes)}"
        self._bound_text = label if gap <= 0 else f"{label}, gap {format_bytes(gap)} ({share:.1%})"
        self.bound_line.show()
        self.gap_band.setRegion((bound.bytes, plan.slab_bytes))
        self.gap_band.setVisible(gap > 0)
        return [f"<b><span style='color:{BOUND_COLOR.name()}'>lower bound</span></b> "
                f"{format_bytes(bound.bytes)}",
                f"<b>gap</b> {format_bytes(gap)} ({share:.1%} above the bound)"]

    # --- one step ------------------------------------------------------------------------

    def _mode_changed(self, *_) -> None:
        """The user chose between all lanes and one step: remember it in the session's view
        settings and lay the plan on show out again."""
        self.session.view.slab = "step" if self.mode_choice.currentText() == ONE_STEP else "lanes"
        self.animation.show_plan()
        self._layout_plan(self.session.shown_plan)
        self._sync_replay_controls()
        self._refresh_emphasis()
        if not self.zoomed:
            self.fit()

    def show_step(self, step: int) -> None:
        """In one-step mode, show the buffers live at `step` of the lifetime map."""
        if self.section is None:
            return
        self.section_step = max(0, min(int(step), self.section.steps - 1))
        self._show_section()
        self._sync_replay_controls()
        self._refresh_emphasis()
        if self._follow_lanes:
            self._fit_lanes_in_view()

    def _show_section(self) -> None:
        """Boxes of the buffers live at `section_step` at their offsets, the rest hidden."""
        section, step = self.section, self.section_step
        live = section.live_at(step)
        # The peak step's lanes come with the section, from the planning worker.
        lanes = (section.peak_lanes if step == section.peak_step
                 else section_lanes(self._layout_target, live))
        target = self._layout_target.copy()
        target[2] = lanes + (1 - LANE_FILL) / 2
        self._target, self._lanes, self._live = target, lanes, live
        self.layer.set_geometry(*target)
        self.layer.set_emphasis(shown=live)
        at_peak = " (the live-peak step)" if step == section.peak_step else \
            f" (live peak at {section.step_name} {section.peak_step:,})"
        # The step is in the summary and the step box; beside a bar a few lanes high, a
        # vertical "live at 1,232" was cut to "live at 1,23".
        self.plot_widget.getPlotItem().setLabel("left", "live")
        self.summary.setText(self._plan_text + "<br>" + summary_line([
            f"<b>{section.step_name} {step:,}</b>{at_peak}:",
            f"{counted(int(live.sum()), 'buffer')} live, "
            f"{format_bytes(section.live_bytes[step])} of "
            f"{format_bytes(self.session.shown_plan.slab_bytes)}"], gap=" "))

    def _error_text(self) -> str:
        if self.session.plan_error:
            return f"<span style='color:#B00020'>no plan: {self.session.plan_error}</span>"
        graph = self.session.graph
        return f"planning {graph.name}…" if graph is not None else "no graph open"

    # --- emphasis ------------------------------------------------------------------------

    def _pointer_changed(self, *_) -> None:
        self._refresh_emphasis()
        self._describe_hovered()

    def _describe_hovered(self) -> None:
        """The detail line for the hovered buffer, else the first selected one (click a box to
        keep its line), else the hint; from the plan on show."""
        hovered = self.session.hovered_buffer
        self.plot_widget.setToolTip(describe_buffer(self.session, hovered)
                                    if hovered in self._position else "")
        self.details.setText(detail_text(self.session, self._position, HOVER_HINT))

    def _step_changed(self, index) -> None:
        self._show_step_in_controls(index)
        self._refresh_emphasis()
        fast = self.animation.playing and self.animation.speed * TWEEN_MS > 1000
        if index is not None and self._order and not fast and len(self._order) <= RASTER_BOXES:
            # The request drops from above the top lane into its place, so the eye follows it;
            # when steps come faster than a drop lasts, boxes just appear.
            start = self._target.copy()
            start[2, index] = self.view_box.viewRange()[1][1]
            self.tween.run(start, self._target)

    def _playing_changed(self, playing: bool) -> None:
        SP = QStyle.StandardPixmap
        self.play_button.setIcon(self.style().standardIcon(SP.SP_MediaPause if playing
                                                           else SP.SP_MediaPlay))
        self.play_button.setText("Pause" if playing else "Play")

    def _refresh_emphasis(self) -> None:
        """Outline and dim boxes for the replay step on show, else for what the session points at."""
        if not self._order:
            self.narration_label.setText("")
            self.layer.set_bands([])
            self.landing_label.hide()
            return
        step = self.animation.step
        if step is None:
            alpha, outlines = pointer_emphasis(self.session, self._order, self._position)
            if self._exporting:  # a picture shows the plan, not where the pointer was
                alpha, outlines = np.full(len(self._order), 255.0), {}
            self.layer.set_emphasis(shown=self._shown_mask(), alpha=alpha, outlines=outlines)
            self.layer.set_bands([])
            self.narration_label.setText("")
            self.landing_label.hide()
            return
        shown = np.arange(len(self._order)) <= step.request
        alpha = np.full(len(self._order), float(PLACED_ALPHA))
        outlines = {name: (CONFLICT_OUTLINE, 2.5) for name in step.conflicts}
        for name in step.conflicts:
            alpha[self._position[name]] = 255.0
        alpha[step.request] = 255.0
        outlines[step.name] = (LANDING, 3.0)
        hovered = self.session.hovered_buffer
        if hovered is not None and hovered in self._position and hovered not in outlines:
            outlines[hovered] = (HOVERED, 3.0)
        self.layer.set_emphasis(shown=shown, alpha=alpha, outlines=outlines)
        self.layer.set_bands([(lo, hi, CONFLICT_OUTLINE,
                               f"{format_bytes(hi - lo)} < {format_bytes(step.reserved)}")
                              for lo, hi in step.skipped_gaps])
        self.narration_label.setText(self.animation.narration)
        x, width, y, height = self._target[:, step.request]
        self.landing_label.setText(f"▼ {step.name}")
        self.landing_label.setPos(x + width / 2, y + height)
        self.landing_label.show()

    def _shown_mask(self) -> np.ndarray:
        """Which boxes the plan view shows: all, or in one-step mode those live at the step."""
        if self.section is not None and len(self._live) == len(self._order):
            return self._live
        return np.ones(len(self._order), dtype=bool)

    def highlighted_conflicts(self) -> tuple[str, ...]:
        """The buffers outlined as conflicts of the request on show (empty outside the replay)."""
        return self.animation.highlighted_conflicts()

    # --- pointer and keys ----------------------------------------------------------------

    def reveal(self, kind: str, name: str) -> None:
        """Pan to buffer `name` (or to the first buffer node `name` uses) if it is out of view."""
        if kind == "node":
            graph = self.session.graph
            roles = node_roles(graph).get(name, {}) if graph is not None else {}
            uses = [n for n in self._order if n in roles]
            name = uses[0] if uses else None
        if name in self._position and self.section is not None:
            index = self._position[name]
            if not self._live[index]:  # in one-step mode, go to a step where it is live
                self.show_step(int(self.section.first[index]))
        if name in self._position:
            self._follow_lanes = True
            bring_into_view(self.view_box, self.layer.rect_of(name), along_y=False)
            self._fit_lanes_in_view()

    def hover_at(self, offset: float, lane: float) -> str | None:
        """Hover the point (byte `offset`, `lane`) as the pointer would; returns the buffer there."""
        name = self.layer.name_at(offset, lane)
        self.session.hover_buffer(name)
        return name

    def _clicked(self, name: str | None, modifiers) -> None:
        self.session.click_buffer(name, toggle=bool(modifiers & Qt.KeyboardModifier.ControlModifier))

    def eventFilter(self, watched, event) -> bool:
        """Keys pressed over the plot zoom, pan or drive the replay."""
        if watched is self.plot_widget and event.type() == QEvent.Type.KeyPress:
            return self.handle_key(event.key())
        return super().eventFilter(watched, event)

    def handle_key(self, key) -> bool:
        """Zoom, pan or drive the replay with `key`; returns whether the key meant something.
        In one-step mode [ and ] move through the steps and Space does nothing."""
        steps = {Qt.Key.Key_BracketRight: 1, Qt.Key.Key_Period: 1,
                 Qt.Key.Key_BracketLeft: -1, Qt.Key.Key_Comma: -1}
        if self.section is not None and (key in steps or key == Qt.Key.Key_Space):
            self.show_step(self.section_step + steps.get(key, 0))
        elif key == Qt.Key.Key_Space:
            self.animation.toggle()
        elif key in (Qt.Key.Key_BracketRight, Qt.Key.Key_Period):
            self.animation.step_forward()
        elif key in (Qt.Key.Key_BracketLeft, Qt.Key.Key_Comma):
            self.animation.step_back()
        elif key == Qt.Key.Key_Escape:
            self.animation.show_plan()
        elif key in FIT_KEYS:
            self.fit()
        else:
            if self._zoom_lanes and key in LANE_KEYS:
                self._follow_lanes = False  # the user takes the lanes in hand
            used = zoom_pan_key(self.view_box, key, zoom_y=self._zoom_lanes)
            if used:
                self._zoomed_by_user()
            return used
        return True

    def enter_export(self) -> None:
        """Drop the controls, hints and pointer emphasis so that a picture shows only the plan."""
        self._exporting = True
        self.animation.show_plan()
        for widget in (self.controls, self.narration_label, self.details, self.outline_legend,
                       self.fit_button):
            widget.hide()
        self.colouring.exporting = True
        self.colouring.combo.hide()  # the legend says how the boxes are coloured
        self._refresh_emphasis()

    def leave_export(self) -> None:
        """Bring back what `enter_export` hid."""
        self._exporting = False
        for widget in (self.controls, self.narration_label, self.details, self.outline_legend):
            widget.show()
        self.fit_button.setVisible(self.zoomed)
        self.colouring.exporting = False
        self.colouring.sync()
        self._refresh_emphasis()

    def hideEvent(self, event) -> None:
        """A hidden bar stops replaying and settles its boxes."""
        self.animation.pause()
        self.tween.finish()
        super().hideEvent(event)
