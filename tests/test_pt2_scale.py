"""Large graphs, built here: `.pt2` naming stays linear when names repeat (every name unique,
the graph what distinct names give), and what is too large is refused up front in one line."""

from __future__ import annotations

import json
import time

from bench.hostile_inputs import relu_chain, write_pt2
from slabscope.app.cli import main
from slabscope.planner.conflicts import dag_model
from slabscope.planner.formats import torch_export_import
from slabscope.planner.formats.torch_export_import import UniqueNames, load_pt2


def test_unique_names_resume_where_they_stopped():
    names = UniqueNames()
    assert [names.fresh("a", "_") for _ in range(3)] == ["a", "a_2", "a_3"]
    assert names.fresh("a_4", "_") == "a_4"
    assert names.fresh("a", "_") == "a_5"  # a_4 was given by its own name
    assert names.fresh("a", " #") == "a #2"


def test_nodes_all_called_alike_load_in_linear_time(tmp_path):
    # 8,000 took 33 s when each name appended "_" until it was free (3,000 over 10 s).
    path = write_pt2(tmp_path / "alike.pt2", relu_chain(3000))
    started = time.perf_counter()
    graph, _ = load_pt2(path)
    assert time.perf_counter() - started < 3.0
    names = [node.name for node in graph.nodes]
    assert len(set(names)) == len(names) == 3002  # with upload and readback
    assert names[1:4] == ["a", "a_2", "a_3"]


def test_buffers_without_a_module_load_in_linear_time_and_match_distinct_names(tmp_path):
    # 40,000 relus without nn_module_stack took 119 s: every buffer is "aten.relu" until numbered.
    alike = write_pt2(tmp_path / "alike.pt2", relu_chain(3000, node_name=None))
    started = time.perf_counter()
    graph, _ = load_pt2(alike)
    assert time.perf_counter() - started < 3.0
    buffers = [b.name for b in graph.buffers]
    assert len(set(buffers)) == len(buffers) and "aten.relu #3000" in buffers
    scoped, _ = load_pt2(write_pt2(tmp_path / "scoped.pt2", relu_chain(3000, None, True)))
    assert [b.bytes for b in scoped.buffers] == [b.bytes for b in graph.buffers]
    assert [b.uses for b in scoped.buffers] == [b.uses for b in graph.buffers]


def test_a_program_over_the_node_limit_is_refused_up_front(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(torch_export_import, "NODES_LIMIT", 50)
    path = write_pt2(tmp_path / "many.pt2", relu_chain(51))
    assert main(["plan", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "51 nodes is over the limit of 50" in err


def test_a_graph_too_large_for_the_dag_model_is_refused_naming_the_way_out(tmp_path, capsys,
                                                                           monkeypatch):
    # 74,000 nodes needed tens of GB for the closure as lists: refused before building it.
    monkeypatch.setattr(dag_model, "CLOSURE_BYTES_LIMIT", 10_000)
    path = tmp_path / "wide.json"
    n = 150  # independent branches: not a chain, so the closure would be built
    path.write_text(json.dumps({
        "nodes": ["src"] + [f"n{i}" for i in range(n)],
        "edges": [["src", f"n{i}"] for i in range(n)],
        "buffers": [{"name": f"b{i}", "bytes": 64, "uses": ["src", f"n{i}"]} for i in range(n)]}))
    assert main(["plan", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "over the 10,000-byte limit" in err and "--conflicts serial" in err
    assert main(["plan", str(path), "--conflicts", "serial"]) == 0
