"""Importers: ONNX models (shape inference, weights, unknown dimensions) and MiniMalloc CSV."""

import json
import math
import sys
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.formats.minimalloc_csv import (load_minimalloc_csv, read_minimalloc_offsets,
                                                      write_minimalloc_csv)
from slabscope.planner.formats.onnx_import import load_onnx
from tests.examples import RELU_UNFUSED

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

LIGHT_MODELS = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light"
SQUEEZENET = LIGHT_MODELS / "light_squeezenet.onnx"


def _save(model, path: Path) -> Path:
    onnx.save(model, str(path))
    return path


def _tiny_model(path: Path, batch="N") -> Path:
    """x[batch, 4] -> Relu -> Add(+ a Constant) -> y: one symbolic dimension, one folded constant."""
    nodes = [
        helper.make_node("Relu", ["x"], ["h"]),  # no name: the importer makes one up
        helper.make_node("Constant", [], ["c"], value=helper.make_tensor(
            "c", TensorProto.FLOAT, [4], [1.0, 2.0, 3.0, 4.0])),
        helper.make_node("Add", ["h", "c"], ["y"], name="add"),
    ]
    graph = helper.make_graph(
        nodes, "tiny",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 4])],
    )
    return _save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


@pytest.mark.skipif(not SQUEEZENET.exists(), reason="onnx ships without its light test models")
def test_squeezenet_activation_bytes_match_inferred_shapes():
    model = onnx.shape_inference.infer_shapes(onnx.load(str(SQUEEZENET)))
    g = model.graph
    initializers = {t.name for t in g.initializer}
    types = {v.name: v.type.tensor_type for v in [*g.input, *g.value_info, *g.output]}
    # In squeezenet only ConstantOfShape nodes compute from initializers alone.
    activations = [v.name for v in g.input if v.name not in initializers]
    activations += [t for n in g.node if n.op_type != "ConstantOfShape" for t in n.output]
    expected = 0
    for name in activations:
        if name in types:
            itemsize = helper.tensor_dtype_to_np_dtype(types[name].elem_type).itemsize
            expected += itemsize * int(math.prod(d.dim_value for d in types[name].shape.dim))

    graph, notes = load_onnx(SQUEEZENET)
    guessed = set(notes.unknown_types)  # e.g. Dropout's unused mask output, typed by no one
    assert sum(b.bytes for b in graph.buffers if b.name not in guessed) == expected
    assert {b.kind for b in graph.buffers} == {"input", "intermediate", "output"}
    assert len(graph.buffers) == len(activations)
    assert planner.verify(graph, planner.plan(graph)).ok


@pytest.mark.skipif(not SQUEEZENET.exists(), reason="onnx ships without its light test models")
def test_weights_stay_out_unless_included():
    without, notes = load_onnx(SQUEEZENET)
    with_weights, notes_with = load_onnx(SQUEEZENET, include_weights=True)
    weights = [b for b in with_weights.buffers if b.kind == "weight"]
    assert not any(b.kind == "weight" for b in without.buffers)
    assert len(weights) == notes.weights == 52 and notes_with.weights_included
    assert sum(b.bytes for b in weights) == notes.weight_bytes
    assert all(b.uses[0] == "upload" for b in weights)
    assert len(notes.folded_nodes) == 39  # the ConstantOfShape nodes that make the weights
    assert planner.plan(with_weights).slab_bytes > planner.plan(without).slab_bytes


def test_symbolic_dimensions_become_1_and_are_reported(tmp_path):
    graph, notes = load_onnx(_tiny_model(tmp_path / "tiny.onnx"))
    assert notes.unknown_dims == ("x", "h", "y")
    assert "3 tensors: x, h, y" in notes.guesses()
    assert [(b.name, b.bytes, b.shape, b.kind) for b in graph.buffers] == [
        ("x", 16, (1, 4), "input"), ("h", 16, (1, 4), "intermediate"), ("y", 16, (1, 4), "output")]
    with pytest.warns(UserWarning, match="unknown dimensions taken as 1 in 3 tensors"):
        planner.load(tmp_path / "tiny.onnx")


def test_onnx_nodes_edges_uses_and_request_order(tmp_path):
    graph, notes = load_onnx(_tiny_model(tmp_path / "tiny.onnx", batch=2))
    assert notes.guesses() == "" and notes.folded_nodes == ("Constant_1",)
    assert graph.schedule == ("upload", "Relu_0", "add", "readback")
    assert set(graph.edges) == {("upload", "Relu_0"), ("Relu_0", "add"), ("add", "readback")}
    assert {b.name: b.uses for b in graph.buffers} == {
        "x": ("upload", "Relu_0"), "h": ("Relu_0", "add"), "y": ("add", "readback")}
    assert graph.order == ("x", "h", "y")
    included, _ = load_onnx(tmp_path / "tiny.onnx", include_weights=True)
    assert included.buffer("c").kind == "weight" and included.buffer("c").uses == ("upload", "add")
    assert included.buffer("c").bytes == 16


def test_onnx_load_problems_are_plan_errors(tmp_path, monkeypatch):
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\xff\x00 not a model")
    with pytest.raises(planner.PlanError, match="junk.onnx: not an ONNX model"):
        planner.load(junk)
    monkeypatch.setitem(sys.modules, "onnx", None)  # as if the extra were not installed
    with pytest.raises(planner.PlanError, match=r"pip install 'slabscope\[onnx\]'"):
        planner.load(junk)


CSV_TEXT = "id,lower,upper,size\nb1,0,3,4\nb2,3,9,4\nb3,0,9,4\nb4,9,21,4\nb5,0,21,4\n"


def test_csv_loads_as_a_chain_of_compressed_time_points(tmp_path):
    path = tmp_path / "input.12.csv"
    path.write_text(CSV_TEXT)
    graph = planner.load(path)
    assert graph.schedule == ("t0", "t2", "t3", "t8", "t9", "t20")
    assert graph.buffer("b2").uses == ("t3", "t8") and graph.alignment == 1
    assert planner.default_conflicts(graph) == "serial"
    assert "reachability" not in graph.__dict__  # the closure is quadratic on long chains
    assert planner.plan(graph).slab_bytes == 12


def test_csv_round_trip_keeps_intervals_and_offsets(tmp_path):
    source = tmp_path / "in.csv"
    source.write_text(CSV_TEXT)
    graph = load_minimalloc_csv(source)
    plan = planner.plan(graph, order=["b5", "b3"])
    out = tmp_path / "out.csv"
    write_minimalloc_csv(graph, plan, out)
    assert read_minimalloc_offsets(out) == {p.name: p.offset for p in plan.placements}
    rows = sorted(out.read_text().splitlines()[1:])
    assert rows == sorted(f"{line},{plan.by_name[line.split(',')[0]].offset}"
                          for line in CSV_TEXT.splitlines()[1:])
    again = load_minimalloc_csv(out)
    assert again.order == plan.order and planner.plan(again).slab_bytes == plan.slab_bytes


def test_dag_plan_exports_as_intervals_it_respects(tmp_path):
    graph = planner.load(RELU_UNFUSED)
    plan = planner.plan(graph)
    out = tmp_path / "relu.csv"
    write_minimalloc_csv(graph, plan, out)
    exported = load_minimalloc_csv(out)
    assert exported.alignment == 256
    rows = {line.split(",")[0]: [int(v) for v in line.split(",")[1:]]
            for line in out.read_text().splitlines()[1:]}
    for a, (lo_a, hi_a, _, _, at_a) in rows.items():
        for b, (lo_b, hi_b, _, _, at_b) in rows.items():
            if a < b and lo_a < hi_b and lo_b < hi_a:  # live together in the exported order
                ra, rb = graph.reserved[graph.buffer_index[a]], graph.reserved[graph.buffer_index[b]]
                assert at_a + ra <= at_b or at_b + rb <= at_a, (a, b)


@pytest.mark.parametrize("text, message", [
    ("id,lower,size\n1,0,4\n", "header lacks column 'upper'"),
    ("id,lower,upper,size,colour\n1,0,2,4,red\n", "unknown column 'colour'"),
    ("id,lower,upper,size\n1,0,2,four\n", "line 2: size must be an integer, got 'four'"),
    ("id,lower,upper,size\n1,0,2,4\n1,2,3,4\n", "line 3: duplicate id '1'"),
    ("id,lower,upper,size\n1,5,5,4\n", "line 2: buffer '1' has upper 5 <= lower 5"),
    ("id,lower,upper,size\n1,0,2,-4\n", "size -4 is out of range"),
    ("id,lower,upper,size\n1,0,2\n", "line 2: expected 4 fields, got 3"),
    ("id,lower,upper,size,alignment\n1,0,2,4,8\n2,0,2,4,16\n", "different alignments [8, 16]"),
    ("", "empty file"),
])
def test_malformed_csv_is_a_one_line_plan_error(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(planner.PlanError) as caught:
        planner.load(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_large_csv_loads_without_the_closure(tmp_path):
    rows = [f"{i},{i},{i + 3},{64 + i % 7}" for i in range(60_000)]
    path = tmp_path / "long.csv"
    path.write_text("id,lower,upper,size\n" + "\n".join(rows) + "\n")
    graph = planner.load(path)
    assert len(graph.buffers) == 60_000 and len(graph.nodes) == 60_002
    assert "reachability" not in graph.__dict__


def test_cli_plans_csv_and_onnx_files(tmp_path, capsys):
    csv_path = tmp_path / "input.12.csv"
    csv_path.write_text(CSV_TEXT)
    assert main(["plan", str(csv_path)]) == 0
    out = capsys.readouterr().out
    assert "input.12: 5 buffers, 6 nodes, alignment 1" in out and "slab bytes" in out

    model = _tiny_model(tmp_path / "tiny.onnx")
    assert main(["plan", str(model), "--json"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert [p["name"] for p in data["placements"]] == ["x", "h", "y"]
    assert "slabscope: warning: tiny.onnx: unknown dimensions taken as 1" in captured.err

    assert main(["plan", str(model), "--json", "--include-weights"]) == 0
    names = [p["name"] for p in json.loads(capsys.readouterr().out)["placements"]]
    assert "c" in names


def test_cli_reports_a_bad_csv_on_stderr(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("id,lower,upper,size\n1,0,x,4\n")
    assert main(["plan", str(bad)]) == 2
    assert "line 2: upper must be an integer, got 'x'" in capsys.readouterr().err
