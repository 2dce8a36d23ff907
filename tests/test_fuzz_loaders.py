"""Fuzzing every loader: whatever the bytes, `planner.load` returns a graph or raises `PlanError`;
and the runner: edited executable graphs run or raise `PlanError`.

Each property runs a bounded number of examples (a few seconds in all) without a database, so
the suite's time and the tree stay the same from run to run.
"""

from __future__ import annotations

import json
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slabscope import planner
from tests.examples import DIAMOND, EXAMPLES

# ONNX models with symbolic dimensions warn about their guesses; that is not a failure here.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

FUZZ = settings(max_examples=100, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


def load_or_plan_error(path: Path) -> None:
    """Load `path` and, when that works, plan it: anything but PlanError fails the test."""
    try:
        graph = planner.load(path)
    except planner.PlanError as exc:
        assert "\n" not in str(exc), str(exc)
        return
    if len(graph.buffers) <= 64:
        try:
            planner.plan(graph, conflicts=planner.default_conflicts(graph))
        except planner.PlanError as exc:
            assert "\n" not in str(exc), str(exc)


names = st.text(alphabet=string.ascii_letters + "\n\"\\ ,\u00e9", min_size=0, max_size=6)
scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
           | st.floats(allow_nan=False, allow_infinity=False) | names)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(names, inner, max_size=4), max_leaves=20)


def _graph_like():
    """Dicts shaped roughly like graph files: the known keys with random, often wrong, values."""
    node = st.one_of(names, st.fixed_dictionaries({"name": names}, optional={
        "op": st.sampled_from(["relu", "matmul", "upload", "readback", "zz"]) | json_values,
        "inputs": st.lists(names, max_size=3), "outputs": st.lists(names, max_size=3),
        "workspace": st.lists(names, max_size=2), "attrs": json_values}))
    buffer = st.fixed_dictionaries({"name": names}, optional={
        "bytes": st.integers(min_value=-4, max_value=2**66) | json_values,
        "shape": st.lists(st.integers(min_value=-2, max_value=2**33), max_size=4) | json_values,
        "dtype": st.sampled_from(["float32", "uint8", "complex"]) | json_values,
        "uses": st.lists(names, max_size=3), "kind": st.sampled_from(["input", "weight", "zz"])})
    return st.fixed_dictionaries({}, optional={
        "alignment": st.integers(min_value=-1, max_value=2**65) | json_values,
        "nodes": st.lists(node, max_size=5), "buffers": st.lists(buffer, max_size=5),
        "edges": st.lists(st.lists(names, min_size=0, max_size=3), max_size=4) | json_values,
        "order": st.lists(names, max_size=4) | json_values,
        "schedule": st.lists(names, max_size=6) | json_values,
        "bufers": json_values})


@FUZZ
@given(data=json_values | _graph_like())
def test_json_graph_files(tmp_path, data):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    load_or_plan_error(path)


EXAMPLE_TEXTS = [p.read_bytes() for p in sorted(EXAMPLES.glob("*.json"))]


@FUZZ
@given(example=st.sampled_from(EXAMPLE_TEXTS), cuts=st.lists(
    st.tuples(st.integers(min_value=0, max_value=2_000), st.binary(max_size=8)), max_size=4))
def test_mutated_example_files(tmp_path, example, cuts):
    data = bytearray(example)
    for at, piece in cuts:
        at %= len(data) + 1
        data[at:at + len(piece)] = piece
    path = tmp_path / "g.json"
    path.write_bytes(bytes(data))
    load_or_plan_error(path)


cells = st.one_of(st.integers(min_value=-3, max_value=2**66).map(str),
                  st.text(alphabet="0123456789-+ ,\"\n\r\ufeffxé", max_size=6))


@FUZZ
@given(header=st.lists(st.sampled_from(["id", "lower", "upper", "size", "alignment", "offset",
                                        "ID", " size", "\ufeffid", "colour"]),
                       min_size=0, max_size=6),
       rows=st.lists(st.lists(cells, max_size=6), max_size=6))
def test_minimalloc_csv_files(tmp_path, header, rows):
    path = tmp_path / "t.csv"
    text = ",".join(header) + "\n" + "".join(",".join(r) + "\n" for r in rows)
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    load_or_plan_error(path)


def _small_onnx_bytes() -> bytes:
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["h"], name="r"), helper.make_node("Neg", ["h"], ["y"])],
        "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]) \
        .SerializeToString()


@pytest.fixture(scope="module")
def onnx_bytes() -> bytes:
    return _small_onnx_bytes()


@FUZZ
@given(cuts=st.lists(st.tuples(st.integers(min_value=0, max_value=400), st.binary(max_size=6)),
                     max_size=4), tail=st.binary(max_size=16))
def test_onnx_files(tmp_path, onnx_bytes, cuts, tail):
    data = bytearray(onnx_bytes)
    for at, piece in cuts:
        at %= len(data) + 1
        data[at:at + len(piece)] = piece
    path = tmp_path / "m.onnx"
    path.write_bytes(bytes(data) + tail)
    load_or_plan_error(path)


@FUZZ
@given(raw=st.binary(max_size=200))
def test_arbitrary_bytes_under_every_suffix(tmp_path, raw):
    for suffix in (".json", ".csv", ".onnx", ".pickle"):
        if suffix == ".onnx":
            pytest.importorskip("onnx")
        path = tmp_path / f"f{suffix}"
        path.write_bytes(raw)
        load_or_plan_error(path)


def test_the_fuzzed_example_is_itself_loadable():
    assert planner.load(DIAMOND).buffers


def _executable_bases() -> list[dict]:
    from slabscope.gpu.generators import mlp, transformer

    files = [json.loads((EXAMPLES / f"{n}.json").read_text())
             for n in ("relu_unfused", "relu_fused", "diamond_exec")]
    return files + [mlp(2, 4, 8), transformer(4, 8, 2, layers=1)]


EXECUTABLE = _executable_bases()
edit_values = st.one_of(st.integers(min_value=-3, max_value=70), st.floats(allow_nan=False),
                        st.text(max_size=3), st.booleans(), st.none(),
                        st.lists(st.integers(min_value=-1, max_value=5), max_size=4))
edits = st.lists(st.tuples(
    st.sampled_from(["nodes", "buffers"]), st.integers(min_value=0, max_value=100),
    st.sampled_from(["op", "inputs", "outputs", "workspace", "attrs.scale", "attrs.eps",
                     "attrs.transpose_b", "shape", "dtype", "bytes", "kind"]), edit_values),
    max_size=3)


@settings(FUZZ, max_examples=60)
@given(base=st.sampled_from(range(len(EXECUTABLE))), changes=edits)
def test_running_edited_executable_graphs(base, changes):
    """Edited ops, operands, attributes and shapes: the runner raises PlanError or runs."""
    from slabscope import gpu

    data = json.loads(json.dumps(EXECUTABLE[base]))
    for where, i, key, value in changes:
        item = data[where][i % len(data[where])]
        if isinstance(item, dict):
            if key.startswith("attrs."):
                item.setdefault("attrs", {})[key[len("attrs."):]] = value
            else:
                item[key] = value
    try:
        graph = planner.graph_from_dict(data)
        gpu.run(graph, backend="numpy", repeats=1, measure_memory=False, replay=False)
    except planner.PlanError as exc:
        assert "\n" not in str(exc), str(exc)
