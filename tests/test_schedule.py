"""slabscope.planner.schedule: the execution order with the least peak of live bytes, its bound and proof,
the command line's `--schedule`, and the runner executing the chosen order."""

import csv
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.app.cli import main
from bench.branchy import branchy_graph, branchy_graph_data
from slabscope.planner.support.cancel import Cancelled, CancelToken
from slabscope.planner.conflicts.live_bytes import live_bytes
from slabscope.planner.schedule.schedule_exact import reorder
from slabscope.planner.schedule.schedule_problem import ScheduleProblem, _positions, _profile
from slabscope.planner.conflicts.serial_model import serial_schedule

# Brute force enumerates every order: graphs are kept to at most this many.
ORDERS_LIMIT = 2_000


def _linear_extensions(n: int, preds: list[int]) -> int:
    """How many topological orders (a DP over downsets, bitmask `preds[v]`)."""
    ways = {0: 1}
    for _ in range(n):
        following: dict[int, int] = {}
        for done, count in ways.items():
            for v in range(n):
                if not done >> v & 1 and preds[v] & ~done == 0:
                    following[done | 1 << v] = following.get(done | 1 << v, 0) + count
        ways = following
    return sum(ways.values())


@st.composite
def small_dags(draw):
    """Graph-file data: 8-12 nodes, random edges (a chain added through the first nodes until
    the orders are few enough to enumerate), node outputs read by successors, and a few
    buffers shared by unrelated nodes."""
    n = draw(st.integers(8, 12))
    edges = {(i, j) for i in range(n) for j in range(i + 1, n)
             if draw(st.floats(0, 1)) < 0.25}
    preds = [0] * n
    for i, j in edges:
        preds[j] |= 1 << i
    k = 0
    while _linear_extensions(n, preds) > ORDERS_LIMIT:
        edges.add((k, k + 1))
        preds[k + 1] |= 1 << k
        k += 1
    sizes = st.sampled_from([256, 512, 1024, 4096, 16384])
    buffers = []
    for v in range(n):
        readers = [j for i, j in sorted(edges) if i == v and draw(st.booleans())]
        buffers.append({"name": f"out{v}", "bytes": draw(sizes),
                        "uses": [f"n{v}"] + [f"n{j}" for j in readers]})
    for extra in range(draw(st.integers(0, 3))):
        uses = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))
        buffers.append({"name": f"shared{extra}", "bytes": draw(sizes),
                        "uses": [f"n{u}" for u in uses]})
    return {"nodes": [f"n{v}" for v in range(n)],
            "edges": [[f"n{i}", f"n{j}"] for i, j in sorted(edges)], "buffers": buffers,
            "alignment": 256}


def brute_force_peak(graph: planner.Graph) -> int:
    """The least peak over every topological order, each order's peak from its intervals."""
    n = len(graph.nodes)
    preds = [set() for _ in range(n)]
    for src, dst in graph.edges:
        preds[graph.node_index[dst]].add(graph.node_index[src])
    best = [None]

    def peak_of(order: list[int]) -> int:
        step = {v: t for t, v in enumerate(order)}
        curve = [0] * n
        for b, uses in enumerate(graph.use_indices):
            for t in range(min(step[u] for u in uses), max(step[u] for u in uses) + 1):
                curve[t] += graph.reserved[b]
        return max(curve)

    def extend(order: list[int], done: set[int]) -> None:
        if len(order) == n:
            peak = peak_of(order)
            best[0] = peak if best[0] is None else min(best[0], peak)
            return
        for v in range(n):
            if v not in done and preds[v] <= done:
                done.add(v)
                order.append(v)
                extend(order, done)
                order.pop()
                done.remove(v)

    extend([], set())
    return best[0]


def _is_topological(graph: planner.Graph, order) -> bool:
    step = {name: t for t, name in enumerate(order)}
    return sorted(step) == sorted(n.name for n in graph.nodes) and \
        all(step[a] < step[b] for a, b in graph.edges)


@settings(max_examples=30, deadline=None)
@given(small_dags())
def test_small_graphs_are_scheduled_optimally_as_brute_force_confirms(data):
    graph = planner.graph_from_dict(data)
    chosen = planner.schedule(graph, iterations=0)
    assert _is_topological(graph, chosen.order)
    assert chosen.peak_bytes == live_bytes(planner.with_schedule(graph, chosen.order)).peak
    best = brute_force_peak(graph)
    if chosen.fixed is None:
        assert chosen.proof == "optimal"
    assert chosen.peak_bytes == best
    assert chosen.lower_bound_bytes <= best
    assert chosen.peak_bytes <= min(chosen.starts.values())
    # The downset DP on its own, without the starts' bound to prune by, finds the optimum too.
    problem = ScheduleProblem.of(graph)
    order = np.asarray(graph.topo, dtype=np.int64)
    _, first, last = _profile(order, _positions(order), problem.buf_start, problem.buf_use,
                              problem.sizes)
    found = reorder(problem, list(graph.topo), first, last, 0, 2**62, False, 10**6)
    assert found.complete and found.peak == best == problem.peak(np.asarray(found.order))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_large_graphs_are_never_worse_than_any_start_and_stay_above_the_bound(seed):
    graph = branchy_graph(300, branches=4 * seed, seed=seed)
    chosen = planner.schedule(graph, seed=seed, iterations=3_000, budget=60)
    assert _is_topological(graph, chosen.order)
    assert set(chosen.starts) == {"given", "LPMF", "BFS", "DFS"}
    assert chosen.lower_bound_bytes <= chosen.peak_bytes <= min(chosen.starts.values())
    assert chosen.peak_bytes == ScheduleProblem.of(graph).peak(
        np.array([graph.node_index[name] for name in chosen.order]))
    assert chosen.given_peak_bytes == live_bytes(graph).peak


def test_exact_dp_proves_the_best_order_of_a_narrow_300_node_dag():
    graph = branchy_graph(300, seed=1)  # four branches: few downsets per layer
    chosen = planner.schedule(graph, iterations=0, budget=60)
    assert chosen.source == "exact" and chosen.proof == "optimal"
    assert chosen.peak_bytes < min(chosen.starts.values())


def test_improvement_beats_every_list_scheduler_on_a_wide_dag():
    graph = branchy_graph(300, branches=12, seed=1)  # too many downsets for the whole DP
    chosen = planner.schedule(graph, iterations=3_000, budget=60)
    assert chosen.peak_bytes < min(chosen.starts.values())
    assert "improved" in chosen.source and chosen.iterations == 3_000


def test_same_seed_and_iterations_give_the_same_order():
    graph = branchy_graph(200, branches=12, seed=5)
    runs = [planner.schedule(graph, seed=7, iterations=1_500, budget=60) for _ in range(2)]
    assert runs[0].order == runs[1].order and runs[0].iterations == runs[1].iterations == 1_500


def test_a_chain_says_its_order_cannot_change():
    data = {"nodes": ["a", "b", "c"], "edges": [["a", "b"], ["b", "c"]],
            "buffers": [{"name": "x", "bytes": 10, "uses": ["a", "b"]},
                        {"name": "y", "bytes": 10, "uses": ["b", "c"]}]}
    chosen = planner.schedule(planner.graph_from_dict(data))
    assert chosen.fixed is not None and "chain" in chosen.fixed
    assert chosen.order == ("a", "b", "c") and chosen.iterations == 0


def test_the_lower_bound_counts_buffers_live_across_a_node_in_every_order():
    # x is used by a and c, and a -> b -> c: x is live at b's step in every order.
    data = {"nodes": ["a", "b", "c", "d"], "edges": [["a", "b"], ["b", "c"]],
            "buffers": [{"name": "x", "bytes": 1024, "uses": ["a", "c"]},
                        {"name": "w", "bytes": 512, "uses": ["b"]},
                        {"name": "z", "bytes": 256, "uses": ["d"]}], "alignment": 256}
    chosen = planner.schedule(planner.graph_from_dict(data))
    assert chosen.lower_bound_bytes == 1536 and chosen.bound_node == "b"
    assert chosen.peak_bytes == 1536 and chosen.proof == "optimal"


def test_a_cancelled_token_stops_the_work():
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        planner.schedule(branchy_graph(100, seed=1), cancel=token)


def test_with_schedule_rejects_an_order_against_an_edge():
    graph = branchy_graph(20, seed=1)
    backwards = [n.name for n in graph.nodes][::-1]
    with pytest.raises(planner.PlanError, match="against edge"):
        planner.with_schedule(graph, backwards)


# -- the command line ---------------------------------------------------------------------------


@pytest.fixture
def branchy_file(tmp_path):
    path = tmp_path / "branchy.json"
    path.write_text(json.dumps(branchy_graph_data(120, seed=2)))
    return path


def test_plan_json_has_the_schedule_and_plans_the_slab_in_it(branchy_file, capsys, tmp_path):
    out_csv = tmp_path / "plan.csv"
    assert main(["plan", str(branchy_file), "--schedule", "best", "--json", "--iterations",
                 "500", "--budget", "30", "--csv", str(out_csv)]) == 0
    data = json.loads(capsys.readouterr().out)
    graph = planner.load(str(branchy_file))
    assert data["conflicts"] == "serial"
    assert _is_topological(graph, data["schedule"])
    assert data["schedule_peak_bytes"] <= data["given_peak_bytes"] == live_bytes(graph).peak
    # The serial lower bound is the chosen order's peak, and the slab cannot be below it.
    assert data["lower_bound_bytes"] == data["schedule_peak_bytes"] <= data["slab_bytes"]
    step = {name: t for t, name in enumerate(data["schedule"])}
    with open(out_csv, newline="") as handle:
        rows = {row["id"]: row for row in csv.DictReader(handle)}
    for buf in graph.buffers:
        times = [step[u] for u in buf.uses]
        assert (int(rows[buf.name]["lower"]), int(rows[buf.name]["upper"])) == \
            (min(times), max(times) + 1)


def test_plan_text_reports_the_schedule(branchy_file, capsys):
    assert main(["plan", str(branchy_file), "--schedule", "best", "--iterations", "200"]) == 0
    out = capsys.readouterr().out
    assert "schedule       best order, peak" in out and "given order" in out


def test_best_schedule_with_dag_conflicts_is_a_one_line_error(branchy_file, capsys):
    assert main(["plan", str(branchy_file), "--schedule", "best", "--conflicts", "dag"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--conflicts dag" in err


def test_a_minimalloc_csv_keeps_its_order_and_says_so(tmp_path, capsys):
    path = tmp_path / "trace.csv"
    path.write_text("id,lower,upper,size\na,0,2,10\nb,1,3,20\nc,2,4,5\n")
    assert main(["plan", str(path), "--schedule", "best", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "cannot change" in data["schedule_fixed"]
    graph = planner.load(str(path))
    assert data["schedule"] == [graph.nodes[v].name for v in serial_schedule(graph)]


def test_run_executes_the_best_order_and_verifies_it(tmp_path, capsys):
    from slabscope.gpu.generators import transformer, write_graph

    path = tmp_path / "block.json"
    write_graph(transformer(16, 32, 2, layers=2), path)
    assert main(["run", str(path), "--schedule", "best", "--backend", "numpy", "--repeats", "1",
                 "--json", "--iterations", "300"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["execute_order"] == data["schedule"]
    assert data["conflicts"] == "serial" and data["verification"]["ok"]
