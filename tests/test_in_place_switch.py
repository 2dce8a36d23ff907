"""The window's In place switch: an undoable edit that re-plans the open graph as the in-place
rule rewrites it; undo gives the graph as loaded and its plan back."""

from __future__ import annotations

from slabscope import planner
from slabscope.app.state.in_place_choice import InPlaceChoice
from slabscope.app.state.session import Session
from slabscope.planner.conflicts.in_place import in_place
from tests.examples import IN_PLACE_CHAIN


def test_the_switch_replans_the_rewrite_and_undo_restores_the_plain_plan():
    session = Session()
    loaded = planner.graph_from_dict(IN_PLACE_CHAIN)
    session.set_graph(loaded)
    choice = InPlaceChoice(session)
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


def test_the_window_has_a_checkable_plan_menu_action(qtbot):
    from slabscope.app.window import MainWindow
    from tests.qt_waits import settled

    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.session.set_graph(planner.graph_from_dict(IN_PLACE_CHAIN))
    settled(qtbot, window)
    action = window.in_place_action
    assert action.isCheckable() and not action.isChecked()
    action.trigger()
    settled(qtbot, window)
    assert window.in_place.on and action.isChecked()
    window.session.undo_stack.undo()
    settled(qtbot, window)
    assert not window.in_place.on and not action.isChecked()
