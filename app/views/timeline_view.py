"""The timeline panel: the last run's phases laid end to end on a time axis, and under execute
the kernels of one execute, each starting where the one before it ended.

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
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

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
ROW_PIXELS = 15             # labels closer than this would touch: fewer rows are labelled


@dataclass(frozen=True)
class TimelineRow:
    """One bar: `label` on the axis, from `start` for `seconds`, `note` beside it."""

    label: str
    start: float
    seconds: float
    note: str
    colour: QColor

    @property
    def end(self) -> float:
        """When the bar ends, in seconds from the start of the run."""
        return self.start + self.seconds


def _seconds_text(seconds: float) -> str:
    from slabscope.gpu.report import seconds_text

    return seconds_text(seconds)


def timeline_rows(report) -> list[TimelineRow]:
    """The bars top to bottom: the phases end to end from 0, then the kernels of the first
    execute, end to end from where execute starts (each bar is one execute's time of it)."""
    from slabscope.gpu.report import rate_text

    rows, clock, execute_start = [], 0.0, 0.0
    for phase in report.phases:
        label = f"{phase.name} ×{report.repeats}" if phase.name == "execute" else phase.name
        if phase.name == "execute":
            execute_start = clock
        rows.append(TimelineRow(label, clock, phase.seconds,
                                f"{_seconds_text(phase.seconds)} · {phase.share:.1%}",
                                PHASE_COLORS[phase.name]))
        clock += phase.seconds
    one_execute = report.execute_seconds
    clock = execute_start
    for k in report.kernels:
        note = f"{_seconds_text(k.seconds)} per execute · {k.seconds / one_execute:.1%} of one"
        if k.flops:
            note += f" · {rate_text(k.flops_per_s, 'FLOP')}"
            if k.flops_share_of_peak is not None:
                note += f" ({k.flops_share_of_peak:.2%} of peak)"
        rows.append(TimelineRow(f"↳ {k.node} ({k.op})", clock, k.seconds, note,
                                PHASE_COLORS["execute"].lighter(135)))
        clock += k.seconds
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
    """The last run of `session`: phase and kernel bars (linear or log time), header, verdict."""

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.report = None
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

        controls = QHBoxLayout()
        controls.addWidget(self.log_scale)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addLayout(controls)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.verdict)
        session.sigRunChanged.connect(self.show_report)
        self.show_report(session.last_run)

    def show_failure(self, message: str) -> None:
        """Say that the last run failed, and why, where the run would be shown."""
        self.show_report(None)
        self.empty.setText(f"<span style='color:{FAILED}'><b>The run failed:</b> "
                           f"{html.escape(message)}</span><br><br>{html.escape(EMPTY_TEXT)}")

    def show_report(self, report) -> None:
        """Show `report` (None: the empty state)."""
        self.empty.setText(EMPTY_TEXT)
        self.report = report
        has_run = report is not None
        for widget in (self.header, self.plot, self.verdict, self.log_scale):
            widget.setVisible(has_run)
        self.empty.setVisible(not has_run)
        if has_run:
            self.header.setText(_header_html(report))
            self.verdict.setText(_verdict_html(report))
        self._redraw()

    def _redraw(self, *_) -> None:
        item = self.plot.getPlotItem()
        item.clear()
        if self.report is None:
            return
        rows = timeline_rows(self.report)
        log = self.log_scale.isChecked()
        shortest = min((r.seconds for r in rows if r.seconds > 0), default=1e-9)
        floor = math.log10(shortest) - 0.5  # the log axis starts half a decade below the shortest

        def at(t: float) -> float:
            return (math.log10(t) if t > 0 else floor) if log else t

        labelled = self._labelled_rows(rows)
        for y, row in enumerate(rows):
            left, right = at(row.start), at(row.end)
            if log:
                left = max(left, floor)
            bar = pg.BarGraphItem(x0=[left], x1=[max(right, left)], y=[y], height=BAR_HEIGHT,
                                  brush=row.colour, pen=pg.mkPen(row.colour.darker(130)))
            item.addItem(bar)
            if y in labelled:
                text = pg.TextItem(row.note, color=(40, 40, 40), anchor=(0, 0.5))
                text.setPos(right, y)
                item.addItem(text)
        axis = item.getAxis("left")
        axis.setTicks([[(y, rows[y].label) for y in sorted(labelled)]])
        # the axis only grows to its labels on a later layout pass: size it now
        metrics = QFontMetrics(axis.style["tickFont"] or self.plot.font())
        widest = max(metrics.horizontalAdvance(r.label) for r in rows)
        axis.setWidth(widest + 16)
        end = max(at(r.end) for r in rows)
        start = floor if log else 0.0
        bottom = item.getAxis("bottom")
        if log:
            # decade ticks labelled as times (1 µs, 10 µs, ...); pyqtgraph's own log ticks
            # crowd when the run spans only a few decades
            bottom.enableAutoSIPrefix(False)
            decades = range(math.ceil(start), math.floor(end) + 2)
            bottom.setTicks([[(d, _seconds_text(10.0 ** d)) for d in decades], []])
            item.setLabel("bottom", "time since the run started (log scale)", units=None)
        else:
            bottom.setTicks(None)
            bottom.enableAutoSIPrefix(True)
            item.setLabel("bottom", "time since the run started", units="s")
        # leave room right of the last bar for its annotation
        item.setXRange(start, end + (end - start) * 0.45, padding=0)
        item.setYRange(-0.6, len(rows) - 0.4, padding=0)

    def _labelled_rows(self, rows: list[TimelineRow]) -> set[int]:
        """The rows that get a label and a note: all when there is room; else the longest first,
        each only if it keeps `ROW_PIXELS` from every row labelled already, so none overlap."""
        height = self.plot.getPlotItem().getViewBox().height() or self.plot.height()
        per_row = height / max(len(rows), 1)
        if per_row >= ROW_PIXELS:
            return set(range(len(rows)))
        spacing = math.ceil(ROW_PIXELS / per_row) if per_row > 0 else len(rows)
        chosen: set[int] = set()
        for y in sorted(range(len(rows)), key=lambda k: -rows[k].seconds):
            if all(abs(y - other) >= spacing for other in chosen):
                chosen.add(y)
        return chosen

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.report is not None:
            self._redraw()
