"""Folding the interactive DAG into groups (namespaces or chains when few, else runs of them in
topological order): G or the context menu folds and unfolds, double-click opens a group or
closes the group of a node, hover and selection map between real nodes and their groups."""

from __future__ import annotations

from PySide6.QtCore import Qt

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.dag.dag_folding import FOLD_GROUPS, fold
from slabscope.app.views.dag.dag_view import DagView
from slabscope.gpu.generators import transformer


def _transformer() -> planner.Graph:
    return planner.graph_from_dict(transformer(4, 8, 2, layers=30))


def _view(qtbot, graph) -> DagView:
    session = Session()
    session.graph = graph  # drawn only, not planned
    view = DagView(session)
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: not view.building)
    return view


def test_folding_partitions_the_nodes_into_a_few_acyclic_groups():
    graph = _transformer()
    folding = fold(graph)
    drawn = folding.graph
    assert 2 <= len(drawn.nodes) <= FOLD_GROUPS
    assert sorted(v for m in folding.members for v in m) == list(range(len(graph.nodes)))
    assert all(folding.drawn_of[v] == i for i, m in enumerate(folding.members) for v in m)
    planner.model.reachability.topological_order([n.name for n in drawn.nodes], drawn.successors)
    # Every real edge between two groups is drawn once between them.
    expected = {(folding.drawn_of[graph.node_index[a]], folding.drawn_of[graph.node_index[b]])
                for a, b in graph.edges}
    drawn_edges = {(drawn.node_index[a], drawn.node_index[b]) for a, b in drawn.edges}
    assert drawn_edges == {(a, b) for a, b in expected if a != b}


def _double_click(qtbot, view: DagView, name: str) -> None:
    view.centre_on_node(name)
    point = view.mapFromScene(view.node_position(name))
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    # QTest's double click leaves the button down for later tests' hover: let it go.
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_double_click_opens_a_group_and_closes_it_again(qtbot):
    graph = _transformer()
    view = _view(qtbot, graph)
    qtbot.keyClick(view, Qt.Key.Key_G)
    qtbot.waitUntil(lambda: not view.building)  # grouped and laid out in the background
    folding = view.folding
    assert folding is not None and len(view._items) == len(folding.graph.nodes)
    group = next(i for i in range(len(folding.graph.nodes))
                 if folding.is_group(i) and 1 < len(folding.members[i]) < 200)
    group_name, members = folding.graph.nodes[group].name, folding.members[group]
    _double_click(qtbot, view, group_name)
    qtbot.waitUntil(lambda: not view.building)  # the opened group is laid out in the background
    opened = view.folding
    assert len(opened.graph.nodes) == len(folding.graph.nodes) + len(members) - 1
    names = {n.name for n in opened.graph.nodes}
    assert group_name not in names and {graph.nodes[v].name for v in members} <= names
    _double_click(qtbot, view, graph.nodes[members[0]].name)  # a node of the opened group
    qtbot.waitUntil(lambda: not view.building)
    assert [n.name for n in view.folding.graph.nodes] == [n.name for n in folding.graph.nodes]
    qtbot.keyClick(view, Qt.Key.Key_G)
    qtbot.waitUntil(lambda: not view.building)
    assert view.folding is None and len(view._items) == len(graph.nodes)


def test_hover_and_selection_map_between_nodes_and_groups(qtbot):
    graph = _transformer()
    view = _view(qtbot, graph)
    view.set_folded(True)
    qtbot.waitUntil(lambda: not view.building)
    folding = view.folding
    middle = next(i for i in range(len(folding.graph.nodes) // 2, len(folding.graph.nodes))
                  if folding.is_group(i))
    item = view._items[middle]
    view.hover_item(item, True)
    assert view.session.hovered_node is None  # a group is no node of the session
    assert view.highlighted_ancestors() and view.highlighted_descendants()
    assert item.name not in view.highlighted_ancestors()
    assert "group of" in view.tooltip(middle)
    view.hover_item(item, False)
    assert not view.highlighted_ancestors()
    # A real node hovered or selected elsewhere lights up its group here.
    real = graph.nodes[folding.members[middle][0]].name
    view.simulate_hover(real)
    assert view._hovered == middle
    view.simulate_hover(None)
    view.session.selection_model.select_node(real)
    assert view.selected_index == middle
    assert view.node_position(real) == view.node_position(item.name)
