"""The one session state every panel listens to: graph, request order, algorithm, plan, last run.

Views never call each other: they read this object, call its edit methods (which go through the
undo stack) and redraw on its signals. Nothing here draws, so it is testable without a display.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

import planner


class _SetSetting(QUndoCommand):
    """Undoable change of one planning setting (order, algorithm, conflicts or capacity)."""

    def __init__(self, session: "Session", field: str, old, new, text: str):
        super().__init__(text)
        self.session, self.field, self.old, self.new = session, field, old, new

    def redo(self):
        self.session._apply(self.field, self.new)

    def undo(self):
        self.session._apply(self.field, self.old)


class Session(QObject):
    """Graph, request order, algorithm, conflict model, capacity, current plan and last run.

    Signals (pyqtgraph style): `sigGraphChanged()` after a new graph is loaded;
    `sigPlanChanged(old_plan, new_plan)` whenever the plan is recomputed (either may be None);
    `sigSettingsChanged()` when order, algorithm, conflicts or capacity change;
    `sigHoverNode(name|None)`, `sigHoverBuffer(name|None)`, `sigSelectionChanged(tuple)`;
    `sigRunChanged(report|None)`; `sigError(message)`; `sigDirtyChanged(bool)`.
    """

    sigGraphChanged = Signal()
    sigPlanChanged = Signal(object, object)
    sigSettingsChanged = Signal()
    sigHoverNode = Signal(object)
    sigHoverBuffer = Signal(object)
    sigSelectionChanged = Signal(object)
    sigRunChanged = Signal(object)
    sigError = Signal(str)
    sigDirtyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.undo_stack = QUndoStack(self)
        self.undo_stack.cleanChanged.connect(lambda clean: self.sigDirtyChanged.emit(not clean))
        self.graph: planner.Graph | None = None
        self.path: Path | None = None
        self.order: tuple[str, ...] = ()
        self.algorithm = "first-fit"
        self.conflicts = "dag"
        self.capacity: int | None = None
        self.plan: planner.Plan | None = None
        self.plan_error: str | None = None
        self.last_run = None
        self.hovered_node: str | None = None
        self.hovered_buffer: str | None = None
        self.selection: tuple[str, ...] = ()

    # --- loading -------------------------------------------------------------------------

    def open(self, path) -> bool:
        """Load the graph at `path`; on failure emit `sigError` and keep the current graph."""
        try:
            graph = planner.load(path)
        except planner.PlanError as exc:
            self.sigError.emit(str(exc))
            return False
        self.set_graph(graph, Path(path))
        return True

    def set_graph(self, graph: planner.Graph, path: Path | None = None,
                  order=None, algorithm: str | None = None, conflicts: str | None = None,
                  capacity: int | None = None) -> None:
        """Replace the graph (clears undo history and the last run) and re-plan."""
        self.graph, self.path = graph, path
        self.order = tuple(graph.buffers[i].name for i in graph.request_order(order))
        self.algorithm = algorithm or self.algorithm
        self.conflicts = conflicts or self.conflicts
        self.capacity = capacity
        self.last_run = None
        self.hovered_node = self.hovered_buffer = None
        self.selection = ()
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self.sigGraphChanged.emit()
        self.sigRunChanged.emit(None)
        self._replan()

    # --- undoable edits ------------------------------------------------------------------

    def set_order(self, names) -> None:
        """Change the request order (undoable); re-plans. Unlisted buffers follow the file's order."""
        if self.graph is not None:
            full = self.graph.request_order(names)
            self._edit("order", tuple(self.graph.buffers[i].name for i in full), "Reorder requests")

    def set_algorithm(self, name: str) -> None:
        """Change the placing algorithm (undoable); re-plans."""
        self._edit("algorithm", name, f"Algorithm {name}")

    def set_conflicts(self, name: str) -> None:
        """Change the conflict model (undoable); re-plans."""
        self._edit("conflicts", name, f"Conflict model {name}")

    def set_capacity(self, capacity: int | None) -> None:
        """Change the capacity limit, None for none (undoable); re-plans."""
        self._edit("capacity", capacity, "Capacity")

    def restore_file_order(self) -> None:
        """Put the requests back in the graph file's order (undoable)."""
        if self.graph is not None:
            self.set_order(self.graph.order)

    def sort_by_size(self) -> None:
        """Order requests largest first, ties by file order (undoable)."""
        if self.graph is not None:
            size = {b.name: b.bytes for b in self.graph.buffers}
            rank = {n: i for i, n in enumerate(self.graph.order)}
            self.set_order(sorted(self.order, key=lambda n: (-size[n], rank[n])))

    def _edit(self, field: str, value, text: str) -> None:
        if self.graph is None or getattr(self, field) == value:
            return
        self.undo_stack.push(_SetSetting(self, field, getattr(self, field), value, text))

    def _apply(self, field: str, value) -> None:
        setattr(self, field, value)
        self.sigSettingsChanged.emit()
        self._replan()

    # --- planning ------------------------------------------------------------------------

    def _replan(self) -> None:
        old = self.plan
        try:
            self.plan = planner.plan(self.graph, algorithm=self.algorithm, order=self.order,
                                     capacity=self.capacity, conflicts=self.conflicts)
            self.plan_error = None
        except planner.PlanError as exc:
            self.plan, self.plan_error = None, str(exc)
            self.sigError.emit(self.plan_error)
        self.sigPlanChanged.emit(old, self.plan)

    # --- transient highlight state (not undoable) ----------------------------------------

    def hover_node(self, name: str | None) -> None:
        """Announce the node under the pointer (None when it leaves)."""
        if name != self.hovered_node:
            self.hovered_node = name
            self.sigHoverNode.emit(name)

    def hover_buffer(self, name: str | None) -> None:
        """Announce the buffer under the pointer (None when it leaves)."""
        if name != self.hovered_buffer:
            self.hovered_buffer = name
            self.sigHoverBuffer.emit(name)

    def select_buffers(self, names) -> None:
        """Set the selected buffers (the inspector compares the first two)."""
        names = tuple(names)
        if names != self.selection:
            self.selection = names
            self.sigSelectionChanged.emit(names)

    def set_last_run(self, report) -> None:
        """Store the latest run report from `gpu` (None clears it)."""
        self.last_run = report
        self.sigRunChanged.emit(report)
