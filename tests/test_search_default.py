"""A search without `--iterations` takes a fixed number of steps for each second of its budget,
scaled to the graph: the same file and budget give the same plan whatever the clock says, ten
seconds buy five times the work of two, and the deadline only caps the work (saying so in the
plan when it does)."""

import json
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.placement import search
from slabscope.planner.placement.search import warm_up
from tests.examples import DIAMOND, RELU_UNFUSED

BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"


@pytest.fixture(scope="module", autouse=True)
def compiled():
    warm_up()


def _cli_plan(capsys, *args) -> dict:
    assert main(["plan", *map(str, args), "--algorithm", "search", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_default_steps_are_a_fixed_number_scaled_to_the_graph():
    graph = planner.load(RELU_UNFUSED)
    steps = planner.search_iterations(graph, "dag")
    assert steps == planner.search_iterations(planner.load(RELU_UNFUSED), "dag") >= 2
    # Many conflicts make each step dearer, so fewer are taken.
    dense = planner.graph_from_dict({
        "alignment": 1, "nodes": ["s"],
        "buffers": [{"name": f"b{i}", "bytes": i + 1, "uses": ["s"]} for i in range(3000)]})
    assert 2 <= planner.search_iterations(dense, "serial") < steps


def test_each_second_of_budget_buys_the_same_steps():
    # Exact search's nodes (interval lifetimes) and packings (a conflict graph): ten seconds buy
    # five times what two do, to within rounding; no budget buys the first two batches still.
    exact_runs = planner.graph_from_dict({
        "alignment": 1, "nodes": ["s"],
        "buffers": [{"name": f"b{i}", "bytes": i + 1, "uses": ["s"]} for i in range(3000)]})
    packings = planner.load(RELU_UNFUSED)
    for graph, conflicts in ((exact_runs, "serial"), (packings, "dag")):
        two, ten = (planner.search_iterations(graph, conflicts, budget) for budget in (2, 10))
        assert two == planner.search_iterations(graph, conflicts)  # the default budget is 2 s
        assert 4 <= 5 * two <= ten < 5 * two + 5
        assert planner.search_iterations(graph, conflicts, 0) == 4


def test_a_given_budget_buys_its_steps_and_replays_on_any_machine(capsys, tmp_path, monkeypatch):
    # Few steps per second (so the test runs in moments, far inside any deadline) on a trace
    # whose search never reaches the bound: --budget 10 takes the steps ten seconds buy (but
    # the one exact search keeps for a packing it never found), five times what the default
    # two do, and the planner given those steps replays it.
    path = tmp_path / "t.csv"
    path.write_text("id,lower,upper,size\n" + "".join(
        f"b{i},{i % 40},{i % 40 + 30 + i % 7},{(i * 7919) % 997 + 1}\n" for i in range(300)))
    monkeypatch.setattr(search, "_NODE_CONFLICTS_PER_SECOND", 2_000)
    monkeypatch.setattr(search, "_PAIR_VISITS_PER_SECOND", 20_000)
    graph = planner.load(path)
    two, ten = (planner.search_iterations(graph, "serial", budget) for budget in (2, 10))
    assert 4 < two and 5 * two <= ten < 5 * two + 5
    data = _cli_plan(capsys, path, "--budget", "10")
    assert ten - 1 <= data["iterations"] <= ten and "budget" not in data["proof"]
    again = planner.plan(graph, "search", conflicts="serial", budget=600, iterations=ten)
    assert data["iterations"] == again.iterations
    assert {p["name"]: p["offset"] for p in data["placements"]} == \
        {p.name: p.offset for p in again.placements}
    assert two - 1 <= _cli_plan(capsys, path)["iterations"] <= two


def test_the_cli_default_search_replays_as_the_planner_given_those_steps(capsys):
    data = _cli_plan(capsys, DIAMOND, "--conflicts", "serial")
    graph = planner.load(DIAMOND)
    steps = planner.search_iterations(graph, "serial")
    again = planner.plan(graph, "search", conflicts="serial", budget=60, iterations=steps)
    assert data["iterations"] == again.iterations <= steps
    assert {p["name"]: p["offset"] for p in data["placements"]} == \
        {p.name: p.offset for p in again.placements}
    assert "budget" not in data["proof"]


def test_a_budget_that_cuts_the_default_steps_short_says_so(capsys, tmp_path):
    # Every buffer live at once but each request order leaves holes: search never proves it.
    path = tmp_path / "t.csv"
    path.write_text("id,lower,upper,size\n" + "".join(
        f"b{i},{i % 40},{i % 40 + 30 + i % 7},{(i * 7919) % 997 + 1}\n" for i in range(3000)))
    data = _cli_plan(capsys, path, "--budget", "0")
    assert data["iterations"] < planner.search_iterations(planner.load(path), "serial")
    assert "the 0 s budget cut the work short" in data["proof"]


@pytest.mark.skipif(not (BENCHMARKS / "idealloc" / "S_1.csv").exists(),
                    reason="needs ../shared/benchmarks/idealloc")
def test_the_default_search_of_s_1_is_within_one_percent_of_the_bound(capsys):
    data = _cli_plan(capsys, BENCHMARKS / "idealloc" / "S_1.csv")
    assert data["gap"] <= 0.01 and "budget" not in data["proof"]
