"""The Peak dock: the answer first. The live peak and its step, who is live there (ranked, or
grouped by op, kind, module or frame), and each lever's saving, measured by running it in the
background (`planner.explain`), with a button that applies it.

Selecting a buffer row reveals it everywhere: the request list, the inspector, the slab bar,
the lifetime map scroll to it and the DAG centres its first user.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QTreeWidgetItem, QVBoxLayout,
                               QWidget)

from slabscope import planner
from slabscope.app.state.tasks import ImmediateExecutor, Task
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.common.peak_headline import peak_text, session_live_peak, use_live_peak
from slabscope.app.views.panels.lever_table import COLUMNS, WRAP_ROLE, LeverTable
from slabscope.app.views.panels.ranked_rows import HEADERS, WHERE_COLUMN, RankedRows
from slabscope.planner.analysis.explain import DEFAULT_LEVER_BUDGET
from slabscope.planner.analysis.peak import group, key_of, supported_groupings
from slabscope.planner.support.text import counted

BUFFERS = "buffer"  # the ungrouped, ranked list
ROWS_SHOWN = 500    # rows of the ranked list (Y_1's peak has 4,971; the rest are summed)
# Seconds each searching lever may spend: `slabscope explain`'s default, so that the window's
# levers are its figures (a budget buys a fixed number of steps, whatever the machine).
LEVER_BUDGET = DEFAULT_LEVER_BUDGET
NAME_ROLE = Qt.ItemDataRole.UserRole
LEVER_TEXT = {"order": "Apply the best order", "packing": "Plan with search",
              "allocator": "Show expandable segments", "in place": "Plan in place",
              "serial": "Plan under serial conflicts"}


class PeakPanel(QWidget):
    """The live peak, who is live there and the measured levers; `executor` runs the levers off
    the GUI thread (default: at once, for tests), `appliers` maps a lever's name to what applies
    it."""

    def __init__(self, session, executor=None, appliers: dict[str, Callable[[], None]] | None = None,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.executor = executor if executor is not None else ImmediateExecutor()
        self.appliers = appliers or {}
        self.explanation: planner.Explanation | None = None
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        self.headline.setTextFormat(Qt.TextFormat.RichText)
        self.grouping = QComboBox()
        self.grouping.setToolTip("List every buffer live at the live peak, or group them")
        self.grouping.currentIndexChanged.connect(self._fill_rows)
        self.rows = RankedRows()
        self.rows.itemSelectionChanged.connect(self._row_selected)
        self.levers = LeverTable()
        top = QHBoxLayout()
        top.addWidget(self.headline, 1)
        top.addWidget(QLabel("group by"))
        top.addWidget(self.grouping)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.rows, 1)
        layout.addWidget(QLabel("Levers, each measured by running it:"))
        layout.addWidget(self.levers)
        use_live_peak(session)
        session.sigGraphChanged.connect(self._graph_changed)
        session.sigPlanChanged.connect(self._plan_changed)
        self._graph_changed()
        self._plan_changed()

    # --- the live peak -------------------------------------------------------------------

    def _graph_changed(self, *_) -> None:
        graph = self.session.graph
        self.explanation = None
        self.levers.clear()
        self.grouping.blockSignals(True)
        self.grouping.clear()
        if graph is not None:
            self.grouping.addItems([BUFFERS, *supported_groupings(graph)])
        self.grouping.blockSignals(False)
        known = supported_groupings(graph) if graph is not None else ()
        # Columns the input has nothing for stay hidden: a snapshot has no ops.
        self.rows.setColumnHidden(3, "op" not in known)
        where = [g for g in ("module", "frame") if g in known]
        self.rows.setColumnHidden(WHERE_COLUMN, not where)
        # The column says what it holds: "module or frame" was cut to "module o" in the dock.
        self.rows.headerItem().setText(WHERE_COLUMN, " or ".join(where) or HEADERS[WHERE_COLUMN])
        live = session_live_peak(self.session)
        if live is None:
            self.headline.setText("no graph open")
        else:
            self.headline.setText(f"<b>live peak {peak_text(live)}</b>: "
                                  f"{counted(len(live.buffers), 'buffer')} live at once. Largest "
                                  f"first; select one to find it in every panel.")
        self._fill_rows()

    def _fill_rows(self, *_) -> None:
        self.rows.clear()
        graph, live = self.session.graph, session_live_peak(self.session)
        if graph is None or not live.buffers:
            return
        grouping = self.grouping.currentText() or BUFFERS
        total = live.bytes or 1
        items = []
        if grouping == BUFFERS:
            where = next((g for g in ("module", "frame") if g in supported_groupings(graph)), None)
            where_of = key_of(graph, where) if where else (lambda b, n: None)
            for b, n in list(zip(live.buffers, live.producers))[:ROWS_SHOWN]:
                size, buffer = graph.reserved[b], graph.buffers[b]
                item = QTreeWidgetItem([format_bytes(size), f"{size / total:.1%}", buffer.name,
                                        graph.nodes[n].op or "", buffer.kind,
                                        where_of(b, n) or ""])
                item.setData(0, NAME_ROLE, buffer.name)
                item.setToolTip(2, buffer.name)  # whole on hover; the column cuts at the end
                items.append(item)
        else:
            for g in group(graph, live, grouping):
                count = counted(g.count, "buffer")
                item = QTreeWidgetItem([format_bytes(g.bytes), f"{g.bytes / total:.1%}", count,
                                        g.key if grouping == "op" else "",
                                        g.key if grouping == "kind" else "",
                                        g.key if grouping in ("module", "frame") else ""])
                item.setData(0, NAME_ROLE, graph.buffers[g.buffers[0]].name)
                item.setToolTip(2, f"{g.key}: largest {graph.buffers[g.buffers[0]].name}")
                items.append(item)
        for item in items:
            for column in (0, 1):
                item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight)
        self.rows.addTopLevelItems(items)
        self.rows.fit_columns()

    def _row_selected(self) -> None:
        chosen = self.rows.selectedItems()
        if chosen:
            self.session.selection_model.reveal("buffer", chosen[0].data(0, NAME_ROLE))

    # --- levers --------------------------------------------------------------------------

    def _plan_changed(self, *_) -> None:
        graph, plan = self.session.graph, self.session.plan
        if graph is None or plan is None or (
                self.explanation is not None and self.explanation.graph is graph
                and (self.explanation.slab_bytes, self.explanation.algorithm,
                     self.explanation.conflicts)
                == (plan.slab_bytes, plan.algorithm, plan.conflict_model)):  # measured for it
            return
        self.levers.clear()
        self.levers.addTopLevelItem(QTreeWidgetItem(["measuring…"]))
        self.levers.fit_rows()

        def done(found: planner.Explanation) -> None:
            if self.session.graph is graph:
                self.explanation = found
                self._fill_levers(found)

        def failed(message: str) -> None:
            self.levers.clear()
            item = QTreeWidgetItem(["not measured", "", "", "", message])
            item.setData(COLUMNS - 1, WRAP_ROLE, True)
            self.levers.addTopLevelItem(item)
            self.levers.fit_rows()

        self.executor.submit(Task(f"Measuring the levers of {graph.name}",
                                  lambda token: planner.explain(graph, plan, budget=LEVER_BUDGET,
                                                                cancel=token),
                                  done, failed))

    def _fill_levers(self, found: planner.Explanation) -> None:
        self.levers.clear()
        for lever in found.levers:
            saves = (format_bytes(lever.saving_bytes) if lever.saving_bytes >= 0
                     else f"costs {format_bytes(-lever.saving_bytes)}")
            item = QTreeWidgetItem([lever.lever, saves, format_bytes(lever.bytes_after), "",
                                    lever.change])
            # What to change reads whole where it saves; elsewhere one line (its tooltip).
            item.setData(COLUMNS - 1, WRAP_ROLE, lever.saving_bytes > 0)
            for column in range(COLUMNS - 1):
                item.setToolTip(column, f"measured: {lever.how}")
            item.setToolTip(COLUMNS - 1, f"{lever.change}\n\nmeasured: {lever.how}")
            self.levers.addTopLevelItem(item)
            apply = self.appliers.get(lever.lever)
            if apply is not None and lever.saving_bytes > 0:
                self.levers.add_button(item, LEVER_TEXT[lever.lever], apply)
        self.levers.fit_rows()
