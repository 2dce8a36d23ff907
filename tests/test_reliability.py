"""Hostile inputs to the planner and the runner: each is a one-line `PlanError`, never a hang,
a traceback or a wrong answer with exit 0. One test per class of input."""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace

import numpy as np
import pytest

from slabscope import planner
from slabscope.planner.formats.minimalloc_csv import read_minimalloc_offsets, write_minimalloc_csv
from slabscope.planner.formats.safety.input_limits import DIMENSIONS_LIMIT, NESTING_LIMIT, read_bytes
from tests.examples import DIAMOND, RELU_UNFUSED

SIZE_LIMIT = 2**64 - 1


def one_line_error(path_or_data) -> str:
    """The PlanError message loading (a path) or validating (a dict) gives; it must be one line."""
    with pytest.raises(planner.PlanError) as caught:
        if isinstance(path_or_data, dict):
            planner.graph_from_dict(path_or_data)
        else:
            planner.load(path_or_data)
    message = str(caught.value)
    assert "\n" not in message
    return message


def graph_file(tmp_path, text: str, name: str = "g.json"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


MINIMAL = {"nodes": ["a"], "buffers": [{"name": "x", "bytes": 4, "uses": ["a"]}]}


# --- JSON content -------------------------------------------------------------------------------

def test_deep_nesting_is_refused_without_recursion(tmp_path):
    for depth in (NESTING_LIMIT + 1, 1_000, 100_000):
        path = graph_file(tmp_path, "[" * depth + "]" * depth)
        assert "nests deeper than the limit" in one_line_error(path)


def test_integers_of_thousands_of_digits_are_refused(tmp_path):
    path = graph_file(tmp_path, '{"alignment": ' + "9" * 5_000 + "}")
    assert "5,000 digits is over the 40-digit limit" in one_line_error(path)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_are_refused(tmp_path, constant):
    path = graph_file(tmp_path, '{"nodes": ["a"], "alignment": ' + constant + "}")
    assert str(path) in one_line_error(path)


def test_a_key_given_twice_is_refused(tmp_path):
    path = graph_file(tmp_path, '{"nodes": ["a"], "buffers": [], "buffers": []}')
    assert "key 'buffers' appears twice in one object" in one_line_error(path)


@pytest.mark.parametrize("data, message", [
    ({"hello": "world"}, "unknown key 'hello'; known: description, alignment"),
    ({**MINIMAL, "bufers": []}, "unknown key 'bufers'; did you mean 'buffers'?"),
    ({"nodes": ["a"], "buffers": [{"name": "x", "byts": 4, "uses": ["a"]}]},
     "buffer 'x': unknown key 'byts'; did you mean 'bytes'?"),
    ({"nodes": [{"name": "a", "ouputs": []}], "buffers": []},
     "node 'a': unknown key 'ouputs'; did you mean 'outputs'?"),
    ({}, "not a graph"),
])
def test_objects_that_are_not_graphs_and_misspelled_keys(data, message):
    assert message in one_line_error(data)


def test_names_must_be_valid_unicode(tmp_path):
    path = graph_file(tmp_path, '{"nodes": ["a"], "buffers": [{"name": "x\\ud800", "bytes": 4, '
                                '"uses": ["a"]}]}')
    assert "lone surrogate" in one_line_error(path)
    # The message itself prints: the surrogate is escaped, not embedded.
    one_line_error(path).encode("utf-8")


def test_names_with_newlines_stay_on_one_line():
    data = {"nodes": ["a\nb"], "buffers": [{"name": "x\ny", "bytes": -1, "uses": ["a\nb"]}]}
    assert "'x\\ny'" in one_line_error(data)


def test_a_shape_of_200000_dimensions_is_refused_quickly():
    data = {"nodes": ["a"], "buffers": [{"name": "x", "shape": [2] * 200_000, "dtype": "uint8",
                                         "uses": ["a"]}]}
    assert f"over the limit of {DIMENSIONS_LIMIT}" in one_line_error(data)


def test_a_shape_whose_product_overflows_64_bits_is_refused():
    data = {"nodes": ["a"], "buffers": [{"name": "x", "shape": [2**40, 2**40], "dtype": "uint8",
                                         "uses": ["a"]}]}
    assert "element count exceeds" in one_line_error(data)


def test_alignment_overflow_names_file_and_buffer(tmp_path):
    path = graph_file(tmp_path, json.dumps({"alignment": 2**63, "nodes": ["a"], "buffers": [
        {"name": "big", "bytes": 2**63 + 1, "uses": ["a"]}]}))
    message = one_line_error(path)
    assert str(path) in message and "'big'" in message and "overflows" in message


# --- files that are not files -------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".json", ".csv", ".onnx"])
def test_fifos_devices_and_folders_are_refused_before_reading(tmp_path, suffix):
    if suffix == ".onnx":
        pytest.importorskip("onnx")
    folder = tmp_path / f"folder{suffix}"
    folder.mkdir()
    assert "a folder, not a regular file" in one_line_error(folder)
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / f"pipe{suffix}"
        os.mkfifo(fifo)
        assert "a FIFO, not a regular file" in one_line_error(fifo)  # without blocking on it
    if os.path.exists("/dev/zero"):
        device = tmp_path / f"zero{suffix}"
        device.symlink_to("/dev/zero")
        assert "a device, not a regular file" in one_line_error(device)


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_utf16_text_is_named_as_such(tmp_path, suffix):
    path = tmp_path / f"g{suffix}"
    path.write_text('{"nodes": []}' if suffix == ".json" else "id,lower,upper,size\n",
                    encoding="utf-16")
    assert "UTF-16 text" in one_line_error(path)


def test_files_over_the_size_cap_are_refused_before_reading(tmp_path):
    path = graph_file(tmp_path, "x" * 11)
    assert read_bytes(path, limit=11) == b"x" * 11
    with pytest.raises(planner.PlanError, match="11 bytes is over the 10-byte limit"):
        read_bytes(path, limit=10)


def test_a_nul_in_the_path_is_a_plan_error():
    assert "not a valid path" in one_line_error("bad\0name.json")


# --- schedules ----------------------------------------------------------------------------------

@pytest.mark.parametrize("schedule, message", [
    (["a", "b", "b", "c", "d"], "lists node 'b' twice"),
    (["a", "b", "c"], "misses node 'd'"),
    (["a", "d", "b", "c"], "runs 'd' before"),
    (["a", "b", "c", "zz", "d"], "unknown node 'zz'"),
])
def test_a_schedule_that_is_not_a_topological_order_is_a_load_error(schedule, message):
    data = json.loads(DIAMOND.read_text())
    data["schedule"] = schedule
    assert message in one_line_error(data)


def test_csv_export_refuses_a_bad_schedule_instead_of_writing_overlaps(tmp_path):
    graph = planner.load(DIAMOND)
    result = planner.plan(graph)  # a dag plan: valid for every topological order, only those
    bad = replace(graph, schedule=tuple(reversed([n.name for n in graph.nodes])))
    with pytest.raises(planner.PlanError, match="schedule runs"):
        write_minimalloc_csv(bad, result, tmp_path / "out.csv")
    assert not (tmp_path / "out.csv").exists()


# --- MiniMalloc CSV -----------------------------------------------------------------------------

def test_a_byte_order_mark_before_the_header_is_ignored(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_text("id,lower,upper,size\nx,0,2,4\n", encoding="utf-8-sig")
    assert [b.name for b in planner.load(path).buffers] == ["x"]


@pytest.mark.parametrize("row, message", [
    (f"x,0,2,4,{2**64}", "offset 18446744073709551616 is out of range"),
    ("x,0,2,4,-1", "offset -1 is out of range"),
    ("x,0,2," + "9" * 5_000 + ",0", "5,000 characters, over the 40-digit limit"),
])
def test_csv_offsets_and_sizes_stay_in_64_bits(tmp_path, row, message):
    path = tmp_path / "t.csv"
    path.write_text("id,lower,upper,size,offset\n" + row + "\n")
    with pytest.raises(planner.PlanError, match=message):
        read_minimalloc_offsets(path)


@pytest.mark.parametrize("size", ["1_000", "\u0664", "0x10", "4.0"])
def test_csv_integers_are_plain_ascii_digits(tmp_path, size):
    path = tmp_path / "t.csv"
    path.write_text(f"id,lower,upper,size\nx,0,2,{size}\n", encoding="utf-8")
    assert "size must be an integer" in one_line_error(path)


def test_csv_alignment_overflow_names_the_file_line_and_buffer(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(f"id,lower,upper,size,alignment\nsmall,0,2,4,{2**63}\n"
                    f"huge,0,2,{SIZE_LIMIT},{2**63}\n")
    message = one_line_error(path)
    assert str(path) in message and "line 3" in message and "'huge'" in message


# --- 64-bit plans -------------------------------------------------------------------------------

def _all_live_csv(tmp_path, rows: int, size: int):
    path = tmp_path / f"live_{rows}_{size.bit_length()}.csv"
    path.write_text("id,lower,upper,size\n" + "".join(f"b{i},0,10,{size}\n" for i in range(rows)))
    return path


def test_a_slab_past_64_bits_is_an_error_not_a_wrapped_plan(tmp_path):
    # 2,001 buffers live at once: over two million conflicting pairs, the untraced path.
    graph = planner.load(_all_live_csv(tmp_path, 2_001, 2**60))
    with pytest.raises(planner.PlanError, match="past the 64-bit offset limit"):
        planner.plan(graph, conflicts="serial")
    two = planner.load(_all_live_csv(tmp_path, 2, 2**63))
    with pytest.raises(planner.PlanError, match="past the 64-bit offset limit"):
        planner.plan(two, conflicts="serial", algorithm="search", budget=0.1)


def test_sizes_too_big_for_the_int64_kernels_are_placed_exactly(tmp_path):
    # Their sum passes 2^62, so the kernels could overflow; the plan must still stack them.
    graph = planner.load(_all_live_csv(tmp_path, 2_001, 2**52))
    result = planner.plan(graph, conflicts="serial")
    assert sorted(p.offset for p in result.placements) == [i * 2**52 for i in range(2_001)]
    assert result.slab_bytes == planner.lower_bound(graph, "serial").bytes == 2_001 * 2**52


def test_a_capacity_past_64_bits_is_refused():
    with pytest.raises(planner.PlanError, match="capacity 18446744073709551616 exceeds"):
        planner.plan(planner.load(RELU_UNFUSED), capacity=2**64)


@pytest.mark.parametrize("budget", [math.nan, math.inf, -1.0])
def test_a_budget_that_never_ends_is_refused(budget):
    with pytest.raises(planner.PlanError, match="budget must be a finite number"):
        planner.plan(planner.load(RELU_UNFUSED), algorithm="search", budget=budget)


# --- ONNX ---------------------------------------------------------------------------------------

def _onnx_model(tmp_path, nodes, inputs, outputs, name="m.onnx"):
    onnx = pytest.importorskip("onnx")
    from onnx import helper

    graph = helper.make_graph(nodes, "g", inputs, outputs)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path / name
    onnx.save(model, str(path))
    return path


def test_onnx_dimension_minus_one_is_unknown_not_negative_bytes(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    path = _onnx_model(tmp_path, [helper.make_node("Relu", ["x"], ["y"], name="r")],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [-1, 4])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [-1, 4])])
    from slabscope.planner.formats.onnx_import import load_onnx

    graph, notes = load_onnx(path)
    assert all(b.bytes > 0 for b in graph.buffers)
    assert "x" in notes.unknown_dims
    del onnx


def test_onnx_errors_name_the_file(tmp_path):
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    shape = [1] * (DIMENSIONS_LIMIT + 1)
    path = _onnx_model(tmp_path, [helper.make_node("Relu", ["x"], ["y"], name="r")],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    message = one_line_error(path)
    assert message.startswith(str(path)) and "dimensions is over the limit" in message


def test_an_empty_onnx_file_is_not_an_empty_model(tmp_path):
    pytest.importorskip("onnx")
    path = tmp_path / "empty.onnx"
    path.write_bytes(b"")
    assert "empty file, not an ONNX model" in one_line_error(path)


def test_an_onnx_tensor_written_by_two_nodes_is_refused(tmp_path):
    pytest.importorskip("onnx")
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Relu", ["x"], ["y"], name="first"),
             helper.make_node("Neg", ["x"], ["y"], name="second")]
    path = _onnx_model(tmp_path, nodes,
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    message = one_line_error(path)
    assert "tensor 'y' is written by both node 'first' and node 'second'" in message


# --- running ------------------------------------------------------------------------------------

def _executable(nodes, buffers) -> planner.Graph:
    return planner.graph_from_dict({"alignment": 64, "nodes": nodes, "buffers": buffers})


def _quick_run(graph):
    from slabscope import gpu

    return gpu.run(graph, backend="numpy", repeats=1, measure_memory=False, replay=False)


def test_an_input_no_node_writes_is_refused_before_running():
    graph = _executable(
        [{"name": "n", "op": "relu", "inputs": ["a"], "outputs": ["b"]},
         {"name": "out", "op": "readback", "inputs": ["b"]}],
        [{"name": "a", "shape": [4], "dtype": "float32"},
         {"name": "b", "shape": [4], "dtype": "float32"}])
    with pytest.raises(planner.PlanError, match="reads buffer 'a', which no other node writes"):
        _quick_run(graph)


def test_verification_counts_nan_and_inf_as_differences():
    from slabscope.gpu.verification import max_abs_diff, output_diff

    assert max_abs_diff(np.array([math.nan, 5.0]), np.array([1.0, 1.0])) == math.inf
    assert max_abs_diff(np.array([math.inf]), np.array([1.0])) == math.inf
    assert max_abs_diff(np.array([math.nan]), np.array([math.nan])) == 0.0  # same read twice
    assert output_diff(np.array([math.nan]), np.array([math.nan])) == math.inf
    assert output_diff(np.array([1.0, 2.0]), np.array([1.0, 2.5])) == 0.5


def test_a_nan_output_fails_the_run_and_its_json_stays_valid(monkeypatch):
    # NaN inputs give NaN outputs in the slab and the reference alike: NaN - NaN is NaN, which
    # is never over a tolerance, so such a run used to verify.
    graph = _executable(
        [{"name": "up", "op": "upload", "outputs": ["a"]},
         {"name": "r", "op": "relu", "inputs": ["a"], "outputs": ["b"]},
         {"name": "out", "op": "readback", "inputs": ["b"]}],
        [{"name": "a", "shape": [4], "dtype": "float32"},
         {"name": "b", "shape": [4], "dtype": "float32"}])
    from slabscope.gpu import program

    real_stage = program.stage

    def nan_inputs(g):
        staging = real_stage(g)
        staging.inputs["a"][:] = math.nan
        return staging

    monkeypatch.setattr(program, "stage", nan_inputs)  # what the built-in ops stage
    report = _quick_run(graph)
    assert not report.verification.ok and report.verification.differing == ("b",)
    json.dumps(report.to_dict(), allow_nan=False)


@pytest.mark.parametrize("node, buffers, message", [
    ({"name": "m", "op": "matmul", "inputs": ["a", "w"], "outputs": ["b"],
      "attrs": {"scale": "2"}},
     [("a", [2, 2]), ("w", [2, 2]), ("b", [2, 2])], "attribute 'scale' must be a finite number"),
    ({"name": "n", "op": "layernorm", "inputs": ["a"], "outputs": ["b"], "workspace": ["ws"],
      "attrs": {"eps": "1e-5"}},
     [("a", [2, 4]), ("b", [2, 4])], "attribute 'eps' must be a positive finite number"),
    ({"name": "m", "op": "matmul", "inputs": ["a", "w"], "outputs": ["b"],
      "attrs": {"transpose_b": "no"}},
     [("a", [2, 2]), ("w", [2, 2]), ("b", [2, 2])], "'transpose_b' must be true or false"),
    ({"name": "r", "op": "relu", "inputs": ["a"], "outputs": ["b"], "attrs": {"alpha": 1}},
     [("a", [2]), ("b", [2])], "unknown attribute 'alpha'"),
    ({"name": "s", "op": "softmax", "inputs": ["a"], "outputs": ["b"], "workspace": ["ws"]},
     [("a", []), ("b", [])], "needs at least one dimension"),
    ({"name": "s", "op": "softmax", "inputs": ["a"], "outputs": ["b"], "workspace": ["ws"]},
     [("a", [3, 0]), ("b", [3, 0])], "non-empty last one"),
    ({"name": "ab", "op": "add_bias", "inputs": ["a", "w"], "outputs": ["b"]},
     [("a", []), ("w", [1]), ("b", [])], "a bias needs an output of at least one dimension"),
])
def test_ops_refuse_bad_attributes_and_shapes_before_running(node, buffers, message):
    inputs = [n for n in node["inputs"]]
    nodes = [{"name": "up", "op": "upload", "outputs": inputs}, node,
             {"name": "out", "op": "readback", "inputs": node["outputs"]}]
    data = [{"name": n, "shape": s, "dtype": "float32"} for n, s in buffers]
    if "workspace" in node:
        data.append({"name": "ws", "bytes": 4096, "kind": "workspace"})
    with pytest.raises(planner.PlanError, match=message):
        _quick_run(_executable(nodes, data))
