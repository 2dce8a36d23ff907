"""The session's lane of the window's executor: loads, plans and searches, one at a time.

A `TaskLane` of kind "plan" (see `app.qt.task_executor`): a new request cancels the one
running (its `CancelToken`, which the planner's long loops check) and replaces any request
still waiting, so the newest settings win and superseded work never starts. Results, progress
and search's best plan so far arrive on the GUI thread. It also compiles the planner's kernels
when nothing else is asked for (`warm_up`).
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from slabscope.app.qt.task_executor import TaskLane
from slabscope.app.state.tasks import Task
from slabscope.planner.support.cancel import CancelToken

KIND = "plan"


class PlanningController(TaskLane):
    """The "plan" lane: the session's executor (`submit`, `cancel`, `shutdown`, `warm_up`)."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(KIND, parent)

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) the planner's kernels on the worker once it is
        free, so that a later plan needing them (search) does not wait for a compiler. A request
        submitted while it runs waits for it (a compile cannot be interrupted)."""
        self.submit_when_idle(Task("Preparing the planner's kernels", warm_up_kernels,
                                   lambda result: None, lambda message: None))


def warm_up_kernels(token: CancelToken) -> None:
    """Run every placer once on a tiny serial trace, so numba's kernels are compiled or loaded."""
    from slabscope import planner

    try:
        from slabscope.planner.placement.search import warm_up
    except ImportError:
        warm_up = None
    if warm_up is not None:
        warm_up()
        return
    graph = planner.graph_from_dict({
        "nodes": ["a", "b", "c"], "edges": [["a", "b"], ["b", "c"]],
        "buffers": [{"name": "p", "bytes": 512, "uses": ["a", "b"]},
                    {"name": "q", "bytes": 256, "uses": ["b", "c"]},
                    {"name": "r", "bytes": 768, "uses": ["c"]}]})
    for algorithm in planner.ALGORITHMS:
        token.check()
        planner.plan(graph, algorithm=algorithm, conflicts="serial", budget=0.05)
