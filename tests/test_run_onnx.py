"""ONNX models executed node by node over views of one slab, in onnxruntime (the test extra
installs it) or onnx's reference evaluator, verified against a run without reuse and against the
whole model in the same engine (no torch); the light models the onnx package ships included."""

from __future__ import annotations

import re

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from slabscope import gpu  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.app.cli import main  # noqa: E402
from slabscope.gpu.onnx_program import OnnxProgram  # noqa: E402

ORDER_MADE_FOR = ["matmul", "relu", "sigmoid", "twice", "tanh", "thrice", "add", "gather"]


def _constant(name: str, values) -> TensorProto:
    return numpy_helper.from_array(np.asarray(values, dtype=np.float32), name)


@pytest.fixture(scope="module")
def branches(tmp_path_factory):
    """x @ W, relu, then sigmoid*2 + tanh*3 (two branches whose temporaries a serial plan may
    share); and rows of a 10-row table gathered by int64 ids."""
    rng = np.random.default_rng(0)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["h"], name="matmul"),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["r"], ["s"], name="sigmoid"),
        helper.make_node("Mul", ["s", "two"], ["s2"], name="twice"),
        helper.make_node("Tanh", ["r"], ["t"], name="tanh"),
        helper.make_node("Mul", ["t", "three"], ["t2"], name="thrice"),
        helper.make_node("Add", ["s2", "t2"], ["y"], name="add"),
        helper.make_node("Gather", ["table", "ids"], ["rows"], name="gather", axis=0),
    ]
    graph = helper.make_graph(
        nodes, "branches",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16, 64]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [32])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [16, 64]),
         helper.make_tensor_value_info("rows", TensorProto.FLOAT, [32, 8])],
        [_constant("W", rng.standard_normal((64, 64)) / 8), _constant("two", 2.0),
         _constant("three", 3.0), _constant("table", rng.standard_normal((10, 8)))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = tmp_path_factory.mktemp("onnx") / "branches.onnx"
    onnx.save(model, path)
    return path


def quick_run(source, **kwargs):
    kwargs.setdefault("repeats", 1)
    kwargs.setdefault("measure_memory", False)
    return gpu.run(source, **kwargs)


@pytest.mark.parametrize("backend", ["numpy", "onnxruntime"])
def test_an_onnx_model_runs_in_one_slab_and_matches_both_references(branches, backend):
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime")
    report = quick_run(branches, backend=backend)
    assert report.backend == backend and report.program.startswith("ONNX model")
    v = report.verification
    assert v.ok, v.summary()
    assert v.model.ok and v.model.outputs == 2
    engine = "onnxruntime" if backend == "onnxruntime" else "onnx.reference"
    assert f"whole model in {engine}" in v.summary() and "float32 1e-04" in v.summary()
    assert {k.op for k in report.kernels} >= {"MatMul", "Relu", "Gather", "upload", "readback"}
    flops = {k.node: k.flops for k in report.kernels}
    assert flops["matmul"] == 2 * 16 * 64 * 64 and flops["relu"] == 0  # counted for MatMul
    assert report.slab_bytes < report.no_reuse_bytes


@pytest.fixture(scope="module")
def computed_shape(tmp_path_factory):
    """x reshaped to a shape computed from constants (Abs, which inference does not follow),
    then row 0 gathered by a scalar index: inference leaves the reshape's dimensions unknown,
    and the scalar must reach onnxruntime as a scalar."""
    nodes = [
        helper.make_node("Constant", [], ["negative"], name="negative",
                         value=numpy_helper.from_array(np.array([-2, -32], dtype=np.int64))),
        helper.make_node("Abs", ["negative"], ["shape"], name="abs"),
        helper.make_node("Reshape", ["x", "shape"], ["r"], name="reshape"),
        helper.make_node("Constant", [], ["zero"], name="zero",
                         value=numpy_helper.from_array(np.array(0, dtype=np.int64))),
        helper.make_node("Gather", ["r", "zero"], ["row"], name="gather", axis=0),
        helper.make_node("Relu", ["row"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(nodes, "computed_shape",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [32])])
    path = tmp_path_factory.mktemp("onnx") / "computed_shape.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    return path


@pytest.mark.parametrize("backend", ["numpy", "onnxruntime"])
def test_dimensions_inference_leaves_unknown_are_measured_by_a_run(computed_shape, backend,
                                                                    capsys):
    if backend == "onnxruntime":
        pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    with pytest.warns(UserWarning, match="unknown dimensions taken as 1 in 2 tensors: r, row"):
        assert planner.load(computed_shape).buffer("r").shape == (1, 1)  # what plan shows
    program = OnnxProgram(computed_shape)
    assert program.graph.buffer("r").shape == (2, 32)  # what a run of the model gives it
    report = quick_run(computed_shape, backend=backend, replay=False)
    assert report.verification.ok, report.verification.summary()
    with pytest.warns(UserWarning):  # a graph read with the guess cannot run as it is
        guessed = planner.load(computed_shape)
    with pytest.raises(planner.PlanError, match=r"buffer 'r' is \[1, 1\] here but \[2, 32\] "
                                                r"when computed_shape.onnx runs"):
        quick_run(guessed, model=computed_shape)
    assert main(["run", str(computed_shape), "--backend", backend, "--repeats", "1"]) == 0
    assert "warning" not in capsys.readouterr().err  # the run measured what plan guesses


def test_integer_inputs_stay_below_the_axis_they_gather_from(branches):
    ids = OnnxProgram(branches).stage(planner.load(branches)).inputs["ids"]
    assert ids.dtype == np.int64 and 0 <= ids.min() and ids.max() < 10
    assert len(np.unique(ids)) == 10


def test_weights_in_the_slab_are_uploaded_and_verify(branches):
    report = quick_run(branches, include_weights=True)
    assert report.verification.ok, report.verification.summary()
    graph = planner.load(branches, include_weights=True)
    assert {b.name for b in graph.buffers if b.kind == "weight"} == {"W", "two", "three", "table"}


def test_a_serial_plan_run_in_another_order_is_caught(branches):
    graph = planner.load(branches)
    plan = planner.plan(graph, conflicts="serial")
    assert plan.by_name["s"].offset == plan.by_name["t"].offset
    assert quick_run(graph, plan=plan, model=branches).verification.ok
    report = quick_run(graph, plan=plan, model=branches,
                       execute_order_names=["matmul", "relu", "sigmoid", "tanh", "twice"])
    v = report.verification
    assert not v.ok and not v.model.ok and v.model.differing == ("y",)
    # s first: t then differs too, as the checked pass restores s over t's bytes
    assert [(c.buffer, c.read_by) for c in v.clobbered][0] == ("s", "twice")


def test_an_op_the_evaluator_lacks_is_one_line_naming_node_and_op(tmp_path, capsys):
    graph = helper.make_graph(
        [helper.make_node("Frobnicate", ["x"], ["y"], name="frob", domain="com.example")], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    path = tmp_path / "frob.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                      helper.make_opsetid("com.example", 1)]),
              path)
    assert main(["run", str(path), "--repeats", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert re.search(r"node 'frob' \(Frobnicate\) cannot run: (onnx.reference|onnxruntime): ", err)


def test_cli_runs_onnx_and_refuses_a_backend_that_cannot(branches, capsys):
    assert main(["run", str(branches), "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    for text in ("branches on ", "nodes run by ONNX model, one node at a time", "gather",
                 "match the whole model in "):
        assert text in out, text
    auto = gpu.run(branches, repeats=1, verify=False, replay=False)
    try:
        import onnxruntime  # noqa: F401
        assert auto.backend == "onnxruntime" and auto.backend_note is None
    except ImportError:  # auto passed onnxruntime over and says why
        assert auto.backend == "numpy" and "onnxruntime is not installed" in auto.backend_note
    assert main(["run", str(branches), "--backend", "torch"]) == 2
    assert "backend torch cannot run ONNX model" in capsys.readouterr().err


# The light models the onnx package ships, with ops each must have timed. The first four run
# in well under a second each here (CPU time, one node per onnxruntime session); the other four
# take 1.5 s (zfnet512) to 5 s (densenet121), so they are marked slow: `make test` runs them all.
# vgg19 (8 s) is left to bench/runner.py: its ops are those of bvlc_alexnet and zfnet512.
LIGHT_MODELS = {
    "bvlc_alexnet": {"Conv", "Dropout", "Gemm", "LRN"},
    "squeezenet": {"Conv", "Concat", "GlobalAveragePool", "Softmax"},
    "shufflenet": {"Conv", "Reshape", "Transpose", "BatchNormalization", "AveragePool"},
    "inception_v1": {"Conv", "Concat", "LRN", "MaxPool", "AveragePool"},
}
SLOW_LIGHT_MODELS = {
    "zfnet512": {"Conv", "Gemm", "LRN", "MaxPool", "Softmax"},
    "inception_v2": {"Add", "BatchNormalization", "Concat", "Conv", "Gemm", "MaxPool", "Mul"},
    "resnet50": {"AveragePool", "BatchNormalization", "Conv", "Gemm", "Sum"},
    "densenet121": {"BatchNormalization", "Concat", "Conv", "GlobalAveragePool", "Mul"},
}


@pytest.mark.filterwarnings("ignore::UserWarning")  # Dropout masks have no inferred shape
@pytest.mark.parametrize("name", [*sorted(LIGHT_MODELS), *(
    pytest.param(name, marks=pytest.mark.slow) for name in sorted(SLOW_LIGHT_MODELS))])
def test_light_models_the_onnx_package_ships_run_in_one_slab_in_onnxruntime(name):
    # in onnx.reference alone the light models take 30 s to minutes here: bench/runner.py
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (the onnxruntime "
                                              "extra; the test extra carries it)")
    from pathlib import Path

    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / \
        f"light_{name}.onnx"
    report = quick_run(path, backend="onnxruntime", replay=False)
    v = report.verification
    assert v.ok, v.summary()  # the per-buffer run, and the whole model in one session
    assert v.model.ok and v.model.outputs == 1 and "whole model in onnxruntime" in v.summary()
    assert report.allocated_bytes == report.slab_bytes < report.no_reuse_bytes
    assert (LIGHT_MODELS | SLOW_LIGHT_MODELS)[name] <= {k.op for k in report.kernels}
    assert all(k.seconds > 0 for k in report.kernels if k.op not in ("upload", "readback"))


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_light_model_runs_with_the_in_place_rule_and_its_weights_in_the_slab():
    pytest.importorskip("onnxruntime", reason="onnxruntime is not installed")
    from pathlib import Path

    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / \
        "light_squeezenet.onnx"
    plain = quick_run(path, backend="onnxruntime", replay=False, verify=False)
    shared = quick_run(path, backend="onnxruntime", replay=False, inplace=True,
                       include_weights=True)
    assert shared.verification.ok, shared.verification.summary()
    assert "in place: " in shared.phase("search").detail
    weights = sum(r for b, r in zip(planner.load(path, include_weights=True).buffers,
                                    planner.load(path, include_weights=True).reserved)
                  if b.kind == "weight")
    assert weights > 0 and shared.no_reuse_bytes < plain.no_reuse_bytes + weights


def test_without_onnxruntime_auto_runs_onnx_reference_and_names_the_extra(branches, monkeypatch,
                                                                          capsys):
    monkeypatch.setitem(__import__("sys").modules, "onnxruntime", None)  # import fails
    report = quick_run(branches, replay=False)
    assert report.backend == "numpy" and report.verification.ok
    assert "onnxruntime is not installed (pip install 'slabscope[onnxruntime]')" in \
        report.backend_note
    assert main(["run", str(branches), "--backend", "onnxruntime"]) == 2
    assert "slabscope[onnxruntime]" in capsys.readouterr().err


def test_the_window_offers_run_for_model_files_and_says_why_not_otherwise(branches):
    from slabscope.gpu.program import run_unavailable
    from tests.examples import EXAMPLES

    assert run_unavailable(planner.load(branches), branches) is None
    assert run_unavailable(planner.load(EXAMPLES / "relu_unfused.json"),
                           EXAMPLES / "relu_unfused.json") is None
    # the same model's graph, held without its file: only the built-in ops could run it
    assert "not supported by the runner" in run_unavailable(planner.load(branches), None)
