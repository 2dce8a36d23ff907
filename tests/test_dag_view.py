"""The DAG panel: layered layout, hover highlights of ancestors and descendants, buffer uses."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.dag.dag_layout import layered_layout
from slabscope.app.views.dag.dag_view import DagView
from tests.examples import DIAMOND, RELU_UNFUSED


@pytest.fixture
def relu_view(qtbot):
    session = Session()
    session.open(RELU_UNFUSED)
    view = DagView(session)
    qtbot.addWidget(view)
    view.resize(500, 500)
    view.show()
    return view


def test_hovering_a_node_highlights_exactly_its_ancestors_and_descendants(relu_view):
    relu_view.simulate_hover("add_bias")
    assert relu_view.session.hovered_node == "add_bias"
    assert relu_view.highlighted_ancestors() == {"upload", "lt_matmul"}
    assert relu_view.highlighted_descendants() == {"relu", "readback"}
    relu_view.simulate_hover(None)
    assert relu_view.highlighted_ancestors() == relu_view.highlighted_descendants() == set()


def test_unordered_branch_is_neither_ancestor_nor_descendant(qtbot):
    session = Session()
    session.open(DIAMOND)
    view = DagView(session)
    qtbot.addWidget(view)
    view.simulate_hover("b")
    assert view.highlighted_ancestors() == {"a"}
    assert view.highlighted_descendants() == {"d"}


def test_pointer_over_a_node_hovers_it(relu_view, qtbot):
    point = relu_view.mapFromScene(relu_view.node_position("relu"))
    qtbot.mouseMove(relu_view.viewport(), point)
    qtbot.waitUntil(lambda: relu_view.session.hovered_node == "relu", timeout=1000)
    assert relu_view.highlighted_ancestors() == {"upload", "lt_matmul", "add_bias"}


def test_hovered_or_selected_buffer_highlights_its_uses(relu_view):
    session = relu_view.session
    session.hover_buffer("t0")
    assert relu_view.highlighted_uses() == {"lt_matmul", "add_bias"}
    session.hover_buffer(None)
    session.select_buffers(["y"])
    assert relu_view.highlighted_uses() == {"relu", "readback"}
    relu_view.simulate_hover("upload")  # a hovered node wins over the selection
    assert relu_view.highlighted_uses() == set()
    assert relu_view.highlighted_descendants() == {"lt_matmul", "add_bias", "relu", "readback"}


def test_keyboard_zooms(relu_view, qtbot):
    before = relu_view.transform().m11()
    qtbot.keyClick(relu_view, Qt.Key.Key_Plus)
    assert relu_view.transform().m11() > before
    qtbot.keyClick(relu_view, Qt.Key.Key_Minus)
    qtbot.keyClick(relu_view, Qt.Key.Key_Minus)
    assert relu_view.transform().m11() < before


def test_layout_puts_every_edge_downwards_without_overlaps():
    from bench.layered import layered_graph

    graph = layered_graph(300, 200)
    widths = [60.0] * len(graph.nodes)
    layout = layered_layout(graph.successors, graph.reachability.topo, widths)
    for v, succ in enumerate(graph.successors):
        for s in succ:
            assert layout.layer[s] > layout.layer[v]
    rows: dict[int, list[float]] = {}
    for v, k in enumerate(layout.layer):
        rows.setdefault(k, []).append(layout.x[v])
    for xs in rows.values():
        xs.sort()
        assert all(b - a >= 60.0 - 1e-6 for a, b in zip(xs, xs[1:]))
    assert len(layout.edge_points) == sum(len(s) for s in graph.successors)


def test_layout_keeps_a_chain_straight():
    graph = planner.load(RELU_UNFUSED)
    layout = layered_layout(graph.successors, graph.reachability.topo, [80.0] * len(graph.nodes))
    assert layout.layer == (0, 1, 2, 3, 4)
