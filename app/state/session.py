"""The one session state every panel listens to: graph, request order, algorithm, plan, last run.

Plain Python, no Qt: views read this object, call its edit methods (which go through the undo
stack) and redraw on its psygnal signals (`connect`/`emit`, as Qt's). Loading, planning and the
lower bound are handed to an executor (`app.state.tasks`): by default they run at once, on the
caller's thread; the window installs a background one (`use_executor`), whose results arrive on
the GUI thread, so every slot below runs there.

While a plan is being made, `plan` is None, `busy` says what is running and `shown_plan` is
the plan that was on screen before, which views keep drawing, marked out of date
(`plan_stale`). Every plan made is kept by the settings it was made for, so undo and redo put
the exact earlier plan back at once instead of planning again (docs/semantics.md §7).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from psygnal import Signal

from slabscope import planner
from slabscope.planner.conflicts.in_place import in_place
from slabscope.planner.support.atomic_write import check_outputs, write_atomic
from slabscope.planner.support.cancel import Cancelled, CancelToken

from slabscope.app.state.heap import freeze_large
from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.state.in_place_choice import InPlaceChoice
from slabscope.app.state.selection import Selection
from slabscope.app.state.session_file import (SESSION_FORMAT, SESSION_VERSION, GraphOutsideSession,
                                              read_session)
from slabscope.app.state.tasks import Executor, ImmediateExecutor, Task
from slabscope.app.state.undo import UndoCommand, UndoStack
from slabscope.app.state.view_settings import ViewSettings

DEFAULT_BUDGET = 2.0
UNDO_LIMIT = 100  # each step may keep a plan of every buffer


@dataclass(frozen=True)
class PlanOutcome:
    """What planning one set of settings gave: a plan or the planner's one-line error, and the
    lower bound of the conflict model it used."""

    plan: planner.Plan | None
    error: str | None
    bound: object


# The file's request order by name, worked out with the graph (the buffer index on the way)
# where it loads, not on the GUI thread that shows it.
_file_order = IdentityCache(lambda graph: tuple(graph.buffer_names[i]
                                                for i in graph.request_order(None)), size=2)


def _prepare(graph: planner.Graph, preparers, token) -> None:
    """Run the views' graph preparers on a graph just loaded (in the worker), checking `token`."""
    token.check()
    graph.build_objects()
    graph.buffer_index  # the name index the views look buffers up by, built here once
    _file_order(graph)
    for prepare in preparers:
        prepare(graph)
        token.check()


class _SetSetting(UndoCommand):
    """Undoable change of one planning setting (order, algorithm, conflicts or capacity)."""

    def __init__(self, session: "Session", field: str, old, new, text: str):
        super().__init__(text)
        self.session, self.field, self.old, self.new = session, field, old, new
        self.keys = (session.settings_key(), session.settings_key(**{field: new}))

    def redo(self):
        self.session._apply(self.field, self.new)

    def undo(self):
        self.session._apply(self.field, self.old)


class Session:
    """Graph, request order, algorithm, conflict model, capacity, current plan and last run.

    Signals: `sigGraphChanged()` after a new graph is set (`plan` None, a plan on its way);
    `sigPlanChanged(old_plan, new_plan)` when a plan for the current settings arrives or fails
    (`old_plan` is the one shown before; `new_plan` None on failure, with `plan_error`);
    `sigSettingsChanged()` when order, algorithm, conflicts or capacity change;
    `sigBusyChanged(text | None)` when background work starts ("Planning ...") or ends;
    `sigOpened(path)` / `sigOpenFailed(path, message)` once a file asked for by `open` or
    `open_session` is in or has failed; `sigHoverNode(name|None)`, `sigHoverBuffer(name|None)`,
    `sigSelectionChanged(tuple)`; `sigRunChanged(report|None)`; `sigError(message)`;
    `sigDirtyChanged(bool)`; `sigProvisionalPlan(old_plan, new_plan)` while a search runs in the
    background, with its best plan so far (`provisional_plan`, never kept), and once more when
    that is withdrawn by a cancel or newer work (`new_plan` is then `shown_plan`).
    """

    sigGraphChanged = Signal()
    sigPlanChanged = Signal(object, object)
    sigSettingsChanged = Signal()
    sigBusyChanged = Signal(object)
    sigOpened = Signal(object)
    sigOpenFailed = Signal(object, str)
    # (session path, graph path as named, where it leads): a session names a graph outside its
    # folder; the window asks the user.
    sigSessionGraphOutside = Signal(object, str, object)
    sigHoverNode = Signal(object)
    sigHoverBuffer = Signal(object)
    sigSelectionChanged = Signal(object)
    sigRunChanged = Signal(object)
    sigError = Signal(str)
    sigDirtyChanged = Signal(bool)
    sigProvisionalPlan = Signal(object, object)

    def __init__(self):
        self.undo_stack = UndoStack(limit=UNDO_LIMIT)
        self.undo_stack.cleanChanged.connect(self._clean_changed)
        self.executor: Executor = ImmediateExecutor()  # where loads and plans run
        self._task: Task | None = None
        self.graph: planner.Graph | None = None
        self.path: Path | None = None
        self.order: tuple[str, ...] = ()
        self.algorithm = "first-fit"
        self.conflicts = "dag"
        self.capacity: int | None = None
        # The chosen execution order (node names), None for the given one; while one is chosen,
        # `graph` is the loaded graph with it as its schedule (app.state.schedule_choice).
        self.schedule: tuple[str, ...] | None = None
        self.budget = DEFAULT_BUDGET
        self.seed = 0                      # search's random seed
        self.view = ViewSettings()         # how the views show the plan (not part of the plan)
        self.compare_path: Path | None = None  # the run the Compare view sets against this one
        self.iterations: int | None = None  # the most steps search may take (None: the budget)
        self.plan: planner.Plan | None = None
        self.plan_error: str | None = None
        self.busy: str | None = None
        self.loading = False  # whether `busy` is a file being loaded (else a plan being made)
        self.busy_since: float | None = None
        self.last_run = None
        # Hover and selection live in one model every panel shares; its signals are the session's.
        self.selection_model = Selection()
        self.import_notes: tuple[str, ...] = ()  # what loading the open file had to assume
        self.selection_model.sigHoverNode.connect(self.sigHoverNode.emit)
        self.selection_model.sigHoverBuffer.connect(self.sigHoverBuffer.emit)
        self.selection_model.sigSelectionChanged.connect(self.sigSelectionChanged.emit)
        self._previous_plan: planner.Plan | None = None  # on screen while `plan` is made
        self.provisional_plan: planner.Plan | None = None  # search's best so far, while it runs
        self._plans: dict[tuple, PlanOutcome] = {}  # settings key -> outcome, this graph's
        self._bounds: dict = {}  # (conflict model name, schedule) -> lower bound, this graph's
        # Functions of (graph, plan) and of a graph that views cache per object; the worker runs
        # them on each plan it makes and each graph it loads, so that showing it does not compute
        # them on the GUI thread.
        self.prepare_plans: list[Callable[[planner.Graph, planner.Plan], object]] = []
        self.prepare_graphs: list[Callable[[planner.Graph], object]] = []
        # The Plan menu's In place switch: whether `graph` is the loaded one's in-place rewrite.
        self.in_place = InPlaceChoice(self)
        self.swapping = False  # while `sigGraphChanged` tells of `show_graph`, not a new file

    def _clean_changed(self, clean: bool) -> None:
        self.sigDirtyChanged.emit(not clean)

    def use_executor(self, executor: Executor | None) -> None:
        """Run loading and planning on `executor` from now on (None: at once, on this thread)."""
        self.cancel()
        self.executor = executor if executor is not None else ImmediateExecutor()

    # --- what is shown -------------------------------------------------------------------

    @property
    def shown_plan(self) -> planner.Plan | None:
        """The plan views draw: `plan`, or while it is being made search's best so far or
        else the one shown before it."""
        if self.plan is not None:
            return self.plan
        return self.provisional_plan if self.provisional_plan is not None else self._previous_plan

    @property
    def plan_stale(self) -> bool:
        """Whether `shown_plan` is an earlier settings' plan (the current one is being made or
        was cancelled)."""
        return self.plan is None and self.provisional_plan is None and self._previous_plan is not None

    @property
    def plan_provisional(self) -> bool:
        """Whether `shown_plan` is search's best so far, the search still running."""
        return self.plan is None and self.provisional_plan is not None

    def lower_bound(self):
        """The lower bound for the graph under the current conflict model; None without a graph
        or while it is still being computed (it always is known once `plan` is set)."""
        return self._bounds.get((self.conflicts, self.schedule))

    # --- loading -------------------------------------------------------------------------

    def open(self, path) -> bool:
        """Load the graph at `path` (in the background when an executor is installed).

        Ends with `sigOpened(path)` and a new graph, or with `sigOpenFailed(path, message)` and
        `sigError` while the current graph stays. False when it has already failed.
        """
        path = Path(path)
        preparers = tuple(self.prepare_graphs)

        def work(token):
            # What the importer had to assume (unknown dimensions, ...) goes to the window.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                graph = planner.load(path, cancel=token)
            _prepare(graph, preparers, token)
            return graph, planner.default_conflicts(graph), tuple(str(w.message) for w in caught)

        def done(result):
            graph, conflicts, notes = result
            self.set_graph(graph, path, conflicts=conflicts)
            self.import_notes = notes
            self.sigOpened.emit(path)

        return self._load(f"Loading {path.name}", path, work, done)

    def open_session(self, path, allow_outside: bool = False) -> bool:
        """Load a session file like `open` (in the background when an executor is installed).

        A session naming a graph outside its own folder ends with
        `sigSessionGraphOutside(path, stored, graph_path)` and nothing read, unless `allow_outside`
        (the user agreed to that path).
        """
        path = Path(path)
        preparers = tuple(self.prepare_graphs)

        def work(token):
            try:
                result = read_session(path, allow_outside=allow_outside, cancel=token)
            except GraphOutsideSession as refused:
                return refused
            _prepare(result[0], preparers, token)
            if result[2]["in_place"]:  # saved switched on: rewritten here, off the GUI thread
                shared = in_place(result[0])
                _prepare(shared.graph, preparers, token)
                result[2]["in_place"] = shared
            return result

        def done(result):
            if isinstance(result, GraphOutsideSession):
                self._set_busy(None)
                if self.graph is not None and self.plan is None and self.plan_error is None:
                    self._request_plan()  # the load had cancelled the current graph's plan
                self.sigSessionGraphOutside.emit(path, result.stored, result.graph_path)
                return
            self.show_session(*result)
            self.sigOpened.emit(path)

        return self._load(f"Loading {path.name}", path, work, done)

    def _load(self, label: str, path: Path, work, done) -> bool:
        failures: list[str] = []

        def failed(message: str):
            failures.append(message)
            self._set_busy(None)
            self.sigError.emit(message)
            self.sigOpenFailed.emit(path, message)
            if self.graph is not None and self.plan is None and self.plan_error is None:
                self._request_plan()  # the load had cancelled the current graph's plan

        self._start(Task(label, work, done, failed), loading=True)
        return not failures

    def set_graph(self, graph: planner.Graph, path: Path | None = None,
                  order=None, algorithm: str | None = None, conflicts: str | None = None,
                  capacity: int | None = None, view: ViewSettings | None = None) -> None:
        """Replace the graph (clears undo history, the plan and the last run) and plan it.

        `view` (a session file's) replaces the view settings; without it the graph opens with
        the current ones, its slab bar fitted and in the mode that suits its size.

        Listeners of `sigGraphChanged` see `plan` None; `sigPlanChanged(None, new)` follows, at
        once or when the background plan arrives.
        """
        order = _file_order(graph) if order is None else \
            tuple(graph.buffers[i].name for i in graph.request_order(order))
        # Listeners of the cleared hover and selection still see the graph they belong to.
        self.selection_model.clear()
        self.graph, self.path, self.order = graph, path, order
        self.algorithm = algorithm or self.algorithm
        self.conflicts = conflicts or planner.default_conflicts(graph)
        self.capacity = capacity
        self.schedule = None
        self.last_run = None
        # The old graph's plans must not reach views that already see the new graph.
        self.plan, self.plan_error, self._previous_plan = None, None, None
        self.provisional_plan = None
        self._plans, self._bounds = {}, {}
        self.import_notes = ()
        if view is not None:
            self.view = view
        else:  # each graph opens its slab bar whole, in the mode that suits its size
            self.view.slab, self.view.zoom, self.view.follow_lanes = None, None, True
        self.undo_stack.clear()
        self.sigGraphChanged.emit()
        self.sigRunChanged.emit(None)
        freeze_large(graph)  # the views have built what they keep of it
        self._request_plan()

    def show_session(self, graph: planner.Graph, graph_path: Path, settings: dict) -> None:
        """Show a session file's graph with the settings `read_session` read, its `in_place`
        already the rewrite (`in_place(graph)`, made off the GUI thread) or False: the
        comparison, the plan settings, then the In place switch."""
        settings = dict(settings)
        self.compare_path = settings.pop("compare", None)  # a session restores its comparison
        shared = settings.pop("in_place", False)
        self.set_graph(graph, graph_path, **settings)
        if shared:
            self.in_place.restore(shared)

    def show_graph(self, graph: planner.Graph, order) -> None:
        """Show another form of the open graph with other buffers (its in-place rewrite, or the
        graph as loaded back), keeping `order` where its names are the graph's. Views hear
        `sigGraphChanged` with `swapping` True (the same file, so settings and undo stay); the
        kept plans and bounds, made for the other graph, go. The caller asks for the plan."""
        graph.build_objects()
        index = graph.buffer_index  # the name index the views look buffers up by
        kept = [n for n in order if n in index]
        self.graph, self.order = graph, tuple(graph.buffers[i].name
                                              for i in graph.request_order(kept))
        self.plan, self.plan_error, self._previous_plan = None, None, None
        self.provisional_plan = None
        self._plans, self._bounds = {}, {}
        self.selection_model.clear()
        self.swapping = True
        try:
            self.sigGraphChanged.emit()
        finally:
            self.swapping = False

    # --- session files (graph, order, algorithm, conflicts, capacity, view, compare, in place)

    def save_session(self, path) -> None:
        """Write the session as JSON to `path` and mark the undo stack clean; the file it
        replaces is kept as `path~`, and the graph file itself is never written over.

        The graph is stored as a path relative to the session file's folder.
        """
        if self.graph is None or self.path is None:
            raise planner.PlanError("nothing to save: open a graph file first")
        path = Path(path)
        # Relative to the session's folder, as a session must name it; a graph elsewhere gets
        # a `..` path, which opening asks about.
        stored = Path(os.path.relpath(self.path.resolve(), path.resolve().parent)).as_posix()
        data = {"format": SESSION_FORMAT, "version": SESSION_VERSION, "graph": stored,
                "order": list(self.order), "algorithm": self.algorithm,
                "conflicts": self.conflicts, "capacity": self.capacity,
                "view": self.view.to_json(), "in_place": self.in_place.on}
        if self.compare_path is not None:
            data["compare"] = Path(os.path.relpath(self.compare_path.resolve(),
                                                   path.resolve().parent)).as_posix()
        check_outputs([self.path], [("session", path)])  # never over the graph it names
        write_atomic(path, json.dumps(data, indent=2) + "\n", "session", backup=True)
        self.undo_stack.setClean()

    # --- undoable edits ------------------------------------------------------------------

    def set_order(self, names) -> None:
        """Change the request order (undoable); re-plans. Unlisted buffers follow the file's order."""
        if self.graph is not None:
            names = tuple(names)
            full = self.graph.request_order(names)
            # Every buffer listed (a drag, a sort): the order is the names as given, checked.
            order = names if len(names) == len(full) else \
                tuple(self.graph.buffers[i].name for i in full)
            self._edit("order", order, "Reorder requests")

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
        self._forget_unreachable_plans()

    def _apply(self, field: str, value) -> None:
        setattr(self, field, value)
        self.sigSettingsChanged.emit()
        self._request_plan()

    # --- planning ------------------------------------------------------------------------

    def settings_key(self, **changed) -> tuple:
        """The settings a plan depends on, as a dictionary key (`changed` overrides some)."""
        values = {"order": self.order, "algorithm": self.algorithm, "conflicts": self.conflicts,
                  "capacity": self.capacity, "budget": self.budget, "seed": self.seed,
                  "iterations": self.iterations, "schedule": self.schedule, **changed}
        # Only search spends the budget and takes a seed and a step limit; the other placers'
        # plans do not depend on them.
        search = values["algorithm"] == "search"
        return (values["order"], values["algorithm"], values["conflicts"], values["capacity"],
                *((values["budget"], values["seed"], values["iterations"]) if search
                  else (None, None, None)), values["schedule"])

    def _request_plan(self) -> None:
        """Show the kept plan for the current settings at once, or start making it."""
        key = self.settings_key()
        kept = self._plans.get(key)
        if kept is not None:
            self.cancel()
            self._show(kept)
            return
        if self.plan is not None:
            self._previous_plan = self.plan
        self.plan, self.plan_error = None, None
        graph, bound = self.graph, self._bounds.get((self.conflicts, self.schedule))
        schedule = self.schedule
        preparers = tuple(self.prepare_plans)
        algorithm, order, capacity, conflicts, budget = (self.algorithm, self.order,
                                                         self.capacity, self.conflicts, self.budget)
        seed, iterations = self.seed, self.iterations

        def work(token) -> PlanOutcome:
            known = bound if bound is not None else planner.lower_bound(graph, conflicts,
                                                                         cancel=token)
            try:
                made = planner.plan(graph, algorithm=algorithm, order=order, capacity=capacity,
                                    conflicts=conflicts, budget=budget, seed=seed,
                                    iterations=iterations, cancel=token)
                made.by_name  # every view looks placements up by name: index them here
                for prepare in preparers:
                    token.check()
                    prepare(graph, made)
            except Cancelled:
                raise
            except planner.PlanError as exc:
                return PlanOutcome(None, str(exc), known)
            return PlanOutcome(made, None, known)

        def done(outcome: PlanOutcome) -> None:
            self._plans[key] = outcome
            self._show(outcome)

        def failed(message: str) -> None:
            self._show(PlanOutcome(None, message, self._bounds.get((conflicts, schedule))))

        token = CancelToken()

        def prepare_partial(made: planner.Plan) -> planner.Plan:
            made.by_name
            for prepare in preparers:
                token.check()
                prepare(graph, made)
            return made

        what = f"{algorithm}, {conflicts} conflicts" + (
            f", up to {budget:g} s" if algorithm == "search" else "")
        # Search offers its best plan so far; the other placers have nothing to show before the end.
        partial = dict(partial=self._show_provisional, prepare_partial=prepare_partial) \
            if algorithm == "search" else {}
        self._start(Task(f"Planning {graph.name} ({what})", work, done, failed, token, **partial))

    def _show_provisional(self, plan: planner.Plan) -> None:
        """Show search's best plan so far while it continues (the final plan replaces it)."""
        old = self.shown_plan
        self.provisional_plan = plan
        self.sigProvisionalPlan.emit(old, plan)

    def _withdraw_provisional(self) -> None:
        """Take search's best so far off the screen: its search was cancelled or superseded."""
        if self.provisional_plan is not None:
            old, self.provisional_plan = self.provisional_plan, None
            self.sigProvisionalPlan.emit(old, self.shown_plan)

    def _show(self, outcome: PlanOutcome) -> None:
        """Make `outcome` the current plan and tell the views."""
        old = self.shown_plan
        self.plan, self.plan_error = outcome.plan, outcome.error
        self._previous_plan, self.provisional_plan = None, None
        if outcome.bound is not None:
            self._bounds[(self.conflicts, self.schedule)] = outcome.bound
        self._set_busy(None)
        self.sigPlanChanged.emit(old, self.plan)
        freeze_large(self.graph)  # the plan and what the views made of it
        if outcome.error is not None:
            self.sigError.emit(outcome.error)

    def _forget_unreachable_plans(self) -> None:
        """Keep only plans that undo or redo can still reach (the history drops undone steps)."""
        stack = self.undo_stack
        reachable = {self.settings_key()}
        for i in range(stack.count()):
            reachable.update(stack.command(i).keys)
        self._plans = {k: v for k, v in self._plans.items() if k in reachable}

    # --- background work -----------------------------------------------------------------

    def _start(self, task: Task, loading: bool = False) -> None:
        """Hand `task` to the executor (cancelling what runs) and announce it."""
        self._task, self.loading = task, loading
        self._withdraw_provisional()
        self._set_busy(task.label)
        self.executor.submit(task)

    def cancel(self) -> None:
        """Stop the running load or plan; the plan shown before stays, marked out of date."""
        if self._task is not None and self.busy is not None:
            self._task.token.cancel()
            self.executor.cancel()
            self._withdraw_provisional()
            self._set_busy(None)

    def _set_busy(self, label: str | None) -> None:
        if label != self.busy:
            self.busy = label
            self.busy_since = None if label is None else time.monotonic()
            self.sigBusyChanged.emit(label)

    # --- transient highlight state (not undoable) ----------------------------------------

    @property
    def hovered_node(self) -> str | None:
        """The node under the pointer (`selection_model`'s)."""
        return self.selection_model.hovered_node

    @property
    def hovered_buffer(self) -> str | None:
        """The buffer under the pointer (`selection_model`'s)."""
        return self.selection_model.hovered_buffer

    @property
    def selection(self) -> tuple[str, ...]:
        """The selected buffers (`selection_model`'s; the inspector compares the first two)."""
        return self.selection_model.buffers

    def hover_node(self, name: str | None) -> None:
        """Announce the node under the pointer (None when it leaves)."""
        self.selection_model.hover_node(name)

    def hover_buffer(self, name: str | None) -> None:
        """Announce the buffer under the pointer (None when it leaves)."""
        self.selection_model.hover_buffer(name)

    def select_buffers(self, names) -> None:
        """Set the selected buffers."""
        self.selection_model.select_buffers(names)

    def click_buffer(self, name: str | None, toggle: bool = False) -> None:
        """A click on buffer `name` in a plot: one buffer chosen is revealed in every panel;
        with `toggle`, or on nothing, the selection changes as `pick_buffer` says."""
        if name is not None and not toggle:
            self.selection_model.reveal("buffer", name)
        else:
            self.pick_buffer(name, toggle=toggle)

    def pick_buffer(self, name: str | None, toggle: bool = False) -> None:
        """A click on buffer `name` (None: on nothing): select it alone, or with `toggle` add it
        to the selection or take it out."""
        self.selection_model.pick_buffer(name, toggle)

    def set_last_run(self, report) -> None:
        """Store the latest run report from `gpu` (None clears it)."""
        self.last_run = report
        self.sigRunChanged.emit(report)
