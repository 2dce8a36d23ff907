"""The runner on the NumPy backend: one slab, views, phases, verification and the serial hazard."""

from __future__ import annotations

import itertools
import json
import tracemalloc

import numpy as np
import pytest

from slabscope import gpu
from slabscope import planner
from slabscope.app.cli import main
from slabscope.gpu.binding import bind, build_steps, stage
from slabscope.gpu.execute_order import execute_order
from slabscope.gpu.generators import mlp, transformer
from tests.examples import EXAMPLES, RELU_UNFUSED

DIAMOND_EXEC = EXAMPLES / "diamond_exec.json"
EXECUTABLE = sorted(p for p in EXAMPLES.glob("*.json")
                    if all(isinstance(n, dict) and "op" in n
                           for n in json.loads(p.read_text())["nodes"]))
NOT_EXECUTABLE = sorted(set(EXAMPLES.glob("*.json")) - set(EXECUTABLE))


def serial_plan(graph):
    """The serial-model plan of `graph` for its schedule."""
    return planner.plan(graph, conflicts="serial")


def all_topological_orders(graph):
    """Every legal execution order of a small graph, as node-name lists."""
    names = [n.name for n in graph.nodes]
    reach = graph.reachability
    for perm in itertools.permutations(range(len(names))):
        if all(not reach.reaches(perm[j], perm[i])
               for i in range(len(perm)) for j in range(i + 1, len(perm))):
            yield [names[i] for i in perm]


def quick_run(source, **kwargs):
    kwargs.setdefault("repeats", 2)
    kwargs.setdefault("measure_memory", False)
    return gpu.run(source, backend="numpy", **kwargs)


@pytest.mark.parametrize("path", EXECUTABLE, ids=lambda p: p.stem)
def test_every_executable_example_runs_and_verifies(path):
    report = quick_run(path)
    assert report.verification.ok, report.verification.summary()
    assert report.backend == "numpy"
    assert report.slab_bytes == planner.plan(planner.load(path)).slab_bytes


@pytest.mark.parametrize("path", NOT_EXECUTABLE, ids=lambda p: p.stem)
def test_examples_without_ops_are_refused_by_name(path):
    with pytest.raises(planner.PlanError, match="has no op"):
        quick_run(path)


def test_the_worked_example_is_in_the_list():
    assert RELU_UNFUSED in EXECUTABLE and DIAMOND_EXEC in EXECUTABLE


def test_serial_plan_lets_p_and_q_share_bytes_and_dag_plan_does_not():
    graph = planner.load(DIAMOND_EXEC)
    serial = serial_plan(graph).by_name
    dag = planner.plan(graph).by_name
    assert serial["p"].offset == serial["q"].offset
    assert dag["p"].end <= dag["q"].offset or dag["q"].end <= dag["p"].offset


def test_serial_plan_run_in_another_order_is_caught_naming_the_clobbered_buffer():
    graph = planner.load(DIAMOND_EXEC)
    report = quick_run(graph, plan=serial_plan(graph), execute_order_names=["a", "c", "b", "d"])
    v = report.verification
    assert not v.ok
    assert [c.buffer for c in v.clobbered] == ["q"]
    assert v.clobbered[0].read_by == "d"
    assert v.differing == ("r",)
    assert {frozenset(p) for p in v.unsafe_pairs} == {frozenset(("p", "q"))}
    assert "clobbered: q (read by d" in v.summary()


def test_serial_plan_is_correct_in_the_order_it_was_made_for():
    graph = planner.load(DIAMOND_EXEC)
    report = quick_run(graph, plan=serial_plan(graph))
    assert report.execute_order == graph.schedule
    assert report.verification.ok


def test_dag_plan_passes_in_every_legal_order():
    graph = planner.load(DIAMOND_EXEC)
    orders = list(all_topological_orders(graph))
    assert len(orders) == 2
    for order in orders:
        report = quick_run(graph, execute_order_names=order)
        assert report.execute_order == tuple(order)
        assert report.verification.ok, (order, report.verification.summary())


def test_conflicts_serial_through_the_planner_front_door():
    report = quick_run(DIAMOND_EXEC, conflicts="serial",
                       execute_order_names=["a", "c", "b", "d", "e"])
    assert report.conflicts == "serial"
    assert [c.buffer for c in report.verification.clobbered] == ["q"]


GRAPHS = {
    "relu_unfused": lambda: planner.load(RELU_UNFUSED),
    "diamond_exec": lambda: planner.load(DIAMOND_EXEC),
    "mlp": lambda: planner.graph_from_dict(mlp(3, 16, 32)),
    "transformer": lambda: planner.graph_from_dict(transformer(16, 32, 2)),
}


@pytest.mark.parametrize("name", GRAPHS)
def test_views_never_overlap_a_conflicting_buffer(name):
    graph = GRAPHS[name]()
    plan = planner.plan(graph)
    binding = bind(gpu.select_backend("numpy"), graph, plan)
    slab = binding.allocations[0]
    model = planner.DagConflicts(graph)
    views = binding.views
    for i, a in enumerate(graph.buffers):
        assert np.shares_memory(views[a.name], slab)
        assert views[a.name].ctypes.data - slab.ctypes.data == plan.by_name[a.name].offset
        for j in range(i + 1, len(graph.buffers)):
            if model.conflicts(i, j):
                assert not np.shares_memory(views[a.name], views[graph.buffers[j].name]), \
                    (a.name, graph.buffers[j].name)


@pytest.mark.parametrize("name", GRAPHS)
def test_operands_of_a_node_share_memory_only_as_the_same_object(name):
    graph = GRAPHS[name]()
    for plan in (planner.plan(graph), serial_plan(graph) if graph.schedule else None):
        if plan is None:
            continue
        binding = bind(gpu.select_backend("numpy"), graph, plan)
        build_steps(gpu.select_backend("numpy"), graph, binding, execute_order(graph),
                    stage(graph))
        for node in graph.nodes:
            for i in node.inputs + node.workspace:
                for o in node.outputs:
                    a, b = binding.views[i], binding.views[o]
                    assert a is b if i == o else not np.shares_memory(a, b), (node.name, i, o)


def test_in_place_node_gets_the_same_view_object():
    graph = planner.graph_from_dict({
        "nodes": [{"name": "up", "op": "upload", "outputs": ["t"]},
                  {"name": "relu", "op": "relu", "inputs": ["t"], "outputs": ["t"]},
                  {"name": "down", "op": "readback", "inputs": ["t"]}],
        "buffers": [{"name": "t", "shape": [8, 8], "dtype": "float32"}]})
    report = quick_run(graph)
    assert report.verification.ok


def test_a_plan_that_overlaps_operands_is_refused_before_running():
    graph = planner.load(RELU_UNFUSED)
    good = planner.plan(graph)
    bad = planner.Plan(tuple(planner.Placement(p.name, 0 if p.name in ("t1", "y") else p.offset,
                                               p.bytes, p.reserved) for p in good.placements),
                       good.steps, good.slab_bytes, good.no_reuse_bytes, "hand-made", "dag", 256)
    with pytest.raises(planner.PlanError, match="'relu': operands share bytes.*t1 and y"):
        quick_run(graph, plan=bad)


@pytest.mark.parametrize("data", [transformer(256, 256, 2), mlp(3, 256, 512)],
                         ids=["transformer", "mlp"])
def test_execute_allocates_nothing_buffer_sized_on_the_host(data):
    """NumPy's ufuncs keep iteration buffers of at most `getbufsize()` elements per operand;
    beyond those, an execute must allocate nothing (on CuPy the allocator refuses everything)."""
    graph = planner.graph_from_dict(data)
    backend = gpu.select_backend("numpy")
    binding = bind(backend, graph, planner.plan(graph))
    steps = build_steps(backend, graph, binding, execute_order(graph), stage(graph))
    for step in steps:
        step.launch()
    smallest = min(b.bytes for b in graph.buffers if b.kind == "intermediate")
    iteration_buffers = 2 * np.getbufsize() * 4
    assert iteration_buffers < smallest
    tracemalloc.start()
    try:
        for _ in range(2):
            for step in steps:
                step.launch()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < iteration_buffers, f"execute allocated {peak} bytes"


@pytest.mark.parametrize("make", [lambda: RELU_UNFUSED, lambda: planner.graph_from_dict(
    mlp(4, 64, 128))], ids=["relu_unfused", "mlp"])
def test_phases_add_up_to_the_wall_time_within_5_percent(make):
    report = quick_run(make(), repeats=5)
    assert [p.name for p in report.phases] == ["graph_compile", "search", "prepare", "execute"]
    assert abs(report.phases_seconds - report.wall_seconds) <= 0.05 * report.wall_seconds
    assert sum(p.share for p in report.phases) == pytest.approx(1.0)
    assert report.amortised_seconds == pytest.approx(report.one_time_seconds / 5)


def test_kernel_figures_are_counted_and_timed():
    report = quick_run(RELU_UNFUSED, repeats=3)
    matmul = next(k for k in report.kernels if k.op == "matmul")
    assert matmul.flops == 2 * 64 * 64 * 256
    assert matmul.bytes == (64 * 256 + 256 * 64 + 64 * 64) * 4
    assert matmul.seconds > 0 and matmul.flops_per_s == pytest.approx(matmul.flops / matmul.seconds)
    assert matmul.flops_share_of_peak is None and report.peak_flops is None
    assert [k.node for k in report.kernels] == list(report.execute_order)


def test_peak_used_is_measured_and_covers_the_slab():
    report = gpu.run(RELU_UNFUSED, backend="numpy", repeats=1)
    assert report.peak_used_bytes >= report.slab_bytes
    assert "tracemalloc" in report.peak_used_source


def test_per_buffer_layout_is_the_no_reuse_baseline():
    report = quick_run(RELU_UNFUSED, layout="per-buffer")
    assert report.allocated_bytes == report.no_reuse_bytes == 1_229_056
    assert report.verification.ok


def test_replay_is_reported_unavailable_on_numpy():
    replay = quick_run(RELU_UNFUSED).replay
    assert not replay.available and "unavailable on numpy" in replay.reason


def test_auto_backend_says_why_it_fell_back():
    report = gpu.run(RELU_UNFUSED, backend="auto", repeats=1, verify=False, measure_memory=False)
    if report.backend == "numpy":
        assert report.backend_note.startswith("using numpy: ")
        assert "\n" not in report.backend_note


def test_execute_order_fills_in_unlisted_nodes_and_rejects_illegal_ones():
    graph = planner.load(DIAMOND_EXEC)
    assert [graph.nodes[i].name for i in execute_order(graph, ["c", "b"])] == \
        ["a", "c", "b", "d", "e"]
    with pytest.raises(planner.PlanError, match="'d' must run before 'c'|'c' must run before 'd'"):
        execute_order(graph, ["d", "c"])
    with pytest.raises(planner.PlanError, match="unknown node 'zz'"):
        execute_order(graph, ["zz"])


@pytest.mark.parametrize("data, message", [
    ({"nodes": [{"name": "n", "op": "conv2d", "inputs": ["a"], "outputs": ["b"]}],
      "buffers": [{"name": "a", "bytes": 4}, {"name": "b", "bytes": 4}]}, "unsupported op 'conv2d'"),
    ({"nodes": [{"name": "n", "op": "relu", "inputs": ["a"], "outputs": ["b"]}],
      "buffers": [{"name": "a", "bytes": 4}, {"name": "b", "shape": [1], "dtype": "float32"}]},
     "buffer 'a' .* has no shape"),
    ({"nodes": [{"name": "n", "op": "matmul", "inputs": ["a", "a"], "outputs": ["b"]}],
      "buffers": [{"name": "a", "shape": [2, 3], "dtype": "float32"},
                  {"name": "b", "shape": [2, 2], "dtype": "float32"}]}, "inner dimensions"),
    ({"nodes": [{"name": "n", "op": "softmax", "inputs": ["a"], "outputs": ["b"]}],
      "buffers": [{"name": "a", "shape": [2, 3], "dtype": "float32"},
                  {"name": "b", "shape": [2, 3], "dtype": "float32"}]}, "needs a workspace"),
    ({"nodes": [{"name": "n", "op": "relu", "inputs": ["a"], "outputs": ["b"]}],
      "buffers": [{"name": "a", "shape": [2], "dtype": "bfloat16"},
                  {"name": "b", "shape": [2], "dtype": "bfloat16"}]}, "bfloat16 is not supported"),
])
def test_graphs_that_cannot_execute_are_one_line_errors(data, message):
    with pytest.raises(planner.PlanError, match=message):
        quick_run(planner.graph_from_dict(data))


def test_cancel_stops_the_run():
    with pytest.raises(gpu.RunCancelled):
        quick_run(RELU_UNFUSED, cancelled=lambda: True)


def test_progress_reaches_the_end():
    seen = []
    quick_run(RELU_UNFUSED, progress=lambda fraction, text: seen.append((fraction, text)))
    assert seen[0][0] == 0.0 and seen[-1] == (1.0, "done")
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)


def test_cli_run_prints_tables_and_verifies(capsys):
    assert main(["run", str(RELU_UNFUSED), "--backend", "numpy", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    for text in ("graph_compile", "search", "prepare", "execute", "wall clock", "lt_matmul",
                 "verified: outputs match", "unavailable on numpy", "per execute over 2"):
        assert text in out


def test_cli_run_shows_the_hazard_with_exit_code_1(capsys):
    code = main(["run", str(DIAMOND_EXEC), "--backend", "numpy", "--repeats", "1",
                 "--conflicts", "serial", "--execute-order", "a,c,b,d,e"]) \
        if "serial" in planner.CONFLICT_MODELS else None
    if code is None:
        pytest.skip("planner has no serial model yet")
    assert code == 1
    assert "clobbered: q (read by d" in capsys.readouterr().out


def test_cli_run_json_and_errors(capsys):
    assert main(["run", str(RELU_UNFUSED), "--backend", "numpy", "--repeats", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["slab_bytes"] == 1_196_288 and data["verification"]["ok"]
    assert main(["run", str(EXAMPLES / "diamond.json"), "--backend", "numpy"]) == 2
    assert "has no op" in capsys.readouterr().err
    assert main(["run", str(RELU_UNFUSED), "--repeats", "0"]) == 2
    err = capsys.readouterr().err
    assert "repeats must be at least 1" in err and "Traceback" not in err


def test_device_peak_is_derived_from_reported_properties():
    """The CuPy backend's peak arithmetic, on properties shaped like getDeviceProperties'."""
    from types import SimpleNamespace

    from slabscope.gpu.backends import CupyBackend

    props = {"name": b"Some GPU", "major": 9, "minor": 0, "multiProcessorCount": 100,
             "clockRate": 1_500_000, "memoryClockRate": 2_000_000, "memoryBusWidth": 4096}
    runtime = SimpleNamespace(getDeviceProperties=lambda device: props)
    fake = SimpleNamespace(cuda=SimpleNamespace(runtime=runtime,
                                                Device=lambda: SimpleNamespace(id=0)))
    backend = CupyBackend(fake)
    peak = backend.peak()
    assert backend.device == "Some GPU"
    assert peak.flops == 2 * 128 * 100 * 1.5e9
    assert peak.bytes_per_s == 2 * 2e9 * 4096 / 8
    assert "non-TF32" in peak.precision
    props["major"] = 99
    assert backend.peak().flops is None and "capability 99.0" in backend.peak().source
