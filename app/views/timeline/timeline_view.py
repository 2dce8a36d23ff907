"""The timeline panel: the last run's phases laid end to end on a time axis, and under execute
one execute's kernels grouped by op (matmul ×N), each group starting where the one before it
ended; a group unfolds into its kernels, each the median over the executes with its min–max.

Every figure comes from the session's last `RunReport`: durations and shares of graph_compile,
search, prepare and execute; each kernel's time over the run's executes; device and backend;
achieved throughput against the device's peak; the verification verdict.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFontMetrics
from PySide6.QtWidgets import (QCheckBox, QFrame, QHBoxLayout, QLabel, QScrollArea,
                               QVBoxLayout, QWidget)

# One hue per phase (Tableau 10, colour-blind safe); kernels take execute's hue, lighter.
PHASE_COLORS = {
    "graph_compile": QColor("#4C78A8"),
    "search": QColor("#E45756"),
    "prepare": QColor("#72B7B2"),
    "execute": QColor("#F58518"),
}
PASSED = "#1B7F3B"
FAILED = "#B00020"
EMPTY_TEXT = ("No run yet.\nRun ▸ Run (Ctrl+R) executes the plan in one slab and shows here "
              "how long each phase took.")
BAR_HEIGHT = 0.7


def run_unavailable_text(reason: str | None, snapshot: bool = False) -> str:
    """The empty timeline's words: how to run, or (`reason` given) why Run is unavailable; a
    memory `snapshot` records allocations, not operations, so it has nothing to execute."""
    if reason is None:
        return EMPTY_TEXT
    if snapshot:
        return ("Nothing to run: a PyTorch memory snapshot records allocations, not the "
                "operations that made them.\nIts allocator's own figures are in the live-bytes "
                "view and the lifetime map.")
    return f"Run is unavailable for this graph.\n{reason}"

ROW_PIXELS = 18             # the least height of a row: its label never touches the next
AXIS_PIXELS = 48            # the time axis and its title under the rows
WHISKER = QColor("#333333")


@dataclass(frozen=True)
class TimelineRow:
    """One bar: `label` (with its figures) on the axis, from `start` for `seconds`; `note` says
    more on hover; `spread` is (least, most) seconds over the executes where they were kept;
    `group` names the op of a row that folds kernels (clicking it unfolds them)."""

    label: str
    start: float
    seconds: float
    note: str
    colour: QColor
    spread: tuple[float, float] | None = None
    group: str | None = None

    @property
    def end(self) -> float:
        """When the bar ends, in seconds from the start of the run."""
        return self.start + self.seconds


def _seconds_text(seconds: float) -> str:
    from slabscope.gpu.report import seconds_text

    return seconds_text(seconds)


def _spread_text(samples) -> tuple[str, tuple[float, float] | None, float | None]:
    """"median X (min–max)" over `samples`, the (min, max) and the median; blanks without any."""
    from slabscope.gpu.report import spread

    figures = spread(samples)
    if figures is None:
        return "", None, None
    median, least, most = figures
    return (f"median {_seconds_text(median)} ({_seconds_text(least)}–{_seconds_text(most)})",
            (least, most), median)


def kernel_groups(report) -> list[tuple[str, list]]:
    """The run's kernels by op, in order of first appearance: [(op, [KernelTime, ...]), ...]."""
    groups: dict[str, list] = {}
    for k in report.kernels:
        groups.setdefault(k.op, []).append(k)
    return list(groups.items())


def timeline_rows(report, expanded=frozenset()) -> list[TimelineRow]:
    """The bars top to bottom: the phases end to end from 0, then one row per op (matmul ×N: its
    kernels' time in one execute and share of it) end to end from where execute starts; the
    kernels of each op in `expanded` follow its row, end to end within it. Kernel bars are
    the median over the executes where samples were kept (else the mean), with the min–max."""
    from slabscope.gpu.report import rate_text

    rows, clock, execute_start = [], 0.0, 0.0
    for phase in report.phases:
        label = phase.name
        note = f"{_seconds_text(phase.seconds)} · {phase.share:.1%}"
        if phase.name == "execute":
            execute_start = clock
            label = f"execute ×{report.repeats}"
        rows.append(TimelineRow(f"{label}  {note}", clock, phase.seconds, note,
                                PHASE_COLORS[phase.name]))
        clock += phase.seconds
    one, one_range, one_median = _spread_text(report.execute_samples)
    if one:  # the repeats' spread: one execute's median, with the fastest and the slowest
        rows.append(TimelineRow(f"one execute  {one}", execute_start, one_median,
                                f"one execute of {report.repeats}: {one}",
                                PHASE_COLORS["execute"].lighter(120), one_range))
    one_execute = sum(k.seconds for k in report.kernels) or report.execute_seconds
    clock = execute_start
    kernel_colour = PHASE_COLORS["execute"].lighter(135)
    for op, kernels in kernel_groups(report):
        total = sum(k.seconds for k in kernels)
        share = total / one_execute if one_execute else 0.0
        unfolded = op in expanded
        mark = "▾" if unfolded else "▸"
        text = f"{_seconds_text(total)} per execute · {share:.0%}"
        rows.append(TimelineRow(f"{mark} {op} ×{len(kernels)}  {text}", clock, total,
                                f"{len(kernels)} {op} kernels: {text} of one execute "
                                f"(click to {'fold' if unfolded else 'unfold'})",
                                kernel_colour, group=op))
        if unfolded:
            inner = clock
            for k in kernels:
                spread_text, spread_range, median = _spread_text(k.samples)
                seconds = median if median is not None else k.seconds
                note = f"{_seconds_text(k.seconds)} mean per execute"
                if spread_text:
                    note = f"{spread_text} · {note}"
                if k.flops:
                    note += f" · {rate_text(k.flops_per_s, 'FLOP')}"
                    if k.flops_share_of_peak is not None:
                        note += f" ({k.flops_share_of_peak:.2%} of peak)"
                figure = spread_text or f"{_seconds_text(k.seconds)} mean"
                rows.append(TimelineRow(f"    ↳ {k.node}  {figure}", inner, seconds, note,
                                        kernel_colour.lighter(115), spread_range))
                inner += k.seconds
        clock += total
    return rows


def _peak_line(report) -> str:
    from slabscope.gpu.report import rate_text

    busiest = max((k for k in report.kernels if k.flops), key=lambda k: k.flops, default=None)
    if busiest is None:
        return "No kernel does arithmetic."
    achieved = f"{busiest.node}: {rate_text(busiest.flops_per_s, 'FLOP')} achieved"
    if report.peak_flops:
        return (f"{achieved}, {busiest.flops_share_of_peak:.2%} of "
                f"{rate_text(report.peak_flops, 'FLOP')} peak ({report.peak_precision})")
    return f"{achieved}; peak unknown ({report.peak_source})"


def _header_html(report) -> str:
    note = f" — {report.backend_note}" if report.backend_note else ""
    covered = report.phases_seconds / report.wall_seconds if report.wall_seconds else 0.0
    replay = report.replay
    replayed = (f"graph replay {_seconds_text(replay.replay_seconds)} vs eager "
                f"{_seconds_text(replay.eager_seconds)} per execute ({replay.reason})"
                if replay.available else f"graph replay: {replay.reason}")
    lines = [
        f"<b>{report.graph}</b> on <b>{report.backend}</b> · {report.device}{note}",
        f"plan {report.algorithm}, {report.conflicts} conflicts · slab {report.slab_bytes:,} B "
        f"(without reuse {report.no_reuse_bytes:,} B) · wall {_seconds_text(report.wall_seconds)},"
        f" phases cover {covered:.1%} · one execute {_seconds_text(report.execute_seconds)}; "
        f"one-time phases {_seconds_text(report.one_time_seconds)} = "
        f"{_seconds_text(report.amortised_seconds)} per execute over {report.repeats}",
        f"{_peak_line(report)} · {replayed}",
    ]
    return "<br>".join(lines)


def _verdict_html(report) -> str:
    v = report.verification
    if v is None:
        return "verification not run"
    color, mark = (PASSED, "✓ verified") if v.ok else (FAILED, "✗ NOT VERIFIED")
    return f"<span style='color:{color}'><b>{mark}:</b> {v.summary()}</span>"


class TimelineView(QWidget):
    """The last run of `session`: phase and op rows (linear or log time), header, verdict.

    Rows keep `ROW_PIXELS` each and scroll when they do not fit; click an op's row to unfold its
    kernels. The time axis ends at the run's wall time.
    """

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.report = None
        self.rows: list[TimelineRow] = []
        self.expanded: set[str] = set()
        self._empty_text = EMPTY_TEXT
        self._exporting = False
        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setWordWrap(True)
        self.verdict = QLabel()
        self.verdict.setTextFormat(Qt.TextFormat.RichText)
        self.verdict.setWordWrap(True)
        self.log_scale = QCheckBox("Log time scale")
        self.log_scale.setToolTip("Show durations on a logarithmic axis (short kernels stay "
                                  "visible next to long phases)")
        self.log_scale.toggled.connect(self._redraw)
        self.empty = QLabel(EMPTY_TEXT)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)

        self.plot = pg.PlotWidget(background="w")
        item = self.plot.getPlotItem()
        item.hideButtons()
        item.setMenuEnabled(False)
        item.getViewBox().setMouseEnabled(x=True, y=False)
        item.invertY(True)
        item.showGrid(x=True, alpha=0.2)
        self.plot.scene().sigMouseClicked.connect(self._clicked)
        self.plot.scene().sigMouseMoved.connect(self._pointed)
        # Rows keep their height; past the panel's height they scroll.
        self.scroll = QScrollArea()
        self.scroll.setWidget(self.plot)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

        controls = QHBoxLayout()
        controls.addWidget(self.log_scale)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addLayout(controls)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.verdict)
        session.sigRunChanged.connect(self.show_report)
        self.show_report(session.last_run)

    def enter_export(self) -> None:
        """Drop the scale checkbox and the scroll bar from a picture: every row is drawn in the
        picture's height (the axis says which scale is drawn)."""
        self._exporting = True
        self.log_scale.hide()
        self.scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self._redraw()

    def leave_export(self) -> None:
        """Bring back what `enter_export` hid."""
        self._exporting = False
        self.log_scale.show()
        self.scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self._redraw()

    def resizeEvent(self, event) -> None:
        """Lay the rows out again: the label column's width follows the panel's."""
        super().resizeEvent(event)
        if self.report is not None:
            self._redraw()

    def set_empty_text(self, text: str) -> None:
        """What the panel says while there is no run (the window says why Run is unavailable)."""
        self._empty_text = text
        if self.report is None:
            self.empty.setText(text)

    def show_failure(self, message: str) -> None:
        """Say that the last run failed, and why, where the run would be shown."""
        self.show_report(None)
        self.empty.setText(f"<span style='color:{FAILED}'><b>The run failed:</b> "
                           f"{html.escape(message)}</span><br><br>"
                           f"{html.escape(self._empty_text)}")

    def show_report(self, report) -> None:
        """Show `report` (None: the empty state)."""
        self.empty.setText(self._empty_text)
        if report is not self.report:
            self.expanded = set()
        self.report = report
        has_run = report is not None
        for widget in (self.header, self.scroll, self.plot, self.verdict, self.log_scale):
            widget.setVisible(has_run)
        self.empty.setVisible(not has_run)
        if has_run:
            self.header.setText(_header_html(report))
            self.verdict.setText(_verdict_html(report))
        self._redraw()

    def toggle_group(self, op: str) -> None:
        """Unfold the kernels of `op`'s row, or fold them back."""
        self.expanded ^= {op}
        self._redraw()

    def _row_at(self, scene_pos) -> TimelineRow | None:
        view_box = self.plot.getPlotItem().getViewBox()
        if not view_box.sceneBoundingRect().contains(scene_pos):
            return None
        y = round(view_box.mapSceneToView(scene_pos).y())
        return self.rows[y] if 0 <= y < len(self.rows) else None

    def _clicked(self, event) -> None:
        row = self._row_at(event.scenePos())
        if row is not None and row.group is not None:
            self.toggle_group(row.group)

    def _pointed(self, scene_pos) -> None:
        row = self._row_at(scene_pos)
        self.plot.setToolTip(row.note if row is not None else "")

    def _redraw(self, *_) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        if self.report is None:
            self.rows = []
            return
        rows = self.rows = timeline_rows(self.report, frozenset(self.expanded))
        self.plot.setMinimumHeight(0 if self._exporting else len(rows) * ROW_PIXELS + AXIS_PIXELS)
        log = self.log_scale.isChecked()
        shortest = min((r.seconds for r in rows if r.seconds > 0), default=1e-9)
        floor = math.log10(shortest) - 0.5  # the log axis starts half a decade below the shortest

        def at(t: float) -> float:
            return (math.log10(t) if t > 0 else floor) if log else t

        for y, row in enumerate(rows):
            left, right = at(row.start), at(row.end)
            if log:
                left = max(left, floor)
            item.addItem(pg.BarGraphItem(x0=[left], x1=[max(right, left)], y=[y],
                                         height=BAR_HEIGHT, brush=row.colour,
                                         pen=pg.mkPen(row.colour.darker(130))))
            if row.spread is not None:  # the fastest and slowest execute of this kernel
                lo, hi = at(row.start + row.spread[0]), at(row.start + row.spread[1])
                item.addItem(pg.PlotDataItem([lo, hi], [y, y], pen=pg.mkPen(WHISKER, width=1)))
                item.addItem(pg.ScatterPlotItem([lo, hi], [y, y], symbol="|", size=8,
                                                pen=pg.mkPen(WHISKER), brush=None))
        axis = item.getAxis("left")
        axis.setTicks([[(y, row.label) for y, row in enumerate(rows)]])
        # the axis only grows to its labels on a later layout pass: size it now
        metrics = QFontMetrics(axis.style["tickFont"] or self.plot.font())
        widest = max(metrics.horizontalAdvance(r.label) for r in rows)
        axis.setWidth(min(widest + 16, max(self.width() // 2, 160)))
        wall = max(self.report.wall_seconds, max(r.end for r in rows))
        end = at(wall)
        start = floor if log else 0.0
        bottom = item.getAxis("bottom")
        if log:
            # decade ticks labelled as times (1 µs, 10 µs, ...); pyqtgraph's own log ticks
            # crowd when the run spans only a few decades
            bottom.enableAutoSIPrefix(False)
            decades = range(math.ceil(start), math.floor(end) + 1)
            bottom.setTicks([[(d, _seconds_text(10.0 ** d)) for d in decades], []])
            item.setLabel("bottom", "time since the run started (log scale)", units=None)
        else:
            bottom.setTicks(None)
            bottom.enableAutoSIPrefix(True)
            item.setLabel("bottom", "time since the run started", units="s")
        # The axis ends at the wall time: every figure is in the row labels, none right of a bar.
        item.setXRange(start, end, padding=0)
        item.setYRange(-0.6, len(rows) - 0.4, padding=0)
