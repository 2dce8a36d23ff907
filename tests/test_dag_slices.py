"""A large graph's DAG: drawn by the loading worker, its node items added in slices from a timer
(the window keeps answering), tooltips written when first hovered, and pictures complete."""

from __future__ import annotations

import threading

from PySide6.QtCore import QPointF

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.dag import dag_prepared
from slabscope.app.views.dag.dag_drawing import draw_dag
from slabscope.app.views.dag.dag_view import FIRST_NODES, DagView
from slabscope.app.window import MainWindow
from slabscope.gpu.generators import transformer, write_graph
from tests.qt_waits import settled


def _large_view(qtbot) -> tuple[DagView, planner.Graph]:
    graph = planner.graph_from_dict(transformer(4, 8, 2, layers=54))
    assert len(graph.nodes) > 2 * FIRST_NODES
    session = Session()
    view = DagView(session)
    qtbot.addWidget(view)
    view.resize(800, 500)
    view.show()
    session.graph = graph  # drawn only, not planned
    view.rebuild()
    return view, graph


def test_node_items_of_a_large_graph_arrive_in_slices(qtbot):
    view, graph = _large_view(qtbot)
    assert view.building and len(view._items) == FIRST_NODES
    # Hover and positions work before every item is there.
    last = graph.nodes[-1].name
    view.simulate_hover(last)
    assert len(view.highlighted_ancestors()) > 100
    assert view.sceneRect().contains(view.node_position(last))
    qtbot.waitUntil(lambda: not view.building, timeout=20000)
    assert [item.index for item in view._items] == list(range(len(graph.nodes)))
    assert view._items[-1].pos() == view.node_position(last)


def test_tooltips_are_written_when_first_hovered(qtbot):
    view, graph = _large_view(qtbot)
    item = view._items[3]
    assert item.toolTip() == ""
    item.hoverEnterEvent(None)
    assert item.toolTip().startswith(graph.nodes[3].name)
    assert view.session.hovered_node == graph.nodes[3].name


def test_a_picture_waits_for_every_node(qtbot):
    view, graph = _large_view(qtbot)
    view.enter_export()
    assert not view.building and len(view._items) == len(graph.nodes)
    view.leave_export()


def test_the_loading_worker_draws_the_graph_for_the_views_shape(qtbot, tmp_path, monkeypatch):
    path = tmp_path / "transformer.json"
    write_graph(transformer(4, 8, 2, layers=12), path)
    on_gui_thread: list[bool] = []

    def recorded(*args):
        on_gui_thread.append(threading.current_thread() is threading.main_thread())
        return draw_dag(*args)

    monkeypatch.setattr(dag_prepared, "draw_dag", recorded)
    window = MainWindow(Session())
    qtbot.addWidget(window)
    window.show()
    settled(qtbot, window)
    on_gui_thread.clear()
    assert window.open_path(path)
    settled(qtbot, window, timeout=60000)
    assert on_gui_thread == [False]  # the view's rebuild found the worker's drawing
    view = window.dag_view
    assert view.minimap._scene_rect == view.sceneRect()
    assert not view.minimap._pixmap.isNull()
    centre = view.node_position(window.session.graph.nodes[0].name)
    assert isinstance(centre, QPointF) and view.sceneRect().contains(centre)


def test_boxes_drawn_by_band_take_each_nodes_own_colour(qtbot):
    view, graph = _large_view(qtbot)
    qtbot.waitUntil(lambda: not view.building, timeout=20000)
    view.fit()
    assert view.boxes_banded  # a fitted graph this large has boxes too small for labels
    view.session.selection_model.select_node(graph.nodes[7].name)
    view.simulate_hover(graph.nodes[len(graph.nodes) // 2].name)
    colours, keys = view.plain_colours()
    assert len(colours) > 3
    for i in range(len(graph.nodes)):
        assert colours[keys.get(i, 0)].rgba() == view.plain_colour(i).rgba()
    view.simulate_hover(None)  # coloured by memory, nothing highlighted
    colours, keys = view.plain_colours()
    assert view.memory is not None and len(set(keys.values())) > 1
    for i in range(len(graph.nodes)):
        assert colours[keys.get(i, 0)].rgba() == view.plain_colour(i).rgba()
