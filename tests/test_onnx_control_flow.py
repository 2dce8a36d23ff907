"""ONNX If, Loop and Scan: a tensor a subgraph body reads from the enclosing graph, at any depth,
is a use of the node holding the body, so no plan lets it share bytes with what that node makes."""

import pytest

from slabscope import planner
from slabscope.planner.formats.onnx_import import load_onnx, subgraph_reads

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

# Each load notes the tensors the bodies make; the tests that care read the notes themselves.
pytestmark = pytest.mark.filterwarnings("ignore:.*made inside If, Loop or Scan bodies")

N = 1024  # floats per tensor: 4 KiB each
FLOAT = TensorProto.FLOAT


def vec(name: str, n: int = N):
    return helper.make_tensor_value_info(name, FLOAT, [n])


def scalar(name: str, elem=TensorProto.BOOL):
    return helper.make_tensor_value_info(name, elem, [])


def branch(name: str, op: str, inputs: list[str], output: str = "y"):
    """A subgraph of one node reading `inputs` from the enclosing scope."""
    return helper.make_graph([helper.make_node(op, inputs, [output])], name, [], [vec(output)])


def save(tmp_path, nodes, inputs, name: str):
    """A model of `nodes` (X in, C out) that passes the full checker, saved under `name`; B's
    shape is given (inference cannot tell a Loop's result from its body)."""
    graph = helper.make_graph(nodes, name, inputs, [vec("C")], value_info=[vec("B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    path = tmp_path / f"{name}.onnx"
    onnx.save(model, str(path))
    return path


def prefix(then_cond: bool = False) -> list:
    """A = Relu(X), V = Neg(A) (and cond from V): the node holding the body comes after V's,
    so without the body's read A would die at Neg, free for B to take."""
    nodes = [helper.make_node("Relu", ["X"], ["A"], name="make_a"),
             helper.make_node("Neg", ["A"], ["V"], name="negate")]
    if then_cond:
        nodes += [helper.make_node("ReduceMax", ["V"], ["m"], keepdims=0, name="peak"),
                  helper.make_node("Cast", ["m"], ["cond"], to=TensorProto.BOOL, name="test")]
    return nodes


def if_model(tmp_path):
    """B = If(cond from V) then Add(A, A) else Neg(A); C = Relu(B)."""
    nodes = prefix(then_cond=True) + [
        helper.make_node("If", ["cond"], ["B"], name="choose",
                         then_branch=branch("then", "Add", ["A", "A"]),
                         else_branch=branch("else", "Neg", ["A"])),
        helper.make_node("Relu", ["B"], ["C"], name="finish"),
    ]
    return save(tmp_path, nodes, [vec("X")], "if_reads_outer")


def loop_body(reads: str, inner=None):
    """A Loop body: v_out = Add(v_in, `reads`) (or `inner`'s output), condition passed on."""
    nodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"])]
    if inner is not None:
        nodes.append(inner)
        reads = inner.output[0]
    nodes.append(helper.make_node("Add", ["v_in", reads], ["v_out"]))
    return helper.make_graph(
        nodes, "body",
        [scalar("i", TensorProto.INT64), scalar("cond_in"), vec("v_in")],
        [scalar("cond_out"), vec("v_out")])


def loop_model(tmp_path, body, name: str):
    """B = Loop(trip, cond, V) with `body`; C = Relu(B)."""
    nodes = prefix() + [
        helper.make_node("Loop", ["trip", "cond", "V"], ["B"], name="repeat", body=body),
        helper.make_node("Relu", ["B"], ["C"], name="finish"),
    ]
    inputs = [vec("X"), scalar("trip", TensorProto.INT64), scalar("cond")]
    return save(tmp_path, nodes, inputs, name)


def scan_model(tmp_path):
    """B = Scan over the rows of R from V, each step adding A to the state; C = Relu(B)."""
    body = helper.make_graph(
        [helper.make_node("Add", ["s_in", "A"], ["sum"]),
         helper.make_node("Add", ["sum", "row"], ["s_out"]),
         helper.make_node("Identity", ["row"], ["row_out"])],
        "scan_body", [vec("s_in"), vec("row")], [vec("s_out"), vec("row_out")])
    nodes = prefix() + [
        helper.make_node("Scan", ["V", "R"], ["B", "rows"], name="scan", body=body,
                         num_scan_inputs=1),
        helper.make_node("Relu", ["B"], ["C"], name="finish"),
    ]
    graph = helper.make_graph(nodes, "scan_reads_outer", [vec("X"),
                              helper.make_tensor_value_info("R", FLOAT, [3, N])], [vec("C")],
                              value_info=[vec("B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model, full_check=True)
    path = tmp_path / "scan_reads_outer.onnx"
    onnx.save(model, str(path))
    return path


def nested_if_in_loop(tmp_path):
    """The Loop body holds an If whose branches read A (top level) and T (the body's own)."""
    inner = helper.make_node("If", ["cond_in"], ["picked"],
                             then_branch=branch("then", "Add", ["A", "t"], "z"),
                             else_branch=branch("else", "Sub", ["t", "A"], "z"))
    body = loop_body("picked", None)
    body.node.insert(1, helper.make_node("Relu", ["v_in"], ["t"]))
    body.node.insert(2, inner)
    return loop_model(tmp_path, body, "nested_reads_outer")


MODELS = {
    "if": if_model,
    "loop": lambda tmp: loop_model(tmp, loop_body("A"), "loop_reads_outer"),
    "scan": scan_model,
    "nested": nested_if_in_loop,
}


def holder(graph) -> str:
    """The node that holds the subgraph (the one making B)."""
    return next(n.name for n in graph.nodes if "B" in n.outputs)


@pytest.mark.parametrize("kind", sorted(MODELS))
@pytest.mark.parametrize("algorithm", planner.ALGORITHMS)
def test_a_tensor_read_by_a_body_never_shares_bytes_with_the_result(tmp_path, kind, algorithm):
    graph = planner.load(MODELS[kind](tmp_path))
    a = graph.buffers[graph.buffer_index["A"]]
    assert holder(graph) in a.uses  # the body's read of A is a use by the node holding it
    plan = planner.plan(graph, algorithm=algorithm, budget=1)
    assert planner.verify(graph, plan).ok
    spans = {p.name: (p.offset, p.end) for p in plan.placements}
    (a_lo, a_hi), (b_lo, b_hi) = spans["A"], spans["B"]
    assert a_hi <= b_lo or b_hi <= a_lo, f"A {spans['A']} and B {spans['B']} share bytes"


def test_the_holding_node_reads_the_outer_tensor_and_depends_on_its_producer(tmp_path):
    graph = planner.load(MODELS["loop"](tmp_path))
    node = graph.nodes[graph.node_index["repeat"]]
    assert node.inputs == ("trip", "cond", "V", "A")  # its own inputs, then the body's read
    assert ("make_a", "repeat") in graph.edges


def test_reads_are_collected_at_any_depth_without_the_bodies_own_tensors(tmp_path):
    model = onnx.load(str(MODELS["nested"](tmp_path)))
    loop = next(n for n in model.graph.node if n.op_type == "Loop")
    # A is read two levels down; t and v_in are the body's own; cond_in is the body's input.
    assert subgraph_reads(loop) == ("A",)


def test_an_outer_tensor_nothing_provides_is_a_one_line_error(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["C"], name="choose",
                          then_branch=branch("then", "Relu", ["ghost"]),
                          else_branch=branch("else", "Relu", ["ghost"]))],
        "ghost", [scalar("cond")], [vec("C")])
    path = tmp_path / "ghost.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    with pytest.raises(planner.PlanError) as caught:
        planner.load(path)
    message = str(caught.value)
    assert "\n" not in message and "ghost.onnx" in message


def test_tensors_made_inside_bodies_are_named_in_the_notes_not_planned(tmp_path):
    graph, notes = load_onnx(MODELS["nested"](tmp_path))
    # The body makes cond_out, t, picked and v_out; each If branch makes z.
    assert notes.body_tensors == 6
    assert "6 tensors made inside If, Loop or Scan bodies are not in the slab" in notes.guesses()
    assert {b.name for b in graph.buffers} == {"X", "A", "V", "trip", "cond", "B", "C"}


def test_a_size_past_64_bits_names_the_file_and_the_tensor(tmp_path):
    huge = [2**62]  # 2**62 floats: 2**64 bytes
    graph = helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "huge",
                              [helper.make_tensor_value_info("X", FLOAT, huge)],
                              [helper.make_tensor_value_info("Y", FLOAT, huge)])
    path = tmp_path / "huge.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    for load in (planner.load, load_onnx):
        with pytest.raises(planner.PlanError, match=r"huge\.onnx: tensor '[XY]': 4,611,686,018,"
                                                    r"427,387,904 elements of 4 bytes are past"):
            load(path)
