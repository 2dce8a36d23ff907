"""Search: exact packings are sound and prove optima, plans verify and replay exactly from a seed
and an iteration count, a cancel from another thread stops it at once, and MiniMalloc instances
reach their best known height."""

import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from slabscope import planner
from slabscope.planner.placement import exact
from slabscope.planner.placement.search import warm_up
from tests.strategies import interval_graphs, small_graphs

BENCHMARKS = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
MINIMALLOC = BENCHMARKS / "minimalloc"
SMALL = sorted((BENCHMARKS / "omnimalloc_small").glob("*.csv"))


@pytest.fixture(scope="module", autouse=True)
def compiled():
    warm_up()  # compiling (or loading) the kernels is not what these tests time


def _trace(graph):
    model = planner.conflict_model(graph, "serial")
    return exact.prepare(np.asarray(graph.reserved, dtype=np.int64), model.first, model.last)


def _unbounded():
    return exact.Work(None, lambda: False)


@settings(max_examples=60, deadline=None)
@given(graph=interval_graphs())
def test_exact_packings_fit_the_capacity_and_never_overlap_live_buffers(graph):
    model = planner.conflict_model(graph, "serial")
    size = np.asarray(graph.reserved, dtype=np.int64)
    bound = planner.lower_bound(graph, "serial").bytes
    status, offsets = exact.feasible(_trace(graph), bound + 8, _unbounded())
    assert status in (exact.SOLVED, exact.INFEASIBLE)  # tiny traces always finish
    if status == exact.INFEASIBLE:
        return
    assert int((offsets + size).max()) <= bound + 8
    for a in range(len(size)):
        for b in range(a + 1, len(size)):
            if model.conflicts(a, b):
                assert offsets[a] + size[a] <= offsets[b] or offsets[b] + size[b] <= offsets[a]


@pytest.mark.parametrize("path", SMALL, ids=lambda p: p.name)
def test_exact_search_proves_the_optimum_of_small_benchmarks(path):
    graph = planner.load(path)
    optimum = int(path.stem.split(".")[1])  # the file name carries it
    status, offsets = exact.feasible(_trace(graph), optimum, _unbounded())
    assert status == exact.SOLVED
    assert int((offsets + np.asarray(graph.reserved)).max()) <= optimum
    assert exact.feasible(_trace(graph), optimum - 1, _unbounded())[0] == exact.INFEASIBLE
    plan = planner.plan(graph, "search", conflicts="serial", budget=10)
    assert plan.slab_bytes == optimum and plan.proof == "optimal"


@pytest.mark.parametrize("conflicts", ["dag", "serial"])
@settings(max_examples=40, deadline=None)
@given(graph=small_graphs())
def test_search_plans_verify_and_name_seed_work_and_proof(graph, conflicts):
    plan = planner.plan(graph, "search", conflicts=conflicts, budget=5, iterations=50, seed=3)
    assert planner.verify(graph, plan).ok
    assert plan.seed == 3 and 1 <= plan.iterations
    assert plan.slab_bytes <= planner.plan(graph, conflicts=conflicts).slab_bytes
    assert plan.proof == "optimal" or plan.proof.startswith("best found, ")
    assert set(plan.to_dict()) >= {"seed", "iterations", "proof"}


def _transformer():
    from slabscope.gpu.generators import transformer

    return planner.graph_from_dict(transformer(256, 512, 8, layers=2))  # no quick optimum


def _minimalloc(name: str):
    """MiniMalloc's challenging instance `name`; the test skips where ../shared is absent."""
    path = MINIMALLOC / f"{name}.1048576.csv"
    if not path.exists():
        pytest.skip(f"shared benchmarks not present ({BENCHMARKS})")
    return planner.load(path)


def test_same_seed_and_iterations_give_the_same_plan():
    graph = _transformer()
    runs = [planner.plan(graph, "search", budget=60, iterations=300, seed=7) for _ in range(2)]
    assert [p.offset for p in runs[0].placements] == [p.offset for p in runs[1].placements]
    assert runs[0].order == runs[1].order and runs[0].iterations == runs[1].iterations == 300
    assert planner.verify(graph, runs[0]).ok


def test_same_seed_and_iterations_give_the_same_exact_search_plan():
    trace = _minimalloc("K")
    runs = [planner.plan(trace, "search", conflicts="serial", budget=60, iterations=3000)
            for _ in range(2)]
    assert runs[0].by_name == runs[1].by_name and runs[0].iterations == runs[1].iterations


def _stopped_by_cancel(delay: float, plan_it) -> bool:
    """Whether `plan_it`, cancelled from another thread `delay` s after it starts, raises
    Cancelled. Its budget is far longer than the delay: a search that missed the cancel would
    run to the budget and return a plan instead. (How fast it stops is bench material: wall
    time on shared cores is not a test.)"""
    token = planner.CancelToken()
    outcome = {}

    def work():
        try:
            outcome["plan"] = plan_it(token)
        except planner.Cancelled:
            outcome["cancelled"] = True

    worker = threading.Thread(target=work)
    worker.start()
    time.sleep(delay)
    token.cancel()
    worker.join()
    return outcome.get("cancelled", False)


def test_a_cancel_from_another_thread_stops_exact_search():
    hard = _minimalloc("D")  # exact search runs for the whole budget
    planner.lower_bound(hard, "serial")
    assert _stopped_by_cancel(0.5, lambda token: planner.plan(
        hard, "search", conflicts="serial", budget=30, cancel=token))


def test_a_cancel_from_another_thread_stops_dag_search():
    graph = _transformer()  # restarts and local search under the dag model
    planner.lower_bound(graph, "dag")
    assert _stopped_by_cancel(0.3, lambda token: planner.plan(
        graph, "search", budget=30, cancel=token))


@pytest.mark.parametrize("name, best_known", [("C", 1_039_360), ("K", 1_048_576)])
def test_minimalloc_instances_reach_their_best_known_height(name, best_known):
    graph = _minimalloc(name)
    plan = planner.plan(graph, "search", conflicts="serial", budget=10)
    assert plan.slab_bytes == best_known and plan.proof == "optimal"
    assert planner.verify(graph, plan).ok


@settings(max_examples=30, deadline=None)
@given(graph=small_graphs(max_nodes=7, max_buffers=6))
def test_small_dags_get_plans_proved_optimal_against_every_request_order(graph):
    import itertools

    from slabscope.planner.placement.packing import Packer

    packer = Packer(graph, planner.conflict_model(graph, "dag"))
    # Some request order placed by first fit reaches the optimum (the optimum's, by offset).
    best = min(packer.height(np.array(order, dtype=np.int64))
               for order in itertools.permutations(range(len(graph.buffers))))
    plan = planner.plan(graph, "search", budget=10)
    assert plan.proof == "optimal" and plan.slab_bytes == best
