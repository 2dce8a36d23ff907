"""A large DAG opens and exports as its structure: nodes folded by module or namespace where
they have one, else into chains (runs of those when they are still too many), every group
labelled with its node count and bytes."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSize  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.render import build_view  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.dag import dag_prepared  # noqa: E402
from slabscope.app.views.dag.dag_folding import FOLD_GROUPS, fold  # noqa: E402
from slabscope.app.views.dag.dag_groups import node_groups  # noqa: E402
from slabscope.gpu.generators import transformer, write_graph  # noqa: E402


def chain_graph(blocks: int) -> planner.Graph:
    """`blocks` chains of conv, bn, relu, each into a concat of it and the one before."""
    nodes, edges, buffers, prev = [{"name": "in", "op": "upload"}], [], [], "in"
    for b in range(blocks):
        names = [f"c{b}", f"n{b}", f"r{b}", f"cat{b}"]
        nodes += [{"name": names[0], "op": "Conv"}, {"name": names[1], "op": "BatchNorm"},
                  {"name": names[2], "op": "Relu"}, {"name": names[3], "op": "Concat"}]
        edges += [[prev, names[0]], [names[0], names[1]], [names[1], names[2]],
                  [names[2], names[3]], [prev, names[3]]]
        buffers.append({"name": f"t{b}", "bytes": 64, "uses": [prev, names[3]]})
        prev = names[3]
    return planner.graph_from_dict({"nodes": nodes, "edges": edges, "buffers": buffers})


def test_chains_fold_into_one_group_each_named_by_their_ops():
    graph = chain_graph(3)
    groups = node_groups(graph)
    assert groups.how == "chain"
    assert groups.labels == ("upload", "Conv→BatchNorm→Relu", "Concat", "Conv→BatchNorm→Relu",
                             "Concat", "Conv→BatchNorm→Relu", "Concat")
    folded = fold(graph, groups=groups, written=tuple(range(len(graph.nodes)))).graph
    names = [n.name for n in folded.nodes]
    assert names[1] == "Conv→BatchNorm→Relu (3)" and names[3] == "Conv→BatchNorm→Relu (3) #2"
    assert folded.nodes[1].op == "3 nodes · 6 B"  # its count and the bytes its nodes write
    assert (names[1], names[2]) in folded.edges and (names[0], names[2]) in folded.edges


def test_modules_of_an_export_fold_by_their_path():
    nodes = [{"name": f"op{i}", "op": "aten.linear",
              "attrs": {"module": f"layers.{i // 3}.mlp (Mlp)"}} for i in range(9)]
    graph = planner.graph_from_dict({
        "nodes": nodes, "edges": [[f"op{i}", f"op{i + 1}"] for i in range(8)], "buffers": []})
    groups = node_groups(graph)
    assert groups.how == "module"
    assert groups.labels == ("layers.0.mlp", "layers.1.mlp", "layers.2.mlp")


def test_an_exported_attention_block_folds_by_module_split_where_a_parent_runs_between():
    from pathlib import Path

    from slabscope.app.views.dag.dag_folding import fold_groups

    graph = planner.load(Path(__file__).parent / "data" / "pt2" / "attention.pt2")
    groups = fold_groups(graph)
    assert groups.how == "module"
    # The block's own residual adds run between its children: "block" is two groups.
    assert groups.labels.count("block") == 2 and "block.attn" in groups.labels
    # The input upload joins the module it feeds.
    assert groups.group_of[graph.node_index["upload"]] == groups.labels.index("block.norm")


def test_namespaced_names_fold_by_their_leading_part(tmp_path):
    path = tmp_path / "t.json"
    write_graph(transformer(8, 16, 2, layers=3), path)
    graph = planner.load(path)
    groups = node_groups(graph)
    assert groups.how == "namespace"
    # The deepest namespace level with at most 40 groups: here a block's parts (l0/attn_sum...).
    assert {label.split("/")[0] for label in groups.labels} >= {"l0", "l1", "l2"}
    assert 3 < len(groups.labels) <= 40 < len(graph.nodes)


def test_a_large_dag_exports_folded_as_the_window_opens_it(qapp, monkeypatch):
    monkeypatch.setattr(dag_prepared, "FOLD_ABOVE", 150)
    graph = chain_graph(60)
    session = Session()
    session.set_graph(graph)
    view = build_view(session, "dag")
    try:
        view.resize(QSize(1000, 900))
        view.show()
        view.enter_export()
        dag = view.dag_view
        assert dag.folding is not None and dag._exporting
        assert len(dag.shown_graph().nodes) == len(dag.folding.graph.nodes) < len(graph.nodes)
    finally:
        view.deleteLater()


def test_a_large_transformer_exports_as_few_labelled_runs_of_layers(qapp, tmp_path, monkeypatch):
    from slabscope.app.render import export_view

    monkeypatch.setattr(dag_prepared, "FOLD_ABOVE", 150)
    path = tmp_path / "t.json"
    write_graph(transformer(4, 8, 2, layers=60), path)
    session = Session()
    session.set_graph(planner.load(path))
    folding = dag_prepared.opening_folding(session.graph)
    labels = [n.name for n in folding.graph.nodes]
    assert 2 < len(labels) <= FOLD_GROUPS
    # Each run is named by the layers it spans, short enough to read in its box.
    assert labels[1].startswith("l") and " … l" in labels[1] and len(labels[1]) < 25
    assert export_view(session, "dag", tmp_path / "t.png").stat().st_size > 0


def test_a_run_is_named_by_the_first_part_where_its_ends_differ():
    from slabscope.app.views.dag.dag_folding import span_label

    assert span_label("l11.ln1", "l21.ln2") == "l11 … l21"
    assert span_label("l11.ln1", "l11.ffn1") == "l11.ln1 … l11.ffn1"
    assert span_label("a/b/c", "a/b/d") == "a/b/c … a/b/d"
    assert span_label("l1", "l1.x") == "l1 … l1.x"
    assert span_label("same", "same") == "same"
