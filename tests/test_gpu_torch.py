"""`.pt2` programs on a CUDA device: CuPy allocates the slab, torch runs the kernels on it
through DLPack, CUDA events time them.

Every test is marked `gpu` and skips, with the reason, when torch, CuPy or a device is missing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from slabscope import gpu
from slabscope import planner
from slabscope.gpu.binding import bind

pytestmark = pytest.mark.gpu

FIXTURES = sorted((Path(__file__).parent / "data" / "pt2").glob("*.pt2"))


@pytest.fixture(scope="module")
def device():
    try:
        return gpu.select_backend("torch-cuda", ("torch-cuda",), "a .pt2 program")
    except planner.PlanError as exc:
        pytest.skip(str(exc))


@pytest.mark.filterwarnings("ignore::UserWarning")  # the dynamic fixture's symbolic hints
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixtures_run_in_a_cupy_slab_and_match_torch_eager(device, path):
    report = gpu.run(path, backend="torch-cuda", repeats=3)
    assert report.backend == "torch-cuda" and report.backend_note is None
    assert report.kernel_clock.startswith("CUDA events")
    v = report.verification
    assert v.ok and v.model.ok, v.summary()
    assert all(k.seconds > 0 for k in report.kernels if k.op not in ("upload", "readback"))


def test_auto_picks_torch_cuda_for_a_pt2(device):
    report = gpu.run(FIXTURES[0], repeats=1, verify=False, replay=False)
    assert report.backend == "torch-cuda"


def test_torch_sees_the_cupy_slab_without_a_copy(device):
    import cupy

    graph = planner.load(FIXTURES[0])
    plan = planner.plan(graph)
    binding = bind(device, graph, plan)
    slab = binding.allocations[0]
    assert slab.is_cuda and slab.numel() >= plan.slab_bytes
    placed = next(iter(plan.by_name.values()))
    view = binding.views[placed.name]
    assert view.data_ptr() == slab.data_ptr() + placed.offset
    assert cupy.from_dlpack(slab).data.ptr == slab.data_ptr()
