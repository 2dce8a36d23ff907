"""Search's seed and step limit are session settings: they key kept plans, reach the planner, and
an export sets them instead of assigning the session's plan from outside."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from slabscope import planner  # noqa: E402
from slabscope.app.cli import main  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


def test_seed_and_iterations_key_search_plans_only():
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    first_fit = session.settings_key()
    assert session.settings_key(seed=5) == first_fit == session.settings_key(iterations=9)
    search = session.settings_key(algorithm="search")
    assert session.settings_key(algorithm="search", seed=5) != search
    assert session.settings_key(algorithm="search", iterations=9) != search


def test_the_session_plans_search_with_its_seed_and_iterations():
    graph = planner.load(RELU_UNFUSED)
    session = Session()
    session.seed, session.iterations = 3, 40
    session.set_graph(graph, RELU_UNFUSED, algorithm="search")
    expected = planner.plan(graph, algorithm="search", seed=3, iterations=40)
    assert [p.offset for p in session.plan.placements] == [p.offset for p in expected.placements]


def test_export_of_a_search_plan_goes_through_the_session(qapp, tmp_path, capsys):
    out = tmp_path / "search.png"
    assert main(["export", str(RELU_UNFUSED), "--algorithm", "search", "--seed", "2",
                 "--iterations", "30", "--png", str(out)]) == 0
    assert out.is_file()
