"""Choosing the execution order in the window: the given one, or the best `planner.schedule` finds.

Plain Python, no Qt. Choosing "best" runs as a session task (in the background behind the
window's planning controller, cancellable like a plan): it finds the order and plans three
slabs side by side with the session's algorithm (the DAG-safe slab, the serial slab in the
given order, the serial slab in the best order). The switch itself is an undoable edit like a
reorder: the session's `graph` becomes the loaded graph with the chosen order as its schedule,
under the serial model, so the lifetime map and every panel show that order; undo puts the
given order and the conflict model before back. Choosing the given order from the menu keeps
the serial model, so the lifetime map shows the given order and the best one in turn. Results
are kept per loaded graph, so switching back and forth is immediate.
"""

from __future__ import annotations

from dataclasses import dataclass

from psygnal import Signal

from slabscope import planner

from slabscope.app.state.tasks import Task
from slabscope.app.state.undo import UndoCommand


@dataclass(frozen=True)
class ScheduleResult:
    """The best order of one loaded graph, that graph scheduled in it, and the three slabs
    (planned by `algorithm`)."""

    schedule: planner.Schedule
    scheduled: planner.Graph
    dag_slab: int | None
    given_slab: int
    best_slab: int
    algorithm: str


def choose_schedule(graph: planner.Graph, algorithm: str, budget: float, token
                    ) -> ScheduleResult:
    """Find the best order of `graph` and plan the three slabs (checks `token` throughout)."""
    chosen = planner.schedule(graph, budget=budget, cancel=token)
    scheduled = graph if chosen.fixed else planner.with_schedule(graph, chosen.order)

    def slab(g, conflicts):
        return planner.plan(g, algorithm=algorithm, conflicts=conflicts, budget=budget,
                            cancel=token).slab_bytes

    try:
        dag = slab(graph, "dag")
    except planner.CapacityError:
        dag = None
    return ScheduleResult(chosen, scheduled, dag, slab(graph, "serial"), slab(scheduled, "serial"),
                          algorithm)


class _SetSchedule(UndoCommand):
    """Undoable switch between the given order and a chosen one (graph, schedule, conflicts)."""

    def __init__(self, choice: "ScheduleChoice", old: tuple, new: tuple, text: str):
        super().__init__(text)
        self.choice, self.old, self.new = choice, old, new
        session = choice.session
        self.keys = (session.settings_key(), session.settings_key(
            schedule=new[1], conflicts=new[2]))

    def redo(self):
        self.choice._apply(*self.new)

    def undo(self):
        self.choice._apply(*self.old)


class ScheduleChoice:
    """The session's schedule setting: `choose("given" | "best")`, and what was found.

    Signals: `sigChanged()` when the schedule shown or its result changes.
    """

    sigChanged = Signal()

    def __init__(self, session):
        self.session = session
        self._results: dict[int, ScheduleResult] = {}  # id(loaded graph) -> result
        self._given: planner.Graph | None = None  # the graph as loaded
        session.sigGraphChanged.connect(self._graph_changed)

    @property
    def current(self) -> str:
        """"best" when a chosen order is in force, else "given"."""
        return "given" if self.session.schedule is None else "best"

    @property
    def result(self) -> ScheduleResult | None:
        """What choosing the best order found for the open graph, once it has."""
        return self._results.get(id(self._given)) if self._given is not None else None

    def choose(self, which: str) -> None:
        """Switch to the given or the best order (undoable); the first "best" finds it first."""
        session = self.session
        if session.graph is None or which == self.current:
            return
        if which == "given":
            # Still serial: the lifetime map then shows the given order beside the best one.
            self._push(self._given, None, "serial", "Use the given order")
            return
        known = self.result
        if known is not None:
            self._switch_to(known)
            return
        graph, algorithm, budget = self._given, session.algorithm, session.budget

        def done(result: ScheduleResult) -> None:
            self._results = {id(graph): result}
            session._set_busy(None)
            if session.graph is not None and self._given is graph:
                self._switch_to(result)

        def failed(message: str) -> None:
            session._set_busy(None)
            session.sigError.emit(message)
            session._request_plan()  # starting this task cancelled any plan on its way

        session._start(Task(f"Choosing the execution order of {graph.name}",
                            lambda token: choose_schedule(graph, algorithm, budget, token),
                            done, failed))

    def _switch_to(self, result: ScheduleResult) -> None:
        if result.schedule.fixed is not None:
            self.session.sigError.emit(result.schedule.fixed)
            self.sigChanged.emit()
            return
        self._push(result.scheduled, result.schedule.order, "serial", "Choose the best order")

    def _push(self, graph, schedule, conflicts, text: str) -> None:
        session = self.session
        old = (session.graph, session.schedule, session.conflicts)
        session.undo_stack.push(_SetSchedule(self, old, (graph, schedule, conflicts), text))
        session._forget_unreachable_plans()

    def _apply(self, graph, schedule, conflicts) -> None:
        session = self.session
        session.schedule, session.conflicts = schedule, conflicts
        if session.graph is not None and graph.buffers is not session.graph.buffers:
            # the given graph from before the In place switch, or back: the views rebuild
            session.show_graph(graph, session.order)
        session.graph = graph
        session.sigSettingsChanged.emit()
        self.sigChanged.emit()
        session._request_plan()

    def _graph_changed(self) -> None:
        # A new file: its graph as loaded is the given order's.
        if self.session.schedule is None:
            self._given = self.session.graph
            self._results = {}
        self.sigChanged.emit()
