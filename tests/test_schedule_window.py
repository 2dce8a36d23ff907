"""The window's schedule controls: Plan > Schedule runs in the background, the status bar shows
three slabs, the lifetime map and DAG follow the chosen order, and undo puts the given one back."""

from __future__ import annotations

import json

import pytest

from slabscope.app.state.session import Session
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.window import MainWindow
from bench.branchy import branchy_graph_data


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "branchy.json"
    path.write_text(json.dumps(branchy_graph_data(40, seed=3)))
    win = MainWindow(Session())
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "confirm_discard", lambda: True)
    win.show()
    win.open_path(path)
    qtbot.waitUntil(lambda: win.session.plan is not None and win.session.busy is None,
                    timeout=20000)
    return win


def test_choosing_the_best_order_is_background_work_undone_like_a_reorder(qtbot, window):
    session, controls = window.session, window.schedule_controls
    session.budget = 0.3
    given = session.graph
    controls.actions["best"].trigger()
    assert session.busy and session.busy.startswith("Choosing the execution order")
    qtbot.waitUntil(lambda: session.schedule is not None and session.busy is None
                    and session.plan is not None, timeout=20000)
    result = controls.choice.result
    assert session.conflicts == "serial" and session.graph.schedule == result.schedule.order
    assert session.plan.slab_bytes == result.best_slab
    text = controls.label.text()  # the two live peaks; the tooltip adds the three slabs
    chosen = result.schedule
    assert text == (f"live peak: given order {format_bytes(chosen.given_peak_bytes)} · best order "
                    f"{format_bytes(chosen.peak_bytes)}")
    session.sort_by_size()  # a reorder changes the plan, never the order's live peaks
    qtbot.waitUntil(lambda: session.plan is not None and session.busy is None, timeout=20000)
    assert controls.label.text() == text
    session.undo_stack.undo()
    qtbot.waitUntil(lambda: session.plan is not None and session.busy is None, timeout=20000)
    tip = controls.label.toolTip()
    assert "DAG-safe" in tip and "serial, given order" in tip and "serial, best order" in tip
    assert controls.actions["best"].isChecked()
    controls.number_action.setChecked(True)
    first = session.graph.node_index[result.schedule.order[0]]
    assert window.dag_view._items[first].label.startswith("0: ")
    assert session.undo_stack.undoText() == "Choose the best order"
    session.undo_stack.undo()
    qtbot.waitUntil(lambda: session.plan is not None and session.busy is None, timeout=20000)
    assert session.graph is given and session.schedule is None and session.conflicts == "dag"
    assert controls.actions["given"].isChecked()
    session.undo_stack.redo()  # the order is kept: no second search
    assert session.busy is None or not session.busy.startswith("Choosing")
    assert session.schedule == result.schedule.order
    controls.actions["given"].trigger()  # the given order, still serial: before and after
    qtbot.waitUntil(lambda: session.plan is not None and session.busy is None, timeout=20000)
    assert session.graph is given and session.conflicts == "serial"
    assert session.plan.slab_bytes == result.given_slab


def test_choosing_can_be_cancelled(qtbot, window):
    session = window.session
    session.budget = 30
    window.schedule_controls.actions["best"].trigger()
    session.cancel()
    qtbot.wait(300)
    assert session.schedule is None and session.busy is None


def test_a_chain_keeps_its_order_and_the_window_says_so(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "chain.csv"
    path.write_text("id,lower,upper,size\na,0,2,10\nb,1,3,20\nc,2,4,5\n")
    win = MainWindow(Session())
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "confirm_discard", lambda: True)
    win.show()
    win.open_path(path)
    qtbot.waitUntil(lambda: win.session.plan is not None and win.session.busy is None,
                    timeout=20000)
    errors = []
    win.session.sigError.connect(errors.append)
    win.schedule_controls.actions["best"].trigger()
    qtbot.waitUntil(lambda: win.schedule_controls.choice.result is not None, timeout=20000)
    assert win.session.schedule is None and win.schedule_controls.actions["given"].isChecked()
    assert "only one" in win.schedule_controls.label.text()
    assert errors and "cannot change" in errors[-1]
