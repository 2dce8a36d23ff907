"""The inspector: the plan's summary, a sortable table of buffers, and a two-buffer comparison.

The table shows name, bytes, offset and lifetime, each as wide as its widest value (measured
with font metrics from the data, never by visiting rows); the rest (kind, reserved, conflicts,
uses, reuses) are in the hover detail and can be shown from the header's menu. While search
runs, the table and summary follow its best plan so far, marked provisional.

The comparison says whether two buffers may share bytes and why, in the conflict model's words
(which one precedes the other, or the pair of uses that cannot reach each other).
"""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import (QAbstractTableModel, QEvent, QModelIndex, QSortFilterProxyModel, Qt,
                            Signal)
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (QAbstractItemView, QGroupBox, QHBoxLayout, QHeaderView, QLabel,
                               QMenu, QTableView, QVBoxLayout, QWidget)

from slabscope import planner
from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.common.buffer_details import describe_buffer
from slabscope.app.views.common.buffer_emphasis import PointerOutlines
from slabscope.app.views.common.lazy_combo import LazyNameCombo
from slabscope.app.views.common.lifetimes import prepare_step_model, step_model
from slabscope.app.views.common.peak_headline import headline_rows, use_live_peak
from slabscope.planner.placement.lazy_trace import reuses_by_name
from slabscope.planner.support.text import counted

COLUMNS = ("name", "bytes", "offset", "lifetime", "kind", "reserved", "conflicts", "uses",
           "reuses")
COLUMN_WIDTHS = (96, 60, 60, 60, 92, 60, 64, 150, 90)  # at least; fitted columns widen to fit
# In view at the window's default size; the others are shown from the header's menu.
SHOWN_COLUMNS = ("name", "bytes", "offset", "lifetime")
LEAD_ROWS = ("live peak", "slab")  # in bold: the two figures the summary answers with
FITTED_COLUMNS = ("bytes", "offset", "lifetime", "reserved", "conflicts")  # sized to their widest
PLAN_COLUMNS = ("offset", "reuses")  # what a new plan of the same graph changes
NUMBER_COLUMNS = ("bytes", "reserved", "offset", "conflicts")
RESORT_ROWS = 5_000  # up to this many rows, a table sorted by offset re-sorts per partial plan
CELL_PADDING = 24  # a cell's margins and the header's sort arrow
SORT_ROLE = Qt.ItemDataRole.UserRole + 1
NO_PICK = "—"
LIFETIME_DASH = "–"
PROVISIONAL_ROW = ("plan", "<b><span style='color:#8A5A00'>provisional</span></b>: search's best "
                          "so far; the search continues")


def _names(names, limit: int = 6) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


class BufferTableModel(QAbstractTableModel):
    """One row per buffer of the session's graph (file order) with its placement in the plan.

    Cells are computed when the view asks for them, from the graph and plan on show, so a new
    plan on 62,000 buffers costs no per-row work up front."""

    # After `follow_plan` redrew a plan's columns in place (their widths may need to follow).
    sigPlanFollowed = Signal()

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self._graph = None
        self._plan = None
        self._steps: dict | None = None  # the plan's reuses by buffer name, built on first use
        self._lifetimes = None  # the plan's conflict model's steps (`lifetimes.StepModel`)
        self._counts: list[int] | None = None
        for prepare in (prepare_conflict_counts, prepare_widest, prepare_step_model):  # in the worker
            if prepare not in session.prepare_plans:
                session.prepare_plans.append(prepare)
        for prepare in (_largest_sizes,):  # the size columns' widths, on loading
            if prepare not in session.prepare_graphs:
                session.prepare_graphs.append(prepare)
        # Rows of what the session points at are tinted in its outline colour, as in the plots.
        self.outlines = PointerOutlines(session, self._outlines_changed)
        session.sigPlanChanged.connect(self.refresh)
        self.refresh()

    def _outlines_changed(self) -> None:
        count = self.rowCount()
        if count:
            self.dataChanged.emit(self.index(0, 0), self.index(count - 1, len(COLUMNS) - 1),
                                  [Qt.ItemDataRole.BackgroundRole])

    def row_of(self, name: str) -> int | None:
        """The source row of buffer `name`, or None."""
        return self._graph.buffer_index.get(name) if self._graph is not None else None

    def conflict_counts(self) -> list[int]:
        """Per buffer index, how many other buffers it conflicts with (counted by the planning
        worker with each plan; here only for a graph planned without it)."""
        return conflict_counts(self.session.graph, self.session.conflicts)

    def refresh(self, *_):
        """Show the session's graph and plan."""
        self.beginResetModel()
        self._graph, self._steps = self.session.graph, None
        self._set_plan(self.session.shown_plan)
        # While the first plan is made the worker builds the conflict model; counts wait for it.
        planning = self._plan is None and self.session.plan_error is None
        self._counts = None if self._graph is None or planning else self.conflict_counts()
        self.endResetModel()

    def follow_plan(self, *_):
        """Show the plan on show (search's best so far, or the one it gives way to) in place:
        only the columns a plan changes are redrawn, and rows, selection and scrolling stay."""
        if self.session.graph is not self._graph or self._graph is None:
            self.refresh()
            return
        self._steps = None
        self._set_plan(self.session.shown_plan)
        count = self.rowCount()
        if count:
            for column in PLAN_COLUMNS + ("lifetime",):
                c = COLUMNS.index(column)
                self.dataChanged.emit(self.index(0, c), self.index(count - 1, c))
        self.sigPlanFollowed.emit()

    def _set_plan(self, plan) -> None:
        self._plan = plan
        # Made by the planning worker with each plan (`prepare_step_model`).
        self._lifetimes = (step_model(self._graph, plan.conflict_model)
                           if plan is not None and self._graph is not None else None)

    def cell(self, row: int, column: str):
        """The value of `column` for source row `row`: a number, text, a tuple of names, or
        None (not placed)."""
        buf = self._graph.buffers[row]
        if column == "name":
            return buf.name
        if column == "kind":
            return buf.kind
        if column == "bytes":
            return buf.bytes
        if column == "reserved":
            return self._graph.reserved[row]
        if column == "offset":
            placement = self._plan.by_name.get(buf.name) if self._plan else None
            return placement.offset if placement else None
        if column == "uses":
            return buf.uses
        if column == "conflicts":
            return None if self._counts is None else self._counts[row]
        if column == "lifetime":
            steps = self._lifetimes
            return None if steps is None else (int(steps.first[row]), int(steps.last[row]))
        if self._plan is None:
            return ()
        if self._steps is None:
            self._steps = reuses_by_name(self._plan)
        return self._steps.get(buf.name, ())

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() or self._graph is None else len(self._graph.buffers)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            if COLUMNS[section] == "lifetime":
                step = self._lifetimes.step_name if self._lifetimes is not None else "step"
                return f"first and last {step} the buffer is live"
            return "Right-click to choose the columns; hover a row for all its facts"
        return None

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        column = COLUMNS[index.column()]
        if role == Qt.ItemDataRole.BackgroundRole:
            colour = self.outlines.outline_of(self.buffer_name(index.row()))
            return None if colour is None else _tint(colour)
        if role == Qt.ItemDataRole.TextAlignmentRole:
            if column in NUMBER_COLUMNS + ("lifetime",):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            return None
        if role not in (SORT_ROLE, Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return None
        value = self.cell(index.row(), column)
        if role == SORT_ROLE:
            if column in ("uses", "reuses"):
                return len(value)
            if column == "lifetime":  # by first step, then last
                return -1 if value is None else value[0] * (1 << 32) + value[1]
            return -1 if value is None else value
        if role == Qt.ItemDataRole.DisplayRole:
            if value is None:
                return "-"
            if column in ("bytes", "reserved", "offset"):
                return f"{value:,}"
            if column == "lifetime":
                return _lifetime_text(*value)
            if column in ("uses", "reuses"):
                return _names(value, 3) or "-"
            return str(value)
        if column in ("uses", "reuses"):
            return ", ".join(value) or None
        if column == "name":
            # The name whole, the facts of the columns not in view, and a snapshot's stack.
            return describe_buffer(self.session, value)
        return None

    def buffer_name(self, row: int) -> str:
        """The buffer shown in source row `row`."""
        return self._graph.buffers[row].name

    def widest_text(self, column: str) -> str:
        """The longest text column `column` shows (numbers: the largest value, formatted)."""
        graph, plan = self._graph, self._plan
        if graph is None or not graph.buffers:
            return "-"
        if column == "offset":
            largest = _largest_offset(plan) if plan is not None else None
            return "-" if largest is None else f"{largest:,}"
        if column in ("bytes", "reserved"):
            return f"{_largest_sizes(graph)[column == 'reserved']:,}"
        if column == "conflicts":
            return str(max(self._counts)) if self._counts else "-"
        if column == "lifetime":
            steps = self._lifetimes
            if steps is None or not len(steps.last):
                return "-"
            latest = int(steps.last.max())
            return f"{latest:,}{LIFETIME_DASH}{latest:,}"  # at least as wide as any
        values = [v for v in (self.cell(r, column) for r in range(len(graph.buffers))) if v is not None]
        return str(max(values)) if values else "-"


def _lifetime_text(first: int, last: int) -> str:
    """"3–7", or "5" for a buffer live at one step only."""
    return f"{first:,}" if first == last else f"{first:,}{LIFETIME_DASH}{last:,}"


def _count_conflicts(model, buffers: int) -> list[int]:
    if model.intervals is not None:  # conflicts are exactly interval overlaps
        return _overlap_counts(*model.intervals)
    return [model.conflict_mask(b).bit_count() for b in range(buffers)]


# Per conflict model object (one per graph and model name, cached on the graph).
_conflict_counts = IdentityCache(_count_conflicts, size=4)


def conflict_counts(graph: planner.Graph, name: str) -> list[int]:
    """Per buffer index of `graph`, how many others it conflicts with under model `name`."""
    return _conflict_counts(planner.conflict_model(graph, name), len(graph.buffers))


def prepare_conflict_counts(graph: planner.Graph, plan: planner.Plan) -> None:
    """The planning worker's step: count conflicts for the plan's model before it is shown
    (tens of thousands of masks take a stall's worth of time on the GUI thread)."""
    conflict_counts(graph, plan.conflict_model)


# Undo and redo show earlier plans again: their column widths are not worked out anew.
_largest_offset = IdentityCache(lambda plan: max((p.offset for p in plan.placements), default=None))
# Made by the loading worker too, where a graph without buffers must not fail: hence defaults.
_largest_sizes = IdentityCache(lambda graph: (max((b.bytes for b in graph.buffers), default=0),
                                              max(graph.reserved, default=0)), size=2)


def prepare_widest(graph: planner.Graph, plan: planner.Plan) -> None:
    """The planning worker's step: the largest offset, which sizes its column (a pass over
    every placement; sizes and names are found on loading)."""
    _largest_offset(plan)


def _overlap_counts(first, last) -> list[int]:
    """Per interval [first, last] (closed), how many others overlap it: those starting by its
    end, less those ending before its start, less itself (sorting, not n² masks)."""
    first, last = np.asarray(first), np.asarray(last)
    started = np.searchsorted(np.sort(first), last, side="right")
    ended = np.searchsorted(np.sort(last), first, side="left")
    return (started - ended - 1).tolist()


def _tint(colour: QColor) -> QColor:
    """A pale fill of `colour` that keeps the row's text readable."""
    return QColor.fromRgbF(*(0.78 + 0.22 * c for c in colour.getRgbF()[:3]))


class Inspector(QWidget):
    """Summary (always in view), the buffer table, and "pick two buffers" comparison."""

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.summary = QLabel(self)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary.setWordWrap(True)

        self.model = BufferTableModel(session, self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SORT_ROLE)
        # Sorted on each new plan (a model reset) and header click, not per changed cell: see
        # `_follow_provisional`.
        self.proxy.setDynamicSortFilter(False)
        self.table = QTableView(self)
        self.table.setModel(self.proxy)
        # File order until a header is clicked: with no sort column set first, enabling sorting
        # does not sort (on Y_1 that was 1.8 million data() calls).
        self.table.horizontalHeader().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(22)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for c, width in enumerate(COLUMN_WIDTHS):
            header.resizeSection(c, width)
            header.setSectionHidden(c, COLUMNS[c] not in SHOWN_COLUMNS)
        # The column chooser: the header's context menu.
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(self._choose_columns)
        self.column_actions = {}
        self.column_menu = QMenu(self)
        for c, column in enumerate(COLUMNS[1:], start=1):  # the name is always shown
            action = self.column_menu.addAction(column)
            action.setCheckable(True)
            action.setChecked(column in SHOWN_COLUMNS)
            action.toggled.connect(lambda shown, c=c: self.show_column(c, shown))
            self.column_actions[column] = action
        self.model.modelReset.connect(self._fit_columns)
        self.model.sigPlanFollowed.connect(self._fit_columns)
        self._fit_columns()  # the session may have had its plan before this table existed
        # Long names are cut at their end, never in the middle; the tooltip has them whole.
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setMouseTracking(True)
        self.table.entered.connect(self._hover_row)
        self.table.viewport().installEventFilter(self)
        self.table.selectionModel().selectionChanged.connect(self._table_to_session)

        self.first = LazyNameCombo(NO_PICK, self)
        self.second = LazyNameCombo(NO_PICK, self)
        for combo in (self.first, self.second):
            combo.setMinimumContentsLength(8)
            combo.currentIndexChanged.connect(self._combo_to_session)
        self.verdict = QLabel(self)
        self.verdict.setWordWrap(True)
        self.verdict.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        compare = QGroupBox("Compare two buffers", self)
        picks = QHBoxLayout()
        picks.addWidget(self.first, 1)
        picks.addWidget(QLabel("and"))
        picks.addWidget(self.second, 1)
        compare_layout = QVBoxLayout(compare)
        compare_layout.addLayout(picks)
        compare_layout.addWidget(self.verdict)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.summary)
        layout.addWidget(compare)
        layout.addWidget(self.table, 1)
        self._syncing = False
        session.sigGraphChanged.connect(self._fill_combos)
        # A newly opened graph shows its buffers, unplaced, while its first plan is made.
        session.sigGraphChanged.connect(self.model.refresh)
        session.sigGraphChanged.connect(self._show_summary)
        session.sigPlanChanged.connect(self._show_summary)
        session.sigPlanChanged.connect(self._show_verdict)
        # Search's best plan so far (and the plan it gives way to on a cancel) is shown in place.
        session.sigProvisionalPlan.connect(self._follow_provisional)
        session.sigSelectionChanged.connect(self._selection_from_session)
        session.selection_model.sigReveal.connect(self.reveal)
        use_live_peak(session)  # the summary leads with it
        self._fill_combos()
        self._show_summary()

    # --- summary -------------------------------------------------------------------------

    def summary_rows(self) -> list[tuple[str, str]]:
        """(label, value) pairs shown in the summary, of the plan on show."""
        graph, plan = self.session.graph, self.session.shown_plan
        if graph is None:
            return [("graph", "none open")]
        rows = [("graph", f"{graph.name}: {counted(len(graph.buffers), 'buffer')}, "
                          f"{counted(len(graph.nodes), 'node')}")]
        if plan is None and self.session.plan_error is None:
            return rows + [("plan", "being planned…")]
        if plan is None:
            return rows + [("plan", f"<span style='color:#C0392B'>{self.session.plan_error}</span>")]
        if self.session.plan_provisional:
            rows.append(PROVISIONAL_ROW)
        # Live peak, slab, bound and gap first; "without reuse" last (docs/peak.md).
        figures = [(label, f"<b>{html.escape(value)}</b>" if label in LEAD_ROWS else html.escape(value))
                   for label, value in headline_rows(self.session)]
        return rows + figures[:-1] + [("algorithm", f"{plan.algorithm}, conflicts: "
                                                    f"{plan.conflict_model}"), figures[-1]]

    def _show_summary(self, *_):
        cells = "".join(f"<tr><td style='color:#555;padding-right:10px'>{k}</td><td>{v}</td></tr>"
                        for k, v in self.summary_rows())
        self.summary.setText(f"<table>{cells}</table>")

    # --- comparison ----------------------------------------------------------------------

    def compare(self, a: str, b: str) -> str:
        """Whether buffers `a` and `b` may share bytes and why (the conflict model's explanation)."""
        graph = self.session.graph
        model = planner.conflict_model(graph, self.session.conflicts)
        return model.explain(graph.buffer_index[a], graph.buffer_index[b])

    def _fill_combos(self, *_):
        graph = self.session.graph
        names = graph.buffer_names if graph else ()  # a trace's, without a Buffer per name
        self._syncing = True
        try:
            for combo in (self.first, self.second):
                combo.set_names(names)  # added to the list when first opened
        finally:
            self._syncing = False
        self._show_verdict()

    def _picked(self) -> tuple[str, str] | None:
        a, b = self.first.currentText(), self.second.currentText()
        graph = self.session.graph
        if graph is None or a not in graph.buffer_index or b not in graph.buffer_index:
            return None
        return a, b

    def _show_verdict(self, *_):
        pair = self._picked()
        self.verdict.setText(self.compare(*pair) if pair else
                             "Pick two buffers (here, or select two rows) to see whether they "
                             "may share bytes, and why.")
        self._fit_verdict()

    def _fit_verdict(self) -> None:
        # Dock layouts ignore a wrapped label's height-for-width, so ask for it explicitly.
        self.verdict.setMinimumHeight(self.verdict.heightForWidth(max(self.verdict.width(), 200)))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit_verdict()

    def _combo_to_session(self, *_):
        if self._syncing:
            return
        self._show_verdict()
        pair = self._picked()
        if pair:
            self.session.select_buffers(pair)

    # --- selection and hover -------------------------------------------------------------

    def _table_to_session(self, *_):
        if self._syncing:
            return
        rows = sorted(self.proxy.mapToSource(i).row() for i in self.table.selectionModel().selectedRows())
        names = [self.model.buffer_name(r) for r in rows]
        if len(names) == 1:  # one buffer chosen: every panel scrolls to it
            self.session.selection_model.reveal("buffer", names[0])
        else:
            self.session.select_buffers(names)

    def _selection_from_session(self, names):
        """Pick the first two selected buffers for the comparison and select their rows."""
        self._syncing = True
        try:
            for combo, name in zip((self.first, self.second), names):
                combo.show_name(name)
            wanted = set(names)
            selection = self.table.selectionModel()
            current = {self.model.buffer_name(self.proxy.mapToSource(i).row())
                       for i in selection.selectedRows()}
            if current != wanted:
                selection.clearSelection()
                rows = sorted(r for r in map(self.model.row_of, wanted) if r is not None)
                for row in rows:
                    selection.select(self.proxy.mapFromSource(self.model.index(row, 0)),
                                     selection.SelectionFlag.Select | selection.SelectionFlag.Rows)
        finally:
            self._syncing = False
        self._show_verdict()

    # --- columns -------------------------------------------------------------------------

    def _fit_columns(self, *_) -> None:
        """Number and lifetime columns as wide as their widest value (found from the data and
        measured with font metrics, not by visiting rows), so that none is cut off; the name
        takes the room they leave."""
        metrics = self.table.fontMetrics()
        header = self.table.horizontalHeader()
        for column in FITTED_COLUMNS:
            c = COLUMNS.index(column)
            needed = max(metrics.horizontalAdvance(self.model.widest_text(column)),
                         metrics.horizontalAdvance(column)) + CELL_PADDING
            header.resizeSection(c, max(COLUMN_WIDTHS[c], needed))
        self._fit_name()

    def _fit_name(self) -> None:
        """The name column takes the room the other shown columns leave in the table, so that
        all of them are in view (longer names elide in the middle; the tooltip has them whole)."""
        header = self.table.horizontalHeader()
        others = sum(header.sectionSize(c) for c in range(1, len(COLUMNS))
                     if not header.isSectionHidden(c))
        header.resizeSection(0, max(COLUMN_WIDTHS[0], self.table.viewport().width() - others))

    def shown_columns(self) -> list[str]:
        """The table's columns in view (not hidden by the column chooser), left to right."""
        header = self.table.horizontalHeader()
        return [COLUMNS[header.logicalIndex(v)] for v in range(header.count())
                if not header.isSectionHidden(header.logicalIndex(v))]

    def show_column(self, c: int, shown: bool) -> None:
        """Show or hide column `c` (the header's menu); the name gives or takes the room."""
        self.table.horizontalHeader().setSectionHidden(c, not shown)
        self.column_actions[COLUMNS[c]].setChecked(shown)
        self._fit_name()

    def _choose_columns(self, position) -> None:
        self.column_menu.popup(self.table.horizontalHeader().mapToGlobal(position))

    # --- search's best plan so far -------------------------------------------------------

    def _follow_provisional(self, *_) -> None:
        """Show search's best plan so far in place. A large table sorted by a column the plan
        changes keeps its row order until the final plan (re-sorting 62,000 rows through Python
        per partial plan would stall the window); the summary says the plan is provisional."""
        self.model.follow_plan()
        sorted_by = self.proxy.sortColumn()
        if 0 <= sorted_by and COLUMNS[sorted_by] in PLAN_COLUMNS + ("lifetime",) and (
                not self.session.plan_provisional or self.model.rowCount() <= RESORT_ROWS):
            self.proxy.invalidate()  # sorted again, keeping the selection
        self._show_summary()

    def reveal(self, kind: str, name: str) -> None:
        """Scroll the table to buffer `name` (or to the first buffer node `name` uses)."""
        graph = self.session.graph
        if graph is None:
            return
        if kind == "node":
            used = [b.name for b in graph.buffers if name in b.uses]
            name = used[0] if used else None
        row = self.model.row_of(name) if name is not None else None
        if row is not None:
            self.table.scrollTo(self.proxy.mapFromSource(self.model.index(row, 0)),
                                QAbstractItemView.ScrollHint.PositionAtCenter)

    def _hover_row(self, index):
        self.session.hover_buffer(self.model.buffer_name(self.proxy.mapToSource(index).row()))

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Leave:
            self.session.hover_buffer(None)
        elif event.type() == QEvent.Type.Resize:  # the table's width: the name's room
            self._fit_name()
        return False
