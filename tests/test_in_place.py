"""The opt-in in-place rule: a pointwise op's output goes into its first intermediate argument's
bytes only when that argument dies there with the same aligned size (and layout, where the graph
says); the rewritten graph plans and verifies, keeps the rule in any order it allows, and plans
without the option never change."""

from __future__ import annotations

from pathlib import Path

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.analysis.peak import live_peak
from slabscope.planner.conflicts.in_place import in_place
from slabscope.planner.recording.dataflow import dataflow_lifetimes

STEP = Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json"


def _graph(relu_attrs=None, x_kind="intermediate", y_bytes=1024, late_reader=False):
    """mm makes x; relu (pointwise) reads x and makes y; sum reads y (and x, if `late_reader`)."""
    nodes = [{"name": "mm", "op": "mm", "inputs": ["w"], "outputs": ["x"]},
             {"name": "relu", "op": "relu", "inputs": ["x"], "outputs": ["y"],
              "attrs": {"pointwise": "yes", **(relu_attrs or {})}},
             {"name": "sum", "op": "sum", "inputs": ["y", *(["x"] if late_reader else [])],
              "outputs": ["s"]}]
    buffers = [{"name": "w", "bytes": 4096, "kind": "weight"},
               {"name": "x", "bytes": 1024, "kind": x_kind},
               {"name": "y", "bytes": y_bytes}, {"name": "s", "bytes": 4, "kind": "output"}]
    return planner.graph_from_dict({"nodes": nodes, "buffers": buffers,
                                    "schedule": ["mm", "relu", "sum"]})


def test_the_output_reuses_an_argument_that_dies_there_and_nothing_else():
    shared = in_place(_graph())
    assert shared.merged == {"y": "x"}
    assert shared.graph.buffer("x").uses == ("mm", "relu", "sum")
    assert "y" not in shared.graph.buffer_index
    assert list(live_peak(shared.graph).curve.bytes) == [5120, 1024, 1280]  # relu: 2048 before
    for refused in (_graph(late_reader=True), _graph(y_bytes=2048), _graph(x_kind="input"),
                    _graph(relu_attrs={"pointwise": ""}),
                    _graph(relu_attrs={"same_layout": []})):
        assert in_place(refused).merged == {}
    assert in_place(_graph(relu_attrs={"same_layout": ["x"]})).merged == {"y": "x"}


def test_a_recorded_step_in_place_plans_verifies_and_keeps_the_rule_in_its_best_order():
    freed = dataflow_lifetimes(planner.load(STEP))
    shared = in_place(freed)
    assert len(shared.merged) >= 6  # each ReLU over its linear layer, each ReLU backward too
    assert live_peak(shared.graph).bytes < live_peak(freed).bytes
    best = planner.schedule(shared.graph, iterations=50, budget=2.0)
    ordered = planner.with_schedule(shared.graph, best.order)
    position = {name: i for i, name in enumerate(best.order)}
    nodes = {node.name: node for node in freed.nodes}
    for output, host in shared.merged.items():
        writer = next(n for n in freed.nodes if output in n.outputs).name
        readers = [u for u in freed.buffer(host).uses if u != writer and u in nodes]
        assert all(position[u] < position[writer] for u in readers)  # host read before overwritten
    plan = planner.plan(ordered, conflicts="serial")
    assert planner.verify(ordered, plan).ok


def test_plan_takes_inplace_only_when_asked(capsys):
    assert main(["plan", str(STEP), "--conflicts", "serial"]) == 0
    plain = capsys.readouterr().out
    assert "in place" not in plain
    slab = planner.plan(planner.load(STEP), conflicts="serial").slab_bytes
    assert f"{slab:,}" in plain
    assert main(["plan", str(STEP), "--conflicts", "serial", "--inplace"]) == 0
    assert "outputs written over an argument that dies there" in capsys.readouterr().out


def test_onnx_elementwise_ops_write_over_a_dying_argument_of_the_same_shape(tmp_path):
    onnx = __import__("pytest").importorskip("onnx")
    from onnx import TensorProto, helper

    def value(name, shape):
        return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)

    weight = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], [0.5] * 16)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["a"], name="mm"),
             helper.make_node("Relu", ["a"], ["b"], name="relu"),
             helper.make_node("Tanh", ["b"], ["c"], name="tanh"),
             helper.make_node("ReduceMean", ["c"], ["row"], name="mean", keepdims=1),
             helper.make_node("Mul", ["row", "c"], ["z"], name="scale"),  # row is broadcast
             helper.make_node("MatMul", ["z", "w"], ["y"], name="mm2")]
    model = helper.make_model(helper.make_graph(
        nodes, "chain", [value("x", [4, 4])], [value("y", [4, 4])], [weight],
        value_info=[value("a", [4, 4]), value("b", [4, 4]), value("c", [4, 4]),
                    value("row", [4, 1]), value("z", [4, 4])]))
    path = tmp_path / "chain.onnx"
    onnx.save(model, path)
    shared = in_place(planner.load(path))
    # Relu and Tanh write over their argument. Mul's first argument is broadcast: its 16 bytes
    # align to the same 256 as the output's 64, yet it must not be written over.
    assert shared.merged == {"b": "a", "c": "a"}
    plan = planner.plan(shared.graph)
    assert planner.verify(shared.graph, plan).ok
