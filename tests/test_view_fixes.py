"""Small defects of the window's views: the DAG's key is a strip above the graph at any width;
the DAG opens again (or refits, after Fit) as the window resizes unless the user zoomed; the slab bar's summary breaks between items, never inside one; the request list cuts
long names in the middle and names them whole in the tooltip."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPointF, Qt

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.dag.dag_view import NODE_HEIGHT, DagView
from slabscope.app.views.panels.request_list import RequestList, shown_name
from slabscope.app.views.slab.slab_view import SlabView
from tests.examples import RELU_UNFUSED


def _dag(qtbot, width: int, height: int) -> DagView:
    session = Session()
    session.open(RELU_UNFUSED)
    view = DagView(session)
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    return view


def _top_of_graph(view: DagView) -> float:
    top = min(view.node_position(n.name).y() for n in view.session.graph.nodes) - NODE_HEIGHT / 2
    return view.mapFromScene(QPointF(0, top)).y()


def test_the_dag_key_is_a_strip_above_the_graph_at_any_width(qtbot):
    view = _dag(qtbot, 260, 480)
    for width in (260, 1100):
        view.resize(width, 480)
        qtbot.waitUntil(lambda: abs(view.legend.width() - width) < 2)
        assert view.legend.geometry().bottom() < view.viewport().geometry().top()
        assert _top_of_graph(view) >= 0  # the graph starts below the key, inside the viewport
        assert view.legend.switch.geometry().right() < width


def test_the_dag_refits_on_resize_until_the_user_zooms(qtbot):
    view = _dag(qtbot, 400, 300)
    small = view.transform().m11()
    view.resize(900, 700)
    qtbot.waitUntil(lambda: view.transform().m11() > small)
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert all(shown.contains(view.node_position(n.name)) for n in view.session.graph.nodes)
    view.zoom(1.25)
    zoomed = view.transform().m11()
    view.resize(500, 400)
    qtbot.waitUntil(lambda: view.viewport().width() < 520)
    assert view.transform().m11() == zoomed
    view.fit()  # Ctrl+0 fits: from then on resizes refit
    fitted = view.transform().m11()
    view.resize(900, 700)
    qtbot.waitUntil(lambda: view.transform().m11() != fitted)


def test_the_slab_summary_breaks_between_items(qtbot):
    session = Session()
    session.open(RELU_UNFUSED)
    view = SlabView(session)
    qtbot.addWidget(view)
    view.resize(420, 300)
    view.show()
    text = view.summary.text()
    plan = session.plan
    for item in ("<b>live peak</b> 1.14 MiB at step 1",
                 f"<b>without reuse</b> {format_bytes(plan.no_reuse_bytes)} (the slab saves"):
        assert f"<span style='white-space:nowrap'>{item}" in text
    # Within the label's minimum width (the export's narrowest pictures are 600 pixels wide).
    assert view.minimumSizeHint().width() <= 600


def test_the_request_list_cuts_long_names_at_the_end_and_names_them_whole_on_hover(qtbot):
    long = "optimizer_with_a_very_long_module_name.py:1234 step #56"
    data = {"nodes": ["n0", "n1"], "edges": [["n0", "n1"]],
            "buffers": [{"name": long, "bytes": 4096, "uses": ["n0", "n1"]},
                        {"name": "short", "bytes": 64, "uses": ["n1"]}]}
    session = Session()
    session.set_graph(planner.graph_from_dict(data))
    widget = RequestList(session)
    qtbot.addWidget(widget)
    model = widget.model
    row = [model.data(model.index(r, 0, QModelIndex())) for r in range(2)].index(long)
    tooltip = model.data(model.index(row, 0, QModelIndex()), Qt.ItemDataRole.ToolTipRole)
    assert tooltip.splitlines()[0].startswith(long)
    metrics = widget.fontMetrics()
    shown = shown_name(metrics, long, 150)
    assert shown.endswith("…") and metrics.horizontalAdvance(shown) <= 150
    assert long.startswith(shown[:-1])


def test_the_request_list_names_a_buffer_with_the_op_that_makes_it(qtbot):
    from slabscope.app.views.common.buffer_names import buffer_ops, readable_name

    graph = planner.load(RELU_UNFUSED)
    assert readable_name(graph, "t0") == "t0 · matmul"
    assert readable_name(graph, "x") == "x · upload"
    assert len(buffer_ops(graph)) == len(graph.buffers)