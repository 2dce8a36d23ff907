"""The session as plain Python: no Qt, plans kept by their settings, work handed to an executor."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.state.session_file import SESSION_FORMAT
from slabscope.app.state.tasks import Task, deliver, run_task
from slabscope.app.state.undo import UndoCommand, UndoStack
from tests.examples import DIAMOND, RELU_UNFUSED


class ManualExecutor:
    """Holds tasks until the test runs them, as a background worker would, newest first wins."""

    def __init__(self):
        self.tasks: list[Task] = []

    def submit(self, task: Task) -> None:
        for earlier in self.tasks:
            earlier.token.cancel()
        self.tasks.append(task)

    def cancel(self) -> None:
        for task in self.tasks:
            task.token.cancel()

    def run(self, task: Task) -> None:
        deliver(task, run_task(task))


def offsets(plan) -> dict[str, int]:
    return {p.name: p.offset for p in plan.placements}


def test_the_session_is_built_and_edited_without_qt():
    script = textwrap.dedent(f"""
        import sys
        from slabscope.app.state.session import Session
        session = Session()
        assert session.open({str(RELU_UNFUSED)!r})
        first = session.plan
        session.set_order(["t1", "y"])
        session.set_algorithm("best-fit")
        session.undo_stack.undo()
        session.undo_stack.undo()
        assert session.plan is first
        assert not [m for m in sys.modules if m.startswith(("PySide6", "shiboken6"))]
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_undo_and_redo_restore_the_exact_plans_without_planning(monkeypatch):
    session = Session()
    session.open(RELU_UNFUSED)
    first = session.plan
    session.set_algorithm("search")
    searched = session.plan
    session.set_order(["t1", "y"])
    reordered = session.plan
    calls = []
    real_plan = planner.plan
    monkeypatch.setattr(planner, "plan", lambda *a, **k: calls.append(a) or real_plan(*a, **k))
    session.undo_stack.undo()
    assert session.plan is searched
    session.undo_stack.undo()
    assert session.plan is first
    assert offsets(session.plan) == offsets(first)
    session.undo_stack.redo()
    session.undo_stack.redo()
    assert session.plan is reordered
    assert calls == []


def test_while_planning_the_earlier_plan_stays_shown_and_out_of_date():
    session = Session()
    session.open(RELU_UNFUSED)
    first = session.plan
    executor = ManualExecutor()
    session.use_executor(executor)
    busy, plans = [], []
    session.sigBusyChanged.connect(busy.append)
    session.sigPlanChanged.connect(lambda old, new: plans.append((old, new)))

    session.set_order(["t1", "y"])
    assert session.plan is None and session.shown_plan is first and session.plan_stale
    assert busy[-1].startswith("Planning relu_unfused")
    assert session.lower_bound() is not None  # the graph's bound is kept across settings
    assert plans == []  # views keep drawing the earlier plan
    executor.run(executor.tasks[-1])
    assert session.plan is not None and not session.plan_stale and session.busy is None
    assert plans == [(first, session.plan)]
    assert busy[-1] is None


def test_the_newest_settings_win():
    session = Session()
    session.open(RELU_UNFUSED)
    executor = ManualExecutor()
    session.use_executor(executor)
    session.set_order(["t1", "y"])
    session.set_algorithm("best-fit")
    older, newer = executor.tasks
    assert older.token.cancelled and not newer.token.cancelled
    executor.run(older)  # a result that arrives after all is dropped
    assert session.plan is None and session.busy is not None
    executor.run(newer)
    assert session.plan.algorithm == "best-fit"
    assert session.plan.order[:2] == ("t1", "y")


def test_cancel_keeps_the_earlier_plan_marked_out_of_date():
    session = Session()
    session.open(RELU_UNFUSED)
    first = session.plan
    executor = ManualExecutor()
    session.use_executor(executor)
    session.set_algorithm("largest-first")
    session.cancel()
    assert executor.tasks[-1].token.cancelled
    assert session.busy is None and session.plan is None
    assert session.shown_plan is first and session.plan_stale
    session.undo_stack.undo()  # back to settings whose plan is kept
    assert session.plan is first and not session.plan_stale


def test_a_failed_load_keeps_the_graph_and_its_plan_on_its_way(tmp_path):
    session = Session()
    session.open(RELU_UNFUSED)
    executor = ManualExecutor()
    session.use_executor(executor)
    failures = []
    session.sigOpenFailed.connect(lambda path, message: failures.append((path.name, message)))
    session.set_algorithm("best-fit")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert session.open(broken)  # under way
    plan_task, load_task = executor.tasks
    assert plan_task.token.cancelled and session.loading
    executor.run(load_task)
    assert failures and failures[0][0] == "broken.json"
    assert session.graph.name == "relu_unfused"
    executor.run(executor.tasks[-1])  # the cancelled plan was asked for again
    assert session.plan.algorithm == "best-fit"


def test_a_new_graph_starts_with_no_plan_and_an_empty_history():
    session = Session()
    session.open(RELU_UNFUSED)
    session.set_order(["y"])
    executor = ManualExecutor()
    session.use_executor(executor)
    session.open(DIAMOND)
    executor.run(executor.tasks[-1])  # the load
    assert session.graph.name == "diamond" and session.plan is None and not session.plan_stale
    assert session.undo_stack.count() == 0 and session.undo_stack.isClean()
    executor.run(executor.tasks[-1])  # its plan
    assert offsets(session.plan) == {"p": 0, "q": 4096, "r": 0}


def test_plans_undo_can_no_longer_reach_are_forgotten():
    session = Session()
    session.open(RELU_UNFUSED)
    session.set_algorithm("best-fit")
    session.undo_stack.undo()
    session.set_algorithm("largest-first")  # drops the best-fit step from the history
    kept = {key[1] for key in session._plans}
    assert kept == {"first-fit", "largest-first"}


class _Append(UndoCommand):
    def __init__(self, items: list, value):
        super().__init__(f"append {value}")
        self.items, self.value = items, value

    def redo(self):
        self.items.append(self.value)

    def undo(self):
        self.items.pop()


def test_the_undo_stack_announces_what_changed_and_keeps_its_limit():
    items, seen = [], []
    stack = UndoStack(limit=2)
    stack.cleanChanged.connect(lambda clean: seen.append(("clean", clean)))
    stack.canUndoChanged.connect(lambda can: seen.append(("undo", can)))
    stack.undoTextChanged.connect(lambda text: seen.append(("text", text)))
    stack.push(_Append(items, 1))
    assert seen == [("clean", False), ("undo", True), ("text", "append 1")]
    stack.undo()
    assert stack.isClean() and items == [] and stack.redoText() == "append 1"
    for value in (2, 3, 4):
        stack.push(_Append(items, value))
    assert items == [2, 3, 4] and stack.count() == 2
    stack.undo()
    stack.undo()
    assert not stack.canUndo() and items == [2]
    assert not stack.isClean()  # the clean state fell off the limited history


def test_a_task_that_raises_reports_one_line():
    failures = []
    task = Task("boom", lambda token: 1 / 0, lambda result: None, failures.append)
    deliver(task, run_task(task))
    assert failures == ["division by zero"]


def test_a_graph_opens_under_its_own_conflict_model(tmp_path):
    step = Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json"
    trace = tmp_path / "trace.csv"
    trace.write_text("id,lower,upper,size\na,0,2,64\nb,1,3,64\n")
    session = Session()
    for path, model in ((step, "serial"), (DIAMOND, "dag"), (trace, "serial")):
        assert session.open(path)
        assert session.conflicts == session.plan.conflict_model == model, path
    # A session file that names no model opens its graph under the graph's own; one that names
    # one keeps it.
    shutil.copy(step, tmp_path / "step.json")
    for stored, model in (({}, "serial"), ({"conflicts": "dag"}, "dag")):
        saved = tmp_path / "s.slabscope"
        saved.write_text(json.dumps({"format": SESSION_FORMAT, "version": 1,
                                     "graph": "step.json", **stored}))
        assert session.open_session(saved)
        assert session.conflicts == session.plan.conflict_model == model, stored
