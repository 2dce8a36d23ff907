"""The window's In place switch: plan the open graph as the opt-in in-place rule rewrites it.

Plain Python, no Qt. Like choosing an order (app.state.schedule_choice), the switch is an
undoable edit that makes the session's `graph` another graph: the loaded one with each output
the rule allows merged into the argument that dies there (`planner.conflicts.in_place`), so the
slab, lifetimes, DAG and Peak panel all show the rewrite; undo puts the graph as loaded back.
The views are told through `sigGraphChanged`, as for a new file, and the kept plans and bounds
(made for the other graph) are dropped. Plans without the switch never change.
"""

from __future__ import annotations

from psygnal import Signal

from slabscope import planner
from slabscope.planner.conflicts.in_place import in_place

from slabscope.app.state.undo import UndoCommand


class _SetInPlace(UndoCommand):
    """Undoable switch between the graph as loaded and its in-place rewrite."""

    def __init__(self, choice: "InPlaceChoice", old: tuple, new: tuple, text: str):
        super().__init__(text)
        self.choice, self.old, self.new = choice, old, new
        self.keys = (choice.session.settings_key(),)

    def redo(self):
        self.choice._apply(*self.new)

    def undo(self):
        self.choice._apply(*self.old)


class InPlaceChoice:
    """The session's in-place setting: `set(on)`; `on` says whether the rewrite is shown,
    `merged` how many outputs it wrote over an argument. Signals: `sigChanged()`."""

    sigChanged = Signal()

    def __init__(self, session):
        self.session = session
        self.on = False
        self.merged = 0
        self._switching = False  # our own graph swap is not a new file
        session.sigGraphChanged.connect(self._graph_changed)

    def set(self, on: bool) -> None:
        """Plan the in-place rewrite (True) or the graph as loaded (False); undoable."""
        session = self.session
        if session.graph is None or on == self.on:
            return
        if on:
            shared = in_place(session.graph)
            graph, merged = shared.graph, len(shared.merged)
            order = tuple(n for n in session.order if n not in shared.merged)
        else:
            graph, merged, order = self._plain
        old = (session.graph, session.order, self.on, self.merged)
        if on:
            self._plain = (session.graph, 0, session.order)
        session.undo_stack.push(_SetInPlace(self, old, (graph, order, on, merged),
                                            "In place" if on else "Not in place"))

    def _apply(self, graph: planner.Graph, order: tuple, on: bool, merged: int) -> None:
        session = self.session
        graph.build_objects()
        graph.buffer_index  # the name index the views look buffers up by
        self.on, self.merged = on, merged
        session.graph, session.order = graph, order
        session.plan, session.plan_error, session._previous_plan = None, None, None
        session._plans, session._bounds = {}, {}  # made for the other graph
        session.selection_model.clear()
        self._switching = True
        try:
            session.sigGraphChanged.emit()
        finally:
            self._switching = False
        session.sigSettingsChanged.emit()
        self.sigChanged.emit()
        session._request_plan()

    def _graph_changed(self) -> None:
        if not self._switching:  # a new file opens as loaded
            self.on, self.merged = False, 0
            self.sigChanged.emit()
