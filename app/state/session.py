"""The one session state every panel listens to: graph, request order, algorithm, plan, last run.

Views never call each other: they read this object, call its edit methods (which go through the
undo stack) and redraw on its signals. Nothing here draws, so it is testable without a display.
"""

from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoCommand, QUndoStack

import planner

SESSION_FORMAT = "slabscope-session"
SESSION_VERSION = 1


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
        # A bound slot (not a lambda) so the connection dies with the session, before its stack.
        self.undo_stack.cleanChanged.connect(self._clean_changed)
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
        self._bounds_graph: planner.Graph | None = None
        self._bounds: dict = {}  # conflict model name -> lower bound, for `_bounds_graph`

    def _clean_changed(self, clean: bool) -> None:
        self.sigDirtyChanged.emit(not clean)

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
        """Replace the graph (clears undo history, the plan and the last run) and re-plan.

        Listeners of `sigGraphChanged` see `plan` None; `sigPlanChanged(None, new)` follows.
        """
        self.graph, self.path = graph, path
        self.order = tuple(graph.buffers[i].name for i in graph.request_order(order))
        self.algorithm = algorithm or self.algorithm
        self.conflicts = conflicts or planner.default_conflicts(graph)
        self.capacity = capacity
        self.last_run = None
        # The old graph's plan must not reach views that already see the new graph.
        self.plan, self.plan_error = None, None
        self.hovered_node = self.hovered_buffer = None
        self.selection = ()
        self.undo_stack.clear()
        self.undo_stack.setClean()
        self.sigGraphChanged.emit()
        self.sigRunChanged.emit(None)
        self._replan()

    # --- session files (graph path, order, algorithm, conflicts, capacity) -----------------

    def save_session(self, path) -> None:
        """Write the session as JSON to `path` and mark the undo stack clean.

        The graph is stored as a path relative to the session file when it lies beside or below it.
        """
        if self.graph is None or self.path is None:
            raise planner.PlanError("nothing to save: open a graph file first")
        path = Path(path)
        graph_path = self.path.resolve()
        try:
            stored = graph_path.relative_to(path.resolve().parent).as_posix()
        except ValueError:
            stored = str(graph_path)
        data = {"format": SESSION_FORMAT, "version": SESSION_VERSION, "graph": stored,
                "order": list(self.order), "algorithm": self.algorithm,
                "conflicts": self.conflicts, "capacity": self.capacity}
        try:
            path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise planner.PlanError(f"cannot write session {path}: {exc.strerror or exc}") from None
        self.undo_stack.setClean()

    def open_session(self, path) -> bool:
        """Load a session file; on failure emit `sigError` and keep the current graph."""
        try:
            graph, graph_path, settings = read_session(path)
        except planner.PlanError as exc:
            self.sigError.emit(str(exc))
            return False
        self.set_graph(graph, graph_path, **settings)
        return True

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

    def lower_bound(self):
        """The planner's lower bound for the graph under the current conflict model (None without
        a graph). Computed once per graph and model, here, so every panel shares it."""
        if self.graph is None:
            return None
        if self._bounds_graph is not self.graph:
            self._bounds_graph, self._bounds = self.graph, {}
        if self.conflicts not in self._bounds:
            self._bounds[self.conflicts] = planner.lower_bound(self.graph, conflicts=self.conflicts)
        return self._bounds[self.conflicts]

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

    def pick_buffer(self, name: str | None, toggle: bool = False) -> None:
        """A click on buffer `name` (None: on nothing): select it alone, or with `toggle` add it
        to the selection or take it out."""
        if name is None:
            self.select_buffers(())
        elif toggle:
            chosen = [n for n in self.selection if n != name]
            if name not in self.selection:
                chosen.append(name)
            self.select_buffers(chosen)
        else:
            self.select_buffers((name,))

    def set_last_run(self, report) -> None:
        """Store the latest run report from `gpu` (None clears it)."""
        self.last_run = report
        self.sigRunChanged.emit(report)


def read_session(path) -> tuple[planner.Graph, Path, dict]:
    """Parse and check a session file: the graph it names, that graph's path, and the settings
    (`order`, `algorithm`, `conflicts`, `capacity`) ready for `Session.set_graph`."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise planner.PlanError(f"cannot read session {path}: {exc.strerror or exc}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise planner.PlanError(f"session {path.name} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        raise planner.PlanError(f"{path.name} is not a Slabscope session file")
    if not isinstance(data.get("graph"), str):
        raise planner.PlanError(f"session {path.name}: 'graph' must be a file path")
    graph_path = (path.parent / data["graph"]).resolve()
    graph = planner.load(graph_path)
    algorithm = data.get("algorithm", "first-fit")
    conflicts = data.get("conflicts", "dag")
    capacity = data.get("capacity")
    order = data.get("order")
    if algorithm not in planner.ALGORITHMS:
        raise planner.PlanError(f"session {path.name}: unknown algorithm {algorithm!r}")
    if conflicts not in planner.CONFLICT_MODELS:
        raise planner.PlanError(f"session {path.name}: unknown conflict model {conflicts!r}")
    if capacity is not None and (type(capacity) is not int or capacity < 0):
        raise planner.PlanError(f"session {path.name}: capacity must be a non-negative integer")
    if order is not None and not (isinstance(order, list) and all(isinstance(n, str) for n in order)):
        raise planner.PlanError(f"session {path.name}: 'order' must be a list of buffer names")
    graph.request_order(order)  # raises a PlanError naming an unknown or repeated buffer
    return graph, graph_path, {"order": order, "algorithm": algorithm, "conflicts": conflicts,
                               "capacity": capacity}
