"""`slabscope run --inplace`: the plan of the in-place rewrite runs each merged output in its
host's bytes and verifies against a run without reuse and the model's reference; on a .pt2 the
program's own layouts decide, so a view (a transpose) is never written over."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from slabscope import gpu
from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.conflicts.in_place import in_place

PT2 = [Path(__file__).parent / "data" / "pt2" / f"{name}.pt2"
       for name in ("attention", "branches", "mlp")]  # a transpose, two branches, a chain


def _run(source, **kwargs):
    return gpu.run(source, repeats=1, measure_memory=False, replay=False, **kwargs)


@pytest.fixture(scope="module")
def chain(tmp_path_factory) -> Path:
    """x @ W, then Relu, Sigmoid, Tanh and Add of a constant (each elementwise op may write over
    the one before, which dies there), then a matmul down to one column."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"], name="matmul"),
             helper.make_node("Relu", ["h"], ["r"], name="relu"),
             helper.make_node("Sigmoid", ["r"], ["s"], name="sigmoid"),
             helper.make_node("Tanh", ["s"], ["t"], name="tanh"),
             helper.make_node("Add", ["t", "one"], ["a"], name="add"),
             helper.make_node("MatMul", ["a", "V"], ["y"], name="down")]
    graph = helper.make_graph(
        nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [32, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32, 1])],
        [numpy_helper.from_array((rng.standard_normal((8, 64)) / 3).astype(np.float32), "W"),
         numpy_helper.from_array((rng.standard_normal((64, 1)) / 8).astype(np.float32), "V"),
         numpy_helper.from_array(np.asarray(1.0, dtype=np.float32), "one")])
    path = tmp_path_factory.mktemp("onnx") / "chain.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


def test_an_onnx_in_place_plan_runs_in_its_hosts_bytes_and_verifies(chain):
    plain, shared = _run(chain, backend="numpy"), _run(chain, backend="numpy", inplace=True)
    merged = in_place(planner.load(chain)).merged
    assert merged == {"r": "h", "s": "h", "t": "h", "a": "h"}
    for report in (plain, shared):
        assert report.verification.ok, report.verification.summary()
        assert report.verification.model.ok
    assert shared.slab_bytes < plain.slab_bytes
    per_buffer = _run(chain, backend="numpy", inplace=True, layout="per-buffer")
    assert per_buffer.verification.ok and per_buffer.no_reuse_bytes < plain.no_reuse_bytes


def test_cli_run_inplace_says_how_many_outputs_it_merged(chain, capsys):
    assert main(["run", str(chain), "--repeats", "1", "--backend", "numpy", "--inplace"]) == 0
    out = capsys.readouterr().out
    assert f"in place: {len(in_place(planner.load(chain)).merged)} outputs" in out
    assert "verified" in out


def test_a_node_the_program_reads_as_not_laid_out_as_its_output_is_never_merged():
    graph = planner.graph_from_dict({
        "nodes": [{"name": "mm", "op": "mm", "inputs": ["w"], "outputs": ["x"]},
                  {"name": "relu", "op": "relu", "inputs": ["x"], "outputs": ["y"]},
                  {"name": "sum", "op": "sum", "inputs": ["y"], "outputs": ["s"]}],
        "buffers": [{"name": "w", "bytes": 64, "kind": "weight"}, {"name": "x", "bytes": 1024},
                    {"name": "y", "bytes": 1024}, {"name": "s", "bytes": 4, "kind": "output"}],
        "schedule": ["mm", "relu", "sum"]})
    assert in_place(graph).merged == {}  # no pointwise attribute, not an ONNX op
    assert in_place(graph, {"relu": ("x",)}).merged == {"y": "x"}
    assert in_place(graph, {"relu": ()}).merged == {}  # a view: never written over
    assert in_place(graph, {}).merged == {}


@pytest.mark.parametrize("path", PT2, ids=lambda p: p.stem)
def test_every_pt2_fixture_runs_in_place_and_verifies(path):
    pytest.importorskip("torch")
    report = _run(path, backend="torch", inplace=True)
    assert report.verification.ok, report.verification.summary()
    assert report.verification.model is not None and report.verification.model.ok
    if path.stem == "branches":  # relu*2 + sigmoid*3 over the embedding: three merged
        assert report.slab_bytes < _run(path, backend="torch").slab_bytes


def test_a_pt2_transposed_argument_is_never_an_in_place_host():
    pytest.importorskip("torch")
    from slabscope.gpu.torch_program import TorchProgram

    program = TorchProgram(Path(__file__).parent / "data" / "pt2" / "attention.pt2")
    arguments = program.in_place_arguments()
    for node, hosts in arguments.items():
        for arg in program.fx[node].all_input_nodes:
            place = program.places.get(arg.name)
            if place is not None and place.buffer in hosts and place.root == arg.name:
                assert list(place.strides) == sorted(place.strides, reverse=True)
    transposed = [n for n, fx in program.fx.items() if "transpose" in str(fx.target)]
    assert transposed  # the fixture has one, and no host is a view of it
    assert not any(program.places[t].buffer in hosts and program.places[t].root != t
                   for t in transposed for hosts in arguments.values()
                   if t in program.places)
