"""The DAG view's layout of a large graph: made by the loading worker, never on the GUI thread,
and bounded in size (long edges past the waypoint cap are drawn as stubs)."""

from __future__ import annotations

import threading

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.dag import dag_prepared
from slabscope.app.views.dag.dag_layout import MIN_WAYPOINT_CAP, layered_layout
from slabscope.app.window import MainWindow
from slabscope.gpu.generators import transformer, write_graph
from tests.qt_waits import settled


def test_opening_a_transformer_lays_it_out_in_the_worker(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "transformer.json"
    write_graph(transformer(8, 16, 2, layers=24), path)
    on_gui_thread: list[bool] = []

    def recorded(*args):
        on_gui_thread.append(threading.current_thread() is threading.main_thread())
        return layered_layout(*args)

    monkeypatch.setattr(dag_prepared, "layered_layout", recorded)
    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.show()
    settled(qtbot, window)
    on_gui_thread.clear()  # the example the window opens on
    assert window.open_path(path)
    settled(qtbot, window, timeout=60000)
    graph = window.session.graph
    assert len(graph.nodes) > 500
    assert on_gui_thread == [False]
    # The view drew the worker's layout: it was ready when the graph arrived.
    assert window.dag_view.highlighted_ancestors() == set()
    window.dag_view.simulate_hover(graph.nodes[-1].name)
    assert len(window.dag_view.highlighted_ancestors()) > 100
    assert dag_prepared.prepared_dag(graph) is not None and on_gui_thread == [False]


def _fan_over_chain(length: int) -> planner.Graph:
    """One source feeding every node of a long chain, as a weight upload feeds every block."""
    names = ["upload"] + [f"n{i}" for i in range(length)]
    edges = [[f"n{i}", f"n{i + 1}"] for i in range(length - 1)] + \
        [["upload", f"n{i}"] for i in range(length)]
    return planner.graph_from_dict({"nodes": names, "edges": edges, "buffers": [
        {"name": f"b{i}", "bytes": 64, "uses": [f"n{i}"]} for i in range(length)]})


def _spans(graph, layout) -> list[int]:
    return [layout.layer[s] - layout.layer[v] for v, after in enumerate(graph.successors)
            for s in after]


def test_long_edges_past_the_waypoint_cap_become_stubs():
    graph = _fan_over_chain(400)  # 79,800 waypoints if every edge were routed
    layout = layered_layout(graph.successors, graph.reachability.topo, [60.0] * len(graph.nodes))
    spans = _spans(graph, layout)
    assert all(span > 0 for span in spans)
    assert layout.stubs
    routed = [span for k, span in enumerate(spans) if k not in layout.stubs]
    assert sum(span - 1 for span in routed) <= MIN_WAYPOINT_CAP
    assert min(spans[k] for k in layout.stubs) > max(routed)
    for k, points in enumerate(layout.edge_points):
        assert len(points) == (2 if k in layout.stubs else spans[k] + 1)


def test_a_graph_under_the_cap_routes_every_edge():
    names = [f"n{i}" for i in range(100)]  # a chain with skips of 5: 380 waypoints
    graph = planner.graph_from_dict({"nodes": names, "buffers": [], "edges": [
        [names[i], names[i + 1]] for i in range(99)] + [[names[i], names[i + 5]] for i in range(95)]})
    layout = layered_layout(graph.successors, graph.reachability.topo, [60.0] * len(graph.nodes))
    assert not layout.stubs
    assert [len(p) for p in layout.edge_points] == [s + 1 for s in _spans(graph, layout)]


def test_a_wide_fan_out_skipping_layers_is_drawn_as_stubs():
    graph = _fan_over_chain(20)  # one upload feeding every node of a chain
    layout = layered_layout(graph.successors, graph.reachability.topo, [60.0] * len(graph.nodes))
    spans = _spans(graph, layout)
    assert {k for k, span in enumerate(spans) if span > 1} == set(layout.stubs)
    assert len({round(x) for x in layout.x[1:]}) == 1  # the chain stays one straight column
