"""The DAG as one flow: ranks top to bottom never wrapped into columns, opened at a zoom where
labels are readable on the graph's start or its live peak, Fit as a command, the key strip above
the drawing, memory on the boxes and edges labelled zoomed in."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QSize, Qt
from PySide6.QtGui import QFontInfo, QGuiApplication

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.dag.dag_drawing import NODE_HEIGHT
from slabscope.app.views.dag.dag_layout import MIN_ROOM, layered_layout
from slabscope.app.views.dag.dag_memory import BY_KIND, BY_LIVE, BY_WRITTEN
from slabscope.app.views.dag.dag_prepared import prepared_dag
from slabscope.app.views.dag.dag_view import EDGE_LABEL_SCALE, READABLE_PIXELS, DagView
from slabscope.planner.analysis.peak import live_at, live_peak
from tests import qt_waits
from tests.examples import DIAMOND, RELU_UNFUSED


def chain(length: int, buffers: bool = True, peak_at: int | None = None) -> planner.Graph:
    """A chain of `length` ops; with `buffers`, one per edge, the one out of `peak_at` large."""
    names = [f"n{i}" for i in range(length)]
    bufs = [{"name": f"b{i}", "bytes": 4096 if i == peak_at else 256, "uses": [f"n{i}", f"n{i + 1}"]}
            for i in range(length - 1)] if buffers else []
    return planner.graph_from_dict({
        "nodes": [{"name": n, "op": "Relu"} for n in names],
        "edges": [[a, b] for a, b in zip(names, names[1:])], "buffers": bufs})


def shown_view(qtbot, graph, size=QSize(800, 600)) -> DagView:
    return qt_waits.shown_view(qtbot, graph, size)


def visible(view: DagView, name: str) -> bool:
    return view.viewport().rect().contains(view.mapFromScene(view.node_position(name)))


def test_a_chain_and_a_diamond_are_one_column_of_ranks():
    graph = chain(300, buffers=False)
    layout = layered_layout(graph.successors, graph.reachability.topo, [60.0] * 300)
    assert layout.layer == tuple(range(300)) and len(set(layout.x)) == 1
    diamond = planner.load(DIAMOND)
    layout = layered_layout(diamond.successors, diamond.reachability.topo, [60.0] * 4)
    ranks = {n.name: layout.layer[i] for i, n in enumerate(diamond.nodes)}
    assert ranks == {"a": 0, "b": 1, "c": 1, "d": 2}
    assert layout.y[diamond.node_index["b"]] == layout.y[diamond.node_index["c"]]


def test_a_deep_graph_opens_readable_on_its_start_and_ctrl_0_fits_it(qtbot):
    view = shown_view(qtbot, chain(300, buffers=False))
    scale = view.transform().m11()
    for font in (view.label_font, view.op_font):
        assert QFontInfo(font).pixelSize() * scale >= READABLE_PIXELS
    assert visible(view, "n0") and visible(view, "n3") and not visible(view, "n299")
    xs = {round(view.node_position(f"n{i}").x()) for i in range(300)}
    assert len(xs) == 1  # one flow, never wrapped into columns
    assert view.minimap.isVisible()  # it frames the part on show
    qtbot.keyClick(view, Qt.Key.Key_0, Qt.KeyboardModifier.ControlModifier)
    # Let go of Ctrl as a keyboard does: the key click's release still carries it, and the
    # application would keep it held for the tests after this one in the same process (a
    # table's selectRow there toggles the row instead of choosing it).
    qtbot.keyRelease(view, Qt.Key.Key_Control)
    assert QGuiApplication.keyboardModifiers() == Qt.KeyboardModifier.NoModifier
    assert all(visible(view, f"n{i}") for i in (0, 150, 299))
    assert view.minimap.isHidden()


def test_with_a_plan_it_opens_on_the_live_peak_node(qtbot):
    graph = chain(200, peak_at=120)
    view = shown_view(qtbot, graph)
    assert view.session.plan is not None
    peak = live_peak(graph)
    assert graph.nodes[view.peak_index].name == peak.node
    assert visible(view, peak.node) and not visible(view, "n0")
    centre = view.mapToScene(view.viewport().rect().center())
    # In the middle: the view moves at most half a row to show one more row whole.
    assert abs(centre.y() - view.node_position(peak.node).y()) <= (NODE_HEIGHT + MIN_ROOM) / 2


def test_the_key_strip_sits_above_the_drawing(qtbot):
    view = shown_view(qtbot, planner.load(RELU_UNFUSED), QSize(400, 700))
    assert view.legend.geometry().bottom() < view.viewport().geometry().top()
    for node in view.session.graph.nodes:
        point = view.mapFromScene(view.node_position(node.name))
        assert view.viewport().rect().contains(point)  # every box under the strip, none hidden


def test_boxes_are_coloured_by_memory_with_a_switch(qtbot):
    graph = chain(30, peak_at=10)
    view = shown_view(qtbot, graph)
    memory = prepared_dag(graph).memory
    peak = live_peak(graph)
    assert view.colouring == BY_LIVE
    assert [view.value_of(i) for i in range(30)] == list(memory.live)
    assert max(memory.live) == peak.bytes == view.scale_top()
    index = graph.node_index["n10"]
    assert memory.written[index] == 4096 and view.bar_fraction(view.peak_index) == 1.0
    view.set_colouring(BY_WRITTEN)
    assert view.value_of(index) == 4096
    assert view.node_colours(index)[0] != view.node_colours(0)[0]
    qtbot.keyClick(view, Qt.Key.Key_M)
    assert view.colouring == BY_KIND and view.bar_fraction(index) == 0.0
    assert view.legend.switch.currentData() == BY_KIND
    view.legend.switch.activated.emit(0)
    assert view.colouring == BY_LIVE


def test_hovering_a_node_says_what_is_live_at_its_step(qtbot):
    graph = chain(30, peak_at=10)
    view = shown_view(qtbot, graph)
    view.simulate_hover("n11")
    assert view.highlighted_ancestors() >= {"n10"}  # today's highlight stays
    memory = prepared_dag(graph).memory
    step = memory.step[graph.node_index["n11"]]
    live = live_at(graph, step)
    text = view.legend.hover_text
    assert f"{format_bytes(memory.live[graph.node_index['n11']])} live in {len(live)} buffers" in text
    assert graph.buffers[live[0]].name in text
    view.simulate_hover(None)
    assert view.legend.hover_text == ""


def test_edges_show_bytes_zoomed_in():
    graph = planner.load(RELU_UNFUSED)
    labels = prepared_dag(graph).edge_labels
    pairs = [(graph.nodes[v].name, graph.nodes[s].name)
             for v, after in enumerate(graph.successors) for s in after]
    shared = {pair: label for pair, label in zip(pairs, labels)}
    t0 = graph.buffers[graph.buffer_index["t0"]]
    assert shared[("lt_matmul", "add_bias")] == "×".join(map(str, t0.shape))  # shape, else bytes
    assert prepared_dag(chain(3)).edge_labels == ("256 B", "256 B")
    assert EDGE_LABEL_SCALE > 1.0  # only zoomed in past the opening zoom


def test_a_moved_view_keeps_its_centre_when_resized(qtbot):
    view = shown_view(qtbot, chain(300, buffers=False))
    view.centre_on_node("n150")
    view.zoom(1.25)
    before = view.mapToScene(view.viewport().rect().center())
    view.resize(1200, 800)
    after = view.mapToScene(view.viewport().rect().center())
    assert abs(before.y() - after.y()) < 2 and visible(view, "n150")
    assert view.mapFromScene(view.node_position("n150")).x() > 500  # the new width is used


def test_the_export_draws_what_the_panel_draws(qtbot):
    from slabscope.app.render import build_view

    graph = chain(300, peak_at=200)
    panel = shown_view(qtbot, graph, QSize(900, 700))
    session = Session()
    session.set_graph(graph)
    exported = build_view(session, "dag")
    qtbot.addWidget(exported)
    exported.resize(QSize(900, 700))
    exported.show()
    exported.enter_export()
    dag = exported.dag_view
    assert dag.transform().m11() == pytest.approx(panel.transform().m11())
    assert dag.mapToScene(QPoint(400, 300)).y() == pytest.approx(
        panel.mapToScene(QPoint(400, 300)).y(), abs=40)  # the key strip is one row in a picture


def test_a_large_graph_opens_folded_and_groups_open_in_place(qtbot, monkeypatch):
    from slabscope.app.views.dag import dag_prepared
    from slabscope.gpu.generators import transformer

    monkeypatch.setattr(dag_prepared, "FOLD_ABOVE", 100)
    graph = planner.graph_from_dict(transformer(4, 8, 2, layers=6))
    assert len(graph.nodes) > 100
    view = shown_view(qtbot, graph)
    folding = view.folding
    assert folding is not None  # past the size, the window opens folded as pictures do
    group = next(i for i, m in enumerate(folding.members) if folding.is_group(i) and len(m) > 2)
    memory = prepared_dag(graph).memory
    written = sum(memory.written[v] for v in folding.members[group])
    assert view._items[group].op_label == \
        f"{len(folding.members[group]):,} nodes · {format_bytes(written)}"
    view.hover_item(view._items[group], True)
    assert view.legend.hover_text.startswith(
        f"{len(folding.members[group]):,} nodes write {format_bytes(written)}")
    view.hover_item(view._items[group], False)
    name = folding.graph.nodes[group].name
    view.centre_on_node(name)
    before = view.mapFromScene(view.node_position(name))
    scale = view.transform().m11()
    point = view.mapFromScene(view.node_position(name))
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: not view.building and view.folding is not folding)
    first = graph.nodes[folding.members[group][0]].name
    assert first in view.shown_graph().node_index  # opened: its nodes are drawn
    assert view.transform().m11() == scale
    assert (view.mapFromScene(view.node_position(first)) - before).manhattanLength() <= 2
    point = view.mapFromScene(view.node_position(first))
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.mouseRelease(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    qtbot.waitUntil(lambda: not view.building and name in view.shown_graph().node_index)
    assert (view.mapFromScene(view.node_position(name)) - before).manhattanLength() <= 4  # 2 hops


def test_revealing_a_buffer_centres_its_first_user_not_a_stretched_first_use(qtbot):
    # As a recorded step stretches a weight's uses to the step's first node: n0 lists "w" among
    # its uses but only n200 reads it.
    names = [f"n{i}" for i in range(300)]
    nodes = [{"name": n, "op": "Relu"} for n in names]
    nodes[200]["inputs"] = ["w"]
    graph = planner.graph_from_dict({
        "nodes": nodes, "edges": [[a, b] for a, b in zip(names, names[1:])],
        "buffers": [{"name": "w", "bytes": 256, "uses": ["n0", "n200", "n299"]}]})
    view = shown_view(qtbot, graph)
    assert visible(view, "n0") and not visible(view, "n200")
    view.reveal("buffer", "w")
    assert visible(view, "n200") and not visible(view, "n0")
