"""With torch: `.pt2` programs executed node by node over views of one slab, verified against a
run without reuse and against torch eager, with per-kernel timings named by op."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from slabscope import gpu  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.app.cli import main  # noqa: E402
from slabscope.gpu.binding import bind  # noqa: E402
from slabscope.gpu.execute_order import execute_order  # noqa: E402
from slabscope.gpu.torch_program import TorchProgram, _NodeLaunch, out_overload  # noqa: E402

FIXTURES = sorted((Path(__file__).parent / "data" / "pt2").glob("*.pt2"))
MLP = Path(__file__).parent / "data" / "pt2" / "mlp.pt2"
INPLACE = Path(__file__).parent / "data" / "pt2" / "inplace.pt2"
STATEFUL = Path(__file__).parent / "data" / "pt2" / "stateful.pt2"


def quick_run(source, **kwargs):
    kwargs.setdefault("repeats", 1)
    kwargs.setdefault("measure_memory", False)
    kwargs.setdefault("replay", False)
    return gpu.run(source, backend="torch", **kwargs)


@pytest.fixture
def branches() -> Path:
    """Token ids through an embedding, then relu*2 + sigmoid*3: two branches whose temporaries
    a serial plan lets share bytes (tests/data/pt2/make_fixtures.py)."""
    return Path(__file__).parent / "data" / "pt2" / "branches.pt2"


@pytest.mark.filterwarnings("ignore::UserWarning")  # the dynamic fixture's symbolic hints
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_every_pt2_fixture_runs_in_one_slab_and_matches_both_references(path):
    report = quick_run(path)
    assert report.backend == "torch" and report.layout == "slab"
    assert report.allocated_bytes == report.slab_bytes
    v = report.verification
    assert v.ok, v.summary()
    assert v.model is not None and v.model.ok and v.model.outputs >= 1
    assert "torch eager" in v.summary() and "float32 1e-04" in v.summary()
    ops = {k.op for k in report.kernels} - {"upload", "readback"}
    assert ops and all(op.startswith("aten.") for op in ops)
    assert [k.node for k in report.kernels] == list(report.execute_order)


def test_weights_go_into_the_slab_with_include_weights():
    outside, inside = quick_run(MLP), quick_run(MLP, include_weights=True)
    assert inside.verification.ok and inside.verification.model.ok
    graph = planner.load(MLP, include_weights=True)
    weights = sum(r for b, r in zip(graph.buffers, graph.reserved) if b.kind == "weight")
    assert weights > 0 and inside.no_reuse_bytes == outside.no_reuse_bytes + weights


def test_new_results_are_written_through_out_overloads_and_views_share_their_base():
    assert out_overload(torch.ops.aten.linear.default) is not None
    assert out_overload(torch.ops.aten.add_.Tensor) is None  # in place: it is run as it is
    program = TorchProgram(INPLACE)
    graph = program.graph
    plan = planner.plan(graph)
    backend = gpu.select_backend("torch", ("torch",))
    binding = bind(backend, graph, plan)
    values = program.values(backend, binding)
    slab = binding.allocations[0]
    clone = plan.by_name["aten.clone"].offset
    for name in ("clone", "mul_", "slice_1", "add_", "relu_"):  # one buffer for the chain
        assert values[name].data_ptr() == slab.data_ptr() + clone
    steps = program.build_steps(backend, graph, binding, execute_order(graph),
                                program.stage(graph))
    launches = {s.node.name: s.launch for s in steps if isinstance(s.launch, _NodeLaunch)}
    assert launches["clone"].out is not None and launches["sum_1"].out is not None
    assert launches["mul_"].out is None  # in place


def test_integer_inputs_stay_below_what_they_index(branches):
    program = TorchProgram(branches)
    ids = program.stage(program.graph).inputs["ids"]
    assert ids.dtype == np.int64 and ids.shape == (4, 16)
    assert 0 <= ids.min() and ids.max() < 5 and len(np.unique(ids)) == 5
    assert quick_run(branches).verification.ok


def test_a_serial_plan_run_in_another_order_is_caught(branches):
    graph = planner.load(branches)
    plan = planner.plan(graph, conflicts="serial")
    assert plan.by_name["aten.relu"].offset == plan.by_name["aten.sigmoid"].offset
    made_for = quick_run(graph, plan=plan, model=branches)
    assert made_for.verification.ok
    report = quick_run(graph, plan=plan, model=branches,
                       execute_order_names=["embedding", "relu", "sigmoid", "mul", "mul_1"])
    v = report.verification
    assert not v.ok and not v.model.ok
    assert ("aten.relu", "mul") in {(c.buffer, c.read_by) for c in v.clobbered}


def test_an_op_that_cannot_run_is_one_line_naming_node_and_op(monkeypatch, capsys):
    import operator

    program = TorchProgram(MLP)
    program.fx["relu"].target = operator.neg
    with pytest.raises(planner.PlanError, match=r"node 'relu' \(aten.relu\) cannot run: .*not an "
                                                r"ATen op"):
        program.check(program.graph)

    def fail(self):
        raise RuntimeError("no kernel for this dtype\nsecond line")
    monkeypatch.setattr(_NodeLaunch, "__call__", fail)
    assert main(["run", str(MLP), "--repeats", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "node 'linear' (aten.linear) cannot run: RuntimeError: no kernel" \
        in err


def test_cli_run_names_the_backend_it_picked_and_the_tolerances(capsys):
    assert main(["run", str(MLP), "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    for text in ("mlp on torch (torch ", "nodes run by torch.export program", "using torch: ",
                 "aten.linear", "verified: outputs match the per-buffer reference",
                 "match torch eager", "relative tolerance float32 1e-04"):
        assert text in out, text
    assert main(["run", str(MLP), "--backend", "numpy"]) == 2
    assert "backend numpy cannot run torch.export" in capsys.readouterr().err


def test_per_buffer_layout_runs_the_same_program():
    report = quick_run(MLP, layout="per-buffer", verify=False)
    assert report.layout == "per-buffer" and report.allocated_bytes >= report.no_reuse_bytes


@pytest.mark.parametrize("name", ["stateful", "stateful_core"])
@pytest.mark.parametrize("include_weights", [False, True])
def test_every_execute_starts_from_the_weights_and_inputs_as_loaded(name, include_weights):
    # stateful.pt2 writes its buffer `seen` and its input x in place (stateful_core returns
    # the buffer's update, which the eager module applies); a keyword input and a None argument
    path = STATEFUL.with_name(f"{name}.pt2")
    program = TorchProgram(path, include_weights)
    assert set(program.initial) == {"b_seen"} and program.arguments[-1] == (None,)
    for _ in range(2):  # the program is cached between runs: nothing may carry over
        report = quick_run(path, repeats=3, include_weights=include_weights)
        assert report.verification.ok, report.verification.summary()
    assert not program.ep.state_dict["seen"].any()  # the loaded buffer itself is never written


def test_in_place_ops_run_on_tensors_that_are_not_views_of_the_slab():
    # torch refuses `detach_` on a view; stateful.pt2 detaches a lifted constant's fresh copy
    program = TorchProgram(STATEFUL)
    assert any(fx.target is torch.ops.aten.detach_.default for fx in program.ep.graph.nodes)
    backend = gpu.select_backend("torch", ("torch",))
    values = program.values(backend, bind(backend, program.graph, planner.plan(program.graph)))
    assert all(value._base is None for value in values.values())
