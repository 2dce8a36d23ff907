"""What the slab bar and the inspector show while a newly opened graph is planned, and what the
planning worker prepares for them."""

from __future__ import annotations

import pytest

from slabscope.app.state.session import Session
from slabscope.app.views.panels.inspector import COLUMNS, Inspector
from slabscope.app.views.slab.slab_lanes import slab_lanes, slab_layout
from slabscope.app.views.slab.slab_view import SlabView
from tests.examples import RELU_UNFUSED
from tests.held_executor import HeldExecutor


@pytest.fixture
def held(qtbot):
    session = Session()
    executor = HeldExecutor()
    session.use_executor(executor)
    slab, inspector = SlabView(session), Inspector(session)
    qtbot.addWidget(slab)
    qtbot.addWidget(inspector)
    return session, executor, slab, inspector


def cells(inspector, name):
    c = COLUMNS.index(name)
    return [inspector.proxy.index(r, c).data() for r in range(inspector.proxy.rowCount())]


def test_a_new_graph_is_said_to_be_planned_until_its_plan_arrives(held):
    session, executor, slab, inspector = held
    session.open(RELU_UNFUSED)
    executor.run_next()  # the load; the first plan is now waiting
    assert session.graph is not None and session.plan is None
    assert "planning" in slab.summary.text() and "no graph open" not in slab.summary.text()
    assert "being planned" in inspector.summary.text()
    assert cells(inspector, "name") == ["x", "w", "b", "workspace", "t0", "t1", "y"]
    assert set(cells(inspector, "offset")) == {"-"}
    executor.run_next()
    assert session.plan is not None
    assert "1,196,288" in inspector.summary.text() and "lanes" in slab.summary.text()
    assert cells(inspector, "offset")[1] == "65,536"


def test_the_worker_lays_out_each_plan_for_the_slab_bar(held):
    session, executor, slab, _inspector = held
    session.open(RELU_UNFUSED)
    executor.run_next()
    executor.run_next()
    assert slab_layout in session.prepare_plans
    layout = slab_layout(session.graph, session.plan)
    assert layout.lanes.tolist() == slab_lanes(session.plan.placements)
    assert slab.layer.names == layout.order == [p.name for p in session.plan.placements]
    assert [session.graph.buffers[i].name for i in layout.rows] == layout.order
