"""Generated executable graphs: shapes, sizes, planning, execution, and `slabscope generate`."""

from __future__ import annotations

import json

import pytest

from slabscope import gpu
from slabscope import planner
from slabscope.app.cli import main
from slabscope.gpu.generators import mlp, transformer


def test_mlp_shapes_and_bytes():
    graph = planner.graph_from_dict(mlp(layers=3, batch=8, width=16))
    assert graph.buffer("w2").shape == (16, 16)
    assert graph.buffer("y").kind == "output"
    assert [n.op for n in graph.nodes] == ["upload"] + ["matmul", "add_bias", "relu"] * 2 + \
        ["matmul", "add_bias", "readback"]
    assert graph.schedule == tuple(n.name for n in graph.nodes)


def test_fused_mlp_has_one_node_per_layer_and_the_same_output():
    unfused = gpu.run(planner.graph_from_dict(mlp(2, 8, 16)), backend="numpy", repeats=1)
    fused = gpu.run(planner.graph_from_dict(mlp(2, 8, 16, fused=True)), backend="numpy",
                    repeats=1)
    assert [k.op for k in fused.kernels] == ["upload", "matmul_bias_relu", "matmul_bias_relu",
                                             "readback"]
    assert unfused.verification.ok and fused.verification.ok


def test_mlp_of_several_hundred_mib_is_sized_without_running():
    graph = planner.graph_from_dict(mlp(layers=6, batch=256, width=4096))
    weights = sum(b.bytes for b in graph.buffers if b.kind == "weight")
    assert weights == 6 * 4096 * 4096 * 4 + 6 * 4096 * 4
    plan = planner.plan(graph)
    assert 300 * 2**20 < plan.slab_bytes < plan.no_reuse_bytes


@pytest.mark.parametrize("heads, layers", [(1, 1), (4, 1), (2, 2)])
def test_transformer_executes_and_verifies(heads, layers):
    graph = planner.graph_from_dict(transformer(seq=16, width=32, heads=heads, layers=layers))
    ops = {n.op for n in graph.nodes}
    assert {"layernorm", "softmax", "gelu", "matmul", "add", "add_bias"} <= ops
    report = gpu.run(graph, backend="numpy", repeats=1, measure_memory=False)
    assert report.verification.ok, report.verification.summary()


def test_transformer_heads_are_unordered_branches():
    graph = planner.graph_from_dict(transformer(seq=8, width=16, heads=2))
    model = planner.DagConflicts(graph)
    index = graph.buffer_index
    assert model.conflicts(index["l0.h0.scores"], index["l0.h1.scores"])


def test_serial_plan_is_never_larger_than_the_dag_plan():
    graph = planner.graph_from_dict(transformer(seq=16, width=32, heads=4))
    assert planner.plan(graph, conflicts="serial").slab_bytes <= planner.plan(graph).slab_bytes


@pytest.mark.parametrize("call, message", [
    (lambda: mlp(0, 8, 8), "layers must be a positive integer"),
    (lambda: transformer(8, 30, 4), "multiple of heads"),
])
def test_bad_sizes_are_plan_errors(call, message):
    with pytest.raises(planner.PlanError, match=message):
        call()


def test_cli_generate_writes_a_file_that_runs(tmp_path, capsys):
    out = tmp_path / "block.json"
    assert main(["generate", "transformer", "--seq", "8", "--width", "16", "--heads", "2",
                 "-o", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert main(["run", str(out), "--backend", "numpy", "--repeats", "1"]) == 0


def test_cli_generate_prints_json_and_rejects_bad_sizes(capsys):
    assert main(["generate", "mlp", "--layers", "2", "--batch", "4", "--width", "8"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["nodes"]) == 7
    assert main(["generate", "mlp", "--layers", "0"]) == 2
    assert "layers must be a positive integer" in capsys.readouterr().err
