"""`--schedule best` within its budget: the exact search meets its deadline inside a layer of
downsets, and the LPMF start costs linear time on graphs with thousands of nodes ready at once
while choosing as before on graphs with fewer."""

from __future__ import annotations

import json
import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.schedule import list_schedulers, schedule_exact
from slabscope.planner.schedule.schedule_problem import ScheduleProblem, _positions
from tests.strategies import small_graphs


def ring_data(n: int) -> dict:
    """n producers, each consumer reading two neighbours' buffers around a ring: the exact
    search's layers of downsets grow combinatorially."""
    return {"nodes": [f"p{i}" for i in range(n)] + [f"c{i}" for i in range(n)],
            "edges": [[f"p{(i + k) % n}", f"c{i}"] for i in range(n) for k in (0, 1)],
            "buffers": [{"name": f"b{i}", "bytes": 1024 * (1 + i % 7),
                         "uses": [f"p{i}", f"c{i}", f"c{(i - 1) % n}"]} for i in range(n)]
            + [{"name": f"o{i}", "bytes": 512, "uses": [f"c{i}"]} for i in range(n)]}


def ring(n: int) -> planner.Graph:
    return planner.graph_from_dict(ring_data(n))


def independent(n: int) -> planner.Graph:
    return planner.graph_from_dict({
        "nodes": [f"n{i}" for i in range(n)], "edges": [],
        "buffers": [{"name": f"b{i}", "bytes": 256 * (1 + i % 13), "uses": [f"n{i}"]}
                    for i in range(n)]})


def test_the_exact_search_checks_its_deadline_inside_a_layer():
    # 12 independent nodes: layers of up to 924 downsets; checked once per layer, it was 12 calls.
    graph = independent(12)
    problem = ScheduleProblem.of(graph)
    order = np.arange(12, dtype=np.int64)
    calls = []
    found = schedule_exact.reorder(problem, list(range(12)), order * 0, order * 0 + 11, 0,
                                   1 << 40, False, 10 ** 6, lambda: calls.append(1))
    assert found.complete and found.order is not None
    assert len(calls) >= 12 + 924 // schedule_exact.CHECK_EVERY


def test_a_ring_stays_within_its_budget():
    started = time.perf_counter()
    chosen = planner.schedule(ring(600), budget=0.1)  # 10 s before the check inside layers
    assert time.perf_counter() - started < 5.0
    assert chosen.peak_bytes <= chosen.given_peak_bytes


def test_lpmf_of_many_ready_nodes_is_linear():
    graph = independent(8000)  # 35 s when every ready node was weighed at every step
    problem = ScheduleProblem.of(graph)
    started = time.perf_counter()
    order = list_schedulers.lpmf(problem, np.arange(8000, dtype=np.int64))
    assert time.perf_counter() - started < 4.0
    assert sorted(order.tolist()) == list(range(8000))


def _lpmf_weighing_every_ready_node(problem: ScheduleProblem, rank: np.ndarray, noise=None):
    """LPMF as it was: every ready node weighed at every step, stats recomputed (the oracle)."""
    n = problem.n
    sizes = problem.sizes.tolist()
    node_bufs = [problem.buffers_of(v).tolist() for v in range(n)]
    buf_uses = [problem.buf_use[problem.buf_start[b]:problem.buf_start[b + 1]].tolist()
                for b in range(len(sizes))]
    succs = [problem.succs(v).tolist() for v in range(n)]
    indegree = np.diff(problem.pred_start).tolist()
    remaining = [len(uses) for uses in buf_uses]
    started = [False] * len(sizes)
    scale = [1.0] * n if noise is None else noise.tolist()
    rank_of = rank.tolist()
    ready = [v for v in range(n) if indegree[v] == 0]
    resident = peak = 0
    order = []
    while ready:
        def stats(v):
            return (sum(sizes[b] for b in node_bufs[v] if not started[b]),
                    sum(sizes[b] for b in node_bufs[v] if remaining[b] == 1))
        within = lowest = None
        for v in ready:
            new, freed = stats(v)
            step = resident + new
            if step <= peak:
                key = ((step - freed) * scale[v], rank_of[v])
                if within is None or key < within[0]:
                    within = (key, v)
            elif within is None:
                key = (step * scale[v], rank_of[v])
                if lowest is None or key < lowest[0]:
                    lowest = (key, v)
        v = within[1] if within is not None else lowest[1]
        new, freed = stats(v)
        ready.remove(v)
        peak = max(peak, resident + new)
        resident = resident + new - freed
        order.append(v)
        for b in node_bufs[v]:
            started[b] = True
            remaining[b] -= 1
        for s in succs[v]:
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(s)
    return order


@settings(max_examples=60, deadline=None, database=None)
@given(small_graphs(max_nodes=10, max_buffers=10), st.booleans(), st.integers(0, 2 ** 16))
def test_lpmf_chooses_as_before_when_few_nodes_are_ready(graph, noisy, seed):
    problem = ScheduleProblem.of(graph)
    rank = _positions(np.asarray(graph.topo, dtype=np.int64))
    noise = np.random.default_rng(seed).uniform(0.5, 2.0, problem.n) if noisy else None
    assert list_schedulers.lpmf(problem, rank, noise).tolist() == \
        _lpmf_weighing_every_ready_node(problem, rank, noise)


def test_a_schedule_cut_by_its_budget_says_so_and_one_within_its_steps_repeats():
    graph = ring(40)
    cut = planner.schedule(graph, iterations=10 ** 9, budget=0.0)
    assert not cut.optimal and cut.cut_by_budget and cut.to_dict()["schedule_cut_by_budget"]
    assert cut.proof.endswith("the 0 s budget cut the work short: the exact search, the beam "
                              f"search and the improvement after {cut.iterations:,} of "
                              "1,000,000,000 steps")  # each phase the deadline stopped
    steps = [planner.schedule(graph, seed=3, iterations=40, budget=60.0) for _ in range(2)]
    assert not steps[0].cut_by_budget and steps[0].iterations == 40
    assert steps[0].order == steps[1].order and steps[0].peak_bytes == steps[1].peak_bytes


def test_the_cut_is_in_the_text_and_the_json(tmp_path, capsys):
    path = tmp_path / "ring.json"
    path.write_text(json.dumps(ring_data(40)))
    assert main(["plan", str(path), "--schedule", "best", "--budget", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["schedule_cut_by_budget"] is True
    assert main(["plan", str(path), "--schedule", "best", "--budget", "0"]) == 0
    assert "budget cut the work short" in capsys.readouterr().out



def test_a_budget_buys_a_fixed_number_of_steps_and_the_same_order_each_time(monkeypatch):
    from pathlib import Path

    from slabscope.planner.schedule import scheduling

    # A tenth of the real rate: the steps fit well inside each budget on a slow machine too.
    monkeypatch.setattr(scheduling, "NODE_STEPS_PER_SECOND", scheduling.NODE_STEPS_PER_SECOND // 10)
    step = planner.load(Path(__file__).parent / "data" / "steps" / "block_sgd_step.json")
    budgets = (1.0, 1.0, 3.0)
    runs = [planner.schedule(step, budget=budget, seed=3) for budget in budgets]
    nodes = len(step.nodes)
    steps = scheduling.default_schedule_iterations
    assert steps(nodes, 3.0) == 3 * steps(nodes, 1.0)
    for run, budget in zip(runs, budgets):
        # Not cut by the deadline, each run spent exactly the steps its budget buys, whatever
        # this machine's speed.
        assert not run.cut_by_budget and "budget cut" not in run.proof
        assert run.iterations == steps(nodes, budget)
    assert runs[0].order == runs[1].order and runs[0].peak_bytes == runs[1].peak_bytes
    assert runs[2].peak_bytes <= runs[0].peak_bytes
