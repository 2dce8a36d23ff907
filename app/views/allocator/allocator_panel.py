"""The Allocator dock: what PyTorch's caching allocator would reserve for a graph, beside the slab.

The graph's schedule is replayed through `planner.allocator.caching_allocator` from an empty cache (for a
snapshot too: its recorded curves are in the live-bytes panel). The plot draws the model's
reserved bytes per step, the live bytes and the plan's slab; a check box asks what
`expandable_segments:True` would change. Two tables explain it: the largest buffers live at the
live peak (the step every panel marks, docs/peak.md), with their stacks or the nodes that use
them, and the largest blocks the allocator holds cached but free at its reserved peak (its own
step, named as such). Both replays are made by the loading worker
(`Session.prepare_graphs`), never on the GUI thread.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QCheckBox, QHeaderView, QLabel, QSplitter, QTreeWidget,
                               QTreeWidgetItem, QVBoxLayout, QWidget)

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.common.byte_axis import ByteAxis, format_bytes
from slabscope.app.views.common.peak_headline import session_live_peak, use_live_peak
from slabscope.app.views.common.redraw_when_shown import RedrawWhenShown
from slabscope.planner.allocator.allocator_replay import AllocatorReplay, replay_graph
from slabscope.planner.allocator.caching_allocator import AllocatorSettings
from slabscope.planner.support.text import counted

EXPANDABLE = AllocatorSettings(expandable_segments=True)
# One replay per graph and setting, made by the loading worker.
graph_allocator_replay = IdentityCache(lambda graph: replay_graph(graph), size=2)
graph_allocator_expandable = IdentityCache(lambda graph: replay_graph(graph, EXPANDABLE), size=2)

RESERVED_COLOR = QColor("#9D755D")
LIVE_COLOR = QColor("#4C78A8")
SLAB_COLOR = QColor("#B00020")
PEAK_COLOR = QColor("#1B7F3B")  # the allocator's reserved peak
LIVE_PEAK_COLOR = QColor("#4C78A8")  # the live peak, as in the live-bytes panel
FRAMES_SHOWN = 2
LIVE_ROWS = 50  # buffers listed as live at the live peak (the Peak panel lists them all)


class AllocatorPanel(QWidget):
    """The model's reserved curve, the live curve, the slab, and the peak explainer."""

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.replay: AllocatorReplay | None = None
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.expandable = QCheckBox("What if expandable_segments:True")
        self.expandable.setToolTip("Replay with one growing segment per stream and pool "
                                   "instead of one cudaMalloc per segment")
        self.expandable.toggled.connect(self.redraw)
        self.plot_widget = pg.PlotWidget(background="w", axisItems={"left": ByteAxis("left")})
        plot = self.plot_widget.getPlotItem()
        plot.hideButtons()
        plot.setMenuEnabled(False)
        plot.setLabel("bottom", "schedule step")
        plot.showGrid(y=True, alpha=0.15)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.getAxis("left").setWidth(self.fontMetrics().horizontalAdvance("1,000 MiB") + 20)
        self.live_at_peak = self._tree(("bytes", "live at the live peak", "where"))
        self.free_at_peak = self._tree(("bytes", "cached but free at the reserved peak", "stream"))
        self.free_at_peak.setToolTip("Free blocks the allocator keeps reserved: a request fits "
                                     "one only if it is on the same stream and pool")
        # Side by side: the bottom dock is short, and stacked the plot kept barely 60 pixels.
        tables = QSplitter(Qt.Orientation.Vertical)
        tables.addWidget(self.live_at_peak)
        tables.addWidget(self.free_at_peak)
        tables.setSizes([180, 120])
        splitter = QSplitter(Qt.Orientation.Horizontal)
        splitter.addWidget(self.plot_widget)
        splitter.addWidget(tables)
        splitter.setSizes([760, 640])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(self.expandable)
        layout.addWidget(splitter, 1)
        use_live_peak(session)
        for prepare in (graph_allocator_replay, graph_allocator_expandable):
            if prepare not in session.prepare_graphs:
                session.prepare_graphs.append(prepare)
        # Behind the Slab tab by default: a new graph or plan is drawn when the tab is shown.
        self.redraw_when_shown = RedrawWhenShown(self, self.redraw)
        session.sigGraphChanged.connect(self.redraw_when_shown)
        session.sigPlanChanged.connect(self.redraw_when_shown)
        session.sigProvisionalPlan.connect(self.redraw_when_shown)  # search's best so far
        self.redraw()

    @staticmethod
    def _tree(headers: tuple[str, ...]) -> QTreeWidget:
        tree = QTreeWidget()
        tree.setHeaderLabels(list(headers))
        tree.setRootIsDecorated(False)
        tree.setUniformRowHeights(True)
        tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        return tree

    def redraw(self, *_) -> None:
        """Show the replay of the session's graph under the chosen setting."""
        plot = self.plot_widget.getPlotItem()
        plot.clear()
        self.live_at_peak.clear()
        self.free_at_peak.clear()
        graph = self.session.graph
        if graph is None:
            self.replay = None
            self.summary.setText("no graph open")
            return
        expandable = self.expandable.isChecked()
        cache = graph_allocator_expandable if expandable else graph_allocator_replay
        self.replay = replay = cache(graph)
        steps = np.arange(len(replay.step_reserved) + 1, dtype=float)
        self._staircase(plot, steps, replay.step_live, LIVE_COLOR, fill=True)
        self._staircase(plot, steps, replay.step_reserved, RESERVED_COLOR, fill=False)
        plan = self.session.shown_plan
        if plan is not None:
            slab = float(plan.slab_bytes)
            plot.addItem(pg.PlotDataItem([0, len(replay.step_reserved)], [slab, slab],
                                         pen=pg.mkPen(SLAB_COLOR, width=1.5,
                                                      style=Qt.PenStyle.DashLine)))
        plot.addItem(pg.InfiniteLine(replay.peak_step + 0.5, angle=90,
                                     pen=pg.mkPen(PEAK_COLOR, width=1, style=Qt.PenStyle.DotLine)))
        live = session_live_peak(self.session)
        plot.addItem(pg.InfiniteLine(live.step + 0.5, angle=90, pen=pg.mkPen(
            LIVE_PEAK_COLOR, width=1.5, style=Qt.PenStyle.DashLine)))
        self.summary.setText(self._summary_html(replay, plan))
        self._fill_explainer(graph, replay, live)
        self.plot_widget.getPlotItem().getViewBox().autoRange()

    def _staircase(self, plot, steps, values, colour: QColor, fill: bool) -> None:
        x = np.repeat(steps, 2)[1:-1]
        y = np.repeat(np.asarray(values, dtype=float), 2)
        brush_colour = QColor(colour)
        brush_colour.setAlpha(70)
        plot.addItem(pg.PlotDataItem(x, y, pen=pg.mkPen(colour, width=1.5),
                                     fillLevel=0 if fill else None,
                                     brush=pg.mkBrush(brush_colour) if fill else None))

    def _summary_html(self, replay: AllocatorReplay, plan) -> str:
        made = len(replay.segments_created)
        if replay.settings.expandable_segments:
            setting = f"expandable_segments:True, grown {counted(made, 'time')}"
        else:
            setting = f"default settings, {counted(made, 'segment')}"
        parts = [f"PyTorch would <b style='color:{RESERVED_COLOR.name()}'>reserve</b> "
                 f"<b>{format_bytes(replay.peak_reserved_bytes)}</b> ({setting}, from an empty "
                 "cache)"]
        trace = self.session.graph.allocator
        if trace is not None:
            parts.append(f"it reserved {format_bytes(trace.peak_reserved_bytes)} when recorded")
        if plan is not None:
            parts.append(f"the <b style='color:{SLAB_COLOR.name()}'>slab</b> needs "
                         f"<b>{format_bytes(plan.slab_bytes)}</b>"
                         + (" (search's best so far, provisional)"
                            if self.session.plan_provisional else ""))
        live = session_live_peak(self.session)
        parts.append(f"<b style='color:{LIVE_PEAK_COLOR.name()}'>live peak</b> "
                     f"{format_bytes(live.bytes)} at step {live.step:,}")
        frag = replay.fragmentation
        if frag is not None:
            idle = frag.reserved_bytes - frag.requested_bytes
            parts.append(f"<b style='color:{PEAK_COLOR.name()}'>at the reserved peak</b> (step "
                         f"{replay.peak_step:,}): {format_bytes(idle)} "
                         f"reserved but not live, largest free block "
                         f"{format_bytes(frag.largest_free_block)}")
        return "; ".join(parts)

    def _fill_explainer(self, graph, replay: AllocatorReplay, live) -> None:
        trace = graph.allocator
        rows = []
        for i, user in zip(live.buffers[:LIVE_ROWS], live.producers):
            buffer = graph.buffers[i]
            stack = trace.stacks.get(buffer.name, ()) if trace is not None else ()
            # From its first user on: a recorded step's weight lists the step's first op first.
            uses = buffer.uses
            first = graph.nodes[user].name
            uses = uses[uses.index(first):] if first in uses else uses
            where = " ← ".join(stack[:FRAMES_SHOWN]) if stack else ", ".join(uses[:3]) + (
                " …" if len(uses) > 3 else "")
            item = QTreeWidgetItem([format_bytes(buffer.bytes), buffer.name, where])
            item.setToolTip(2, "\n".join(stack) if stack else ", ".join(buffer.uses))
            rows.append(item)
        self.live_at_peak.addTopLevelItems(rows)
        self.free_at_peak.addTopLevelItems([
            QTreeWidgetItem([format_bytes(free.size), f"in a {format_bytes(free.segment_bytes)} "
                             f"segment ({'small' if free.small else 'large'} pool)",
                             str(free.stream)])
            for free in replay.free_at_peak])
