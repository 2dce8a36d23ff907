"""The window's In place switch: plan the open graph as the opt-in in-place rule rewrites it.

Plain Python, no Qt. Like choosing an order (app.state.schedule_choice), the switch is an
undoable edit that makes the session's `graph` another graph: the loaded one with each output
the rule allows merged into the argument that dies there (`planner.conflicts.in_place`), so the
slab, lifetimes, DAG and Peak panel all show the rewrite; undo puts the graph as loaded back.
The views are told through `sigGraphChanged` (`Session.show_graph`), as for a new file, and the
kept plans and bounds (made for the other graph) are dropped. Plans without the switch never change.

Whether the switch is on is read from the graph shown, never kept beside it: any edit that
shows another graph (undo, redo, "Use the given order" putting back a graph from before the
switch) turns it on or off with that graph.
"""

from __future__ import annotations

from dataclasses import dataclass

from psygnal import Signal

from slabscope import planner
from slabscope.planner.conflicts.in_place import InPlace, in_place

from slabscope.app.state.undo import UndoCommand


@dataclass(frozen=True)
class _Rewrite:
    """One rewrite this switch made: its buffers (kept so that their id stays theirs), the
    graph and request order it was made from, and how many outputs it merged."""

    buffers: tuple
    plain: planner.Graph
    order: tuple[str, ...]
    merged: int


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
    """The session's in-place setting: `set(on)`; `on` says whether the graph shown is an
    in-place rewrite, `merged` how many outputs it wrote over an argument. Signals:
    `sigChanged()` when `on` or `merged` changes."""

    sigChanged = Signal()

    def __init__(self, session):
        self.session = session
        self.on = False
        self.merged = 0
        # id(rewrite.buffers) -> the rewrite: a rewrite put in another order (with_schedule, a
        # dataclasses.replace) is a new graph over the same buffers tuple, still in place.
        self._rewrites: dict[int, _Rewrite] = {}
        session.sigGraphChanged.connect(self._graph_changed)
        session.sigSettingsChanged.connect(self._follow)

    def set(self, on: bool) -> None:
        """Plan the in-place rewrite (True) or the graph as loaded (False); undoable."""
        session = self.session
        if session.graph is None or on == self.on:
            return
        old = (session.graph, session.order)
        if on:
            shared = in_place(session.graph)
            if not shared.merged:  # the graph itself: nothing to switch to
                session.sigError.emit("In place: the rule merges no output of this graph")
                self.sigChanged.emit()  # a checked menu item goes back to unchecked
                return
            new = self._rewrite(shared)
        else:
            rewrite = self._rewrites[id(session.graph.buffers)]
            plain = rewrite.plain
            if session.graph.schedule != plain.schedule:  # an order chosen since: keep it
                plain = planner.with_schedule(plain, session.graph.schedule)
            new = (plain, rewrite.order)
        session.undo_stack.push(_SetInPlace(self, old, new, "In place" if on else "Not in place"))

    def restore(self, shared: InPlace) -> None:
        """Show `shared`, the rewrite of the graph just opened, without an undo entry (a
        session file saved with the switch on)."""
        if self.session.graph is not None and shared.merged:
            self._apply(*self._rewrite(shared))

    def _rewrite(self, shared: InPlace) -> tuple[planner.Graph, tuple[str, ...]]:
        """Record `shared` as this switch's, and the graph and order to show for it."""
        session = self.session
        self._rewrites[id(shared.graph.buffers)] = _Rewrite(
            shared.graph.buffers, session.graph, session.order, len(shared.merged))
        return shared.graph, tuple(n for n in session.order if n not in shared.merged)

    def _apply(self, graph: planner.Graph, order: tuple) -> None:
        session = self.session
        session.show_graph(graph, order)
        session.sigSettingsChanged.emit()  # `_follow` then reads the switch off the graph
        session._request_plan()

    def _follow(self) -> None:
        """Read `on` and `merged` off the graph shown."""
        graph = self.session.graph
        rewrite = self._rewrites.get(id(graph.buffers)) if graph is not None else None
        on, merged = rewrite is not None, rewrite.merged if rewrite is not None else 0
        if (on, merged) != (self.on, self.merged):
            self.on, self.merged = on, merged
            self.sigChanged.emit()

    def _graph_changed(self) -> None:
        if not self.session.swapping:  # a new file opens as loaded: the old rewrites are gone
            self._rewrites = {}
            self._follow()
