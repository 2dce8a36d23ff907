"""Words that match the state: a map being planned says so, the Planning badge leaves the
inspector's first line readable, and a snapshot's timeline does not point at a disabled Run."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.common.busy_overlay import BusyOverlay  # noqa: E402
from slabscope.app.views.lifetimes.lifetime_view import LifetimeView  # noqa: E402
from slabscope.app.views.panels.inspector import Inspector  # noqa: E402
from slabscope.app.views.timeline.timeline_view import EMPTY_TEXT  # noqa: E402
from slabscope.app.window import MainWindow  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402
from tests.held_executor import HeldExecutor  # noqa: E402
from tests.snapshot_builder import TINY_SNAPSHOT  # noqa: E402


def test_a_map_whose_graph_is_being_planned_says_so(qtbot):
    session = Session()
    session.use_executor(HeldExecutor())
    view = LifetimeView(session)
    qtbot.addWidget(view)
    assert view.summary.text() == "no graph open"
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    assert session.plan is None
    assert view.summary.text() == "planning relu_unfused…"


def test_the_planning_badge_leaves_the_inspectors_first_line_readable(qtbot):
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    inspector = Inspector(session)
    qtbot.addWidget(inspector)
    inspector.resize(500, 500)
    inspector.show()
    qtbot.waitExposed(inspector)
    overlay = BusyOverlay(inspector)
    overlay.set_text("Planning…")
    summary = inspector.summary.geometry()
    assert not overlay.badge_rect().intersects(summary.toRectF())


def test_a_snapshots_timeline_does_not_point_at_a_disabled_run(qtbot):
    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.session.set_graph(planner.load(TINY_SNAPSHOT), TINY_SNAPSHOT)
    assert not window.run_action.isEnabled()
    text = window.timeline_view.empty.text()
    assert "Run ▸ Run" not in text and "snapshot" in text
    window.session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    assert window.run_action.isEnabled() and window.timeline_view.empty.text() == EMPTY_TEXT
