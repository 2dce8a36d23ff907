"""The window's In place switch: an undoable edit that re-plans the open graph as the in-place
rule rewrites it; undo gives the graph as loaded and its plan back. Whether it is on is read off
the graph shown (so any edit that puts back a graph from before the switch turns it off), and a
session file keeps it."""

from __future__ import annotations

import json

from slabscope import planner
from slabscope.app.state.schedule_choice import ScheduleChoice
from slabscope.app.state.session import Session
from slabscope.planner.conflicts.in_place import in_place
from tests.examples import IN_PLACE_CHAIN

# IN_PLACE_CHAIN beside a second branch, so there is an order to choose: mm and relu, or b first.
BRANCHES = {"nodes": [*IN_PLACE_CHAIN["nodes"][:2],
                      {"name": "b", "op": "mm", "inputs": ["w"], "outputs": ["z"]},
                      {"name": "sum", "op": "sum", "inputs": ["y", "z"], "outputs": ["s"]}],
            "buffers": [*IN_PLACE_CHAIN["buffers"], {"name": "z", "bytes": 2048}],
            "schedule": ["b", "mm", "relu", "sum"]}


def test_the_switch_replans_the_rewrite_and_undo_restores_the_plain_plan():
    session = Session()
    loaded = planner.graph_from_dict(IN_PLACE_CHAIN)
    session.set_graph(loaded)
    choice = session.in_place
    plain = session.plan.slab_bytes
    choice.set(True)
    assert choice.on and choice.merged == 1 and session.graph.name.endswith("(in place)")
    expected = planner.plan(in_place(loaded).graph, conflicts=session.conflicts).slab_bytes
    assert session.plan.slab_bytes == expected < plain
    assert "y" not in session.order and session.undo_stack.undoText() == "In place"
    session.undo_stack.undo()
    assert not choice.on and session.graph is loaded and session.plan.slab_bytes == plain
    session.undo_stack.redo()
    assert choice.on and session.plan.slab_bytes == expected
    session.set_graph(loaded)  # a new file opens as loaded
    assert not choice.on


def test_a_graph_the_rule_merges_nothing_in_stays_as_it_is():
    session = Session()
    session.set_graph(planner.graph_from_dict({**IN_PLACE_CHAIN, "nodes": [
        {**n, "attrs": {}} for n in IN_PLACE_CHAIN["nodes"]]}))
    errors = []
    session.sigError.connect(errors.append)
    session.in_place.set(True)
    assert not session.in_place.on and session.undo_stack.count() == 0 and errors


def test_the_switch_follows_the_graph_when_the_given_order_puts_the_plain_one_back():
    session = Session()
    schedule = ScheduleChoice(session)
    loaded = planner.graph_from_dict(BRANCHES)
    session.set_graph(loaded)
    schedule.choose("best")
    best = schedule.result.schedule.order
    assert schedule.current == "best" and best != loaded.schedule
    session.in_place.set(True)
    assert session.in_place.on and session.graph.schedule == best
    schedule.choose("given")  # the graph as loaded, from before the switch
    assert session.graph is loaded and not session.in_place.on
    session.undo_stack.undo()
    assert session.in_place.on and session.graph.name.endswith("(in place)")
    session.undo_stack.undo()
    assert not session.in_place.on and session.graph.schedule == best
    session.undo_stack.redo()
    session.in_place.set(False)  # back to the plain graph in the order chosen
    assert not session.in_place.on and session.graph.schedule == best


def test_the_window_has_a_checkable_plan_menu_action_that_follows_the_graph(qtbot):
    from slabscope.app.window import MainWindow
    from tests.qt_waits import settled

    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.session.set_graph(planner.graph_from_dict(BRANCHES))
    settled(qtbot, window)
    action = window.in_place_action
    assert action.isCheckable() and not action.isChecked()
    action.trigger()
    settled(qtbot, window)
    assert window.in_place.on and action.isChecked()
    window.session.undo_stack.undo()
    settled(qtbot, window)
    assert not window.in_place.on and not action.isChecked()
    choice = window.schedule_controls.choice
    choice.choose("best")
    settled(qtbot, window)
    action.trigger()  # in place over the best order
    settled(qtbot, window)
    assert action.isChecked()
    choice.choose("given")  # the graph as loaded (before the switch), in its given order
    settled(qtbot, window)
    assert not window.in_place.on and not action.isChecked()
    window.session.undo_stack.undo()
    settled(qtbot, window)
    assert window.in_place.on and action.isChecked()
    window.session.undo_stack.setClean()  # closing the window at teardown must not ask


def test_a_session_file_keeps_the_switch(tmp_path):
    graph_file = tmp_path / "branches.json"
    graph_file.write_text(json.dumps(BRANCHES))
    session = Session()
    session.set_graph(planner.load(graph_file), graph_file)
    session.in_place.set(True)
    saved = session.plan.slab_bytes
    session.save_session(tmp_path / "on.slabscope")
    data = json.loads((tmp_path / "on.slabscope").read_text())
    assert data["in_place"] is True

    opened = Session()
    assert opened.open_session(tmp_path / "on.slabscope")
    assert opened.in_place.on and opened.in_place.merged == 1
    assert opened.plan.slab_bytes == saved and opened.order == session.order
    assert opened.undo_stack.count() == 0  # opens clean: undo goes to no plainer graph
    opened.in_place.set(False)
    assert "y" in opened.order

    del data["in_place"]  # a file from before the switch was saved
    (tmp_path / "old.slabscope").write_text(json.dumps(data))
    assert opened.open_session(tmp_path / "old.slabscope")
    assert not opened.in_place.on and "y" in opened.order


def test_the_window_opens_a_session_saved_with_the_switch_on_checked(qtbot, monkeypatch, tmp_path):
    from tests.qt_waits import planned_window

    graph_file = tmp_path / "branches.json"
    graph_file.write_text(json.dumps(BRANCHES))
    session = Session()
    session.set_graph(planner.load(graph_file), graph_file)
    session.in_place.set(True)
    session.save_session(tmp_path / "on.slabscope")
    window = planned_window(qtbot, monkeypatch, tmp_path, tmp_path / "on.slabscope")
    assert window.in_place_action.isChecked() and window.session.plan.slab_bytes == \
        session.plan.slab_bytes
