"""The runner on CuPy: one slab, no allocation during execute, events, peak, graph replay.

Every test is marked `gpu` and skips, with the reason, when CuPy or a device does not answer.
"""

from __future__ import annotations

import json

import pytest

from slabscope import gpu
from slabscope import planner
from slabscope.gpu.binding import bind, build_steps, stage
from slabscope.gpu.execute_order import execute_order
from slabscope.gpu.generators import mlp, transformer
from tests.examples import EXAMPLES, RELU_UNFUSED

pytestmark = pytest.mark.gpu

EXECUTABLE = sorted(p for p in EXAMPLES.glob("*.json")
                    if all(isinstance(n, dict) and "op" in n
                           for n in json.loads(p.read_text())["nodes"]))


@pytest.fixture(scope="module")
def cupy_backend():
    try:
        return gpu.select_backend("cupy")
    except planner.PlanError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("path", EXECUTABLE, ids=lambda p: p.stem)
def test_examples_execute_in_one_slab_and_verify(cupy_backend, path):
    report = gpu.run(path, backend="cupy", repeats=3)
    assert report.backend == "cupy" and report.backend_note is None
    assert report.verification.ok, report.verification.summary()
    assert report.kernel_clock.startswith("CUDA events")
    assert "non-TF32" in report.peak_precision


def test_generated_graphs_verify_on_the_device(cupy_backend):
    for data in (mlp(4, 256, 512), mlp(2, 128, 256, fused=True), transformer(128, 256, 4)):
        report = gpu.run(planner.graph_from_dict(data), backend="cupy", repeats=2)
        assert report.verification.ok, report.verification.summary()


def test_the_guard_refuses_allocations(cupy_backend):
    cupy = cupy_backend.xp
    with cupy_backend.no_allocations(), pytest.raises(gpu.SlabAllocationError):
        cupy.empty(1024, dtype=cupy.float32)


def test_execute_under_the_refusing_allocator(cupy_backend):
    graph = planner.graph_from_dict(transformer(64, 128, 2))
    binding = bind(cupy_backend, graph, planner.plan(graph))
    steps = build_steps(cupy_backend, graph, binding, execute_order(graph), stage(graph))
    for step in steps:
        step.launch()
    with cupy_backend.no_allocations():
        for step in steps:
            step.launch()
    cupy_backend.synchronize()


def test_views_lie_at_their_offsets_in_the_slab(cupy_backend):
    graph = planner.load(RELU_UNFUSED)
    plan = planner.plan(graph)
    binding = bind(cupy_backend, graph, plan)
    base = binding.allocations[0].data.ptr
    for p in plan.placements:
        assert binding.views[p.name].data.ptr - base == p.offset


def test_cupy_copies_overlapping_inputs_but_not_the_same_object(cupy_backend):
    """Why the binding hands out one view object per buffer: CuPy copies an input that overlaps
    an out= array (an allocation) unless it is that very array object."""
    cupy = cupy_backend.xp
    slab = cupy_backend.allocate(4096)
    t = cupy_backend.view(slab, 0, (256,), "float32")
    t[...] = 1
    with cupy_backend.no_allocations():
        cupy.maximum(t, 0, out=t)  # same object: no copy
    alias = cupy_backend.view(slab, 0, (256,), "float32")
    with cupy_backend.no_allocations(), pytest.raises(gpu.SlabAllocationError):
        cupy.maximum(alias, 0, out=t)  # another object over the same bytes: CuPy copies it


def test_in_place_node_runs_under_the_guard(cupy_backend):
    graph = planner.graph_from_dict({
        "nodes": [{"name": "up", "op": "upload", "outputs": ["t"]},
                  {"name": "relu", "op": "relu", "inputs": ["t"], "outputs": ["t"]},
                  {"name": "down", "op": "readback", "inputs": ["t"]}],
        "buffers": [{"name": "t", "shape": [64, 64], "dtype": "float32"}]})
    assert gpu.run(graph, backend="cupy", repeats=2).verification.ok


def test_serial_hazard_is_caught_on_the_device(cupy_backend):

    graph = planner.load(EXAMPLES / "diamond_exec.json")
    report = gpu.run(graph, backend="cupy", repeats=1, plan=planner.plan(graph, conflicts="serial"),
                     execute_order_names=["a", "c", "b", "d", "e"])
    assert [c.buffer for c in report.verification.clobbered] == ["q"]


def test_peak_and_memory_are_reported(cupy_backend):
    report = gpu.run(RELU_UNFUSED, backend="cupy", repeats=2)
    assert report.peak_used_bytes >= report.slab_bytes
    if report.peak_flops:
        matmul = next(k for k in report.kernels if k.op == "matmul")
        assert 0 < matmul.flops_share_of_peak < 1


def test_graph_replay_captures_and_says_what(cupy_backend):
    report = gpu.run(planner.graph_from_dict(mlp(3, 128, 256)), backend="cupy", repeats=5)
    replay = report.replay
    assert replay.available, replay.reason
    assert replay.captured and "upload" in replay.eager and "readback" in replay.eager
    assert replay.replay_seconds > 0 and replay.eager_seconds > 0


def test_out_of_memory_names_the_slab_and_free_memory(cupy_backend):
    free = cupy_backend.free_bytes()
    with pytest.raises(planner.PlanError, match=r"slab needs .* bytes, the device has .* free"):
        cupy_backend.allocate(free * 2)

