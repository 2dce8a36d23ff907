"""What keeps the GUI thread's slices short on large inputs, checked by behaviour (never by
time): the live-bytes panel redraws only what a change touches and only when on show, the
progress bar refreshes on the next turn of the event loop, the node panel lists a bounded
number of buffers."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.dag.graph_panel import GraphPanel  # noqa: E402
from slabscope.app.views.dag.node_panel import MAX_ROWS, NodePanel  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402

TRACE = "id,lower,upper,size\na,0,3,100\nb,1,2,50\nc,2,4,30\nd,3,5,70\n"


def _trace(tmp_path, text=TRACE, name="trace.csv"):
    path = tmp_path / name
    path.write_text(text)
    return planner.load(path), path


def _other_algorithm(session) -> str:
    return "best-fit" if session.algorithm != "best-fit" else "first-fit"


def test_a_new_plan_redraws_only_the_slab_line_of_the_live_bytes(qtbot, tmp_path):
    graph, path = _trace(tmp_path)
    session = Session()
    session.set_graph(graph, path)
    panel = GraphPanel(session)
    qtbot.addWidget(panel)
    panel.show()
    view = panel.live_view
    plot = view.plot_widget.getPlotItem()
    curves = [item for item in plot.listDataItems() if item is not view._slab_line]
    first = session.plan
    session.set_algorithm(_other_algorithm(session))
    assert session.plan is not first
    kept = [item for item in plot.listDataItems() if item is not view._slab_line]
    assert kept == curves  # the same curve items: only the slab's line was replaced
    slab_y = view._slab_line.getData()[1]
    assert list(slab_y) == [float(session.plan.slab_bytes)] * 2
    assert f"{session.plan.slab_bytes:,} B" in view.summary.text()


def test_the_live_bytes_behind_the_dag_draw_when_shown(qtbot, tmp_path):
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    panel = GraphPanel(session)
    qtbot.addWidget(panel)
    panel.show()
    assert not panel.shows_live_bytes()
    view = panel.live_view
    summary = view.summary.text()
    # A plan of the DAG's graph arrives while the live bytes are behind it: nothing is drawn.
    session.set_algorithm(_other_algorithm(session))
    assert view.summary.text() == summary and view._stale
    graph, path = _trace(tmp_path)
    session.set_graph(graph, path)  # a trace brings the live bytes forward, drawn on show
    assert panel.shows_live_bytes()
    qtbot.waitUntil(lambda: view._drawn_graph is graph and not view._stale)
    assert "peak</b> 150 B" in view.summary.text()
    # Back to a DAG: the page about to be hidden keeps the trace's curves rather than drawing.
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    assert not panel.shows_live_bytes()
    assert view._stale and view._drawn_graph is graph


def test_a_step_with_many_buffers_lists_a_bounded_number(qtbot, tmp_path):
    count = MAX_ROWS + 25
    rows = "".join(f"b{i},0,2,{10 + i}\n" for i in range(count))
    graph, path = _trace(tmp_path, "id,lower,upper,size\n" + rows, "wide.csv")
    session = Session()
    session.set_graph(graph, path)
    panel = NodePanel(session)
    qtbot.addWidget(panel)
    step = next(n.name for n in graph.nodes
                if sum(1 for b in graph.buffers if n.name in b.uses) == count)
    session.hover_node(step)
    text = panel.text.toPlainText()
    assert f"and {count - MAX_ROWS:,} more" in text
    assert text.count("b1") >= 1
    listed = sum(1 for i in range(count) if f"b{i}\t" in text or f"b{i}\n" in text)
    assert listed <= MAX_ROWS


def test_block_moves_finds_one_dragged_run_as_the_full_search_does():
    import random

    from slabscope.app.views.panels.request_list import block_moves, searched_moves

    rnd = random.Random(7)
    for _ in range(3000):
        n = rnd.randint(1, 10)
        old = [f"n{i}" for i in range(n)]
        if rnd.random() < 0.7:  # one run of rows dragged elsewhere (or nowhere)
            first = rnd.randrange(n)
            count = rnd.randint(1, n - first)
            block, rest = old[first:first + count], old[:first] + old[first + count:]
            at = rnd.randint(0, len(rest))
            new = rest[:at] + block + rest[at:]
        else:
            new = rnd.sample(old, n)
        for limit in (0, 1, 3, 64):
            assert block_moves(old, new, limit) == searched_moves(old, new, limit)


def test_a_full_reorder_is_checked_like_any_other(tmp_path):
    import pytest

    graph, path = _trace(tmp_path)
    names = [b.name for b in graph.buffers]
    shuffled = names[::-1]
    assert graph.request_order(shuffled) == tuple(graph.buffer_index[n] for n in shuffled)
    with pytest.raises(planner.PlanError, match="twice"):
        graph.request_order(names[:-1] + names[:1])
    with pytest.raises(planner.PlanError, match="unknown"):
        graph.request_order(names[:-1] + ["nowhere"])
    session = Session()
    session.set_graph(graph, path)
    session.set_order(shuffled)
    assert session.order == tuple(shuffled)


def test_the_dag_behind_the_live_bytes_is_built_only_when_it_comes_forward(qtbot, tmp_path):
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    panel = GraphPanel(session)
    qtbot.addWidget(panel)
    panel.show()
    dag = panel.dag_view
    assert dag._items and not dag._stale
    graph, path = _trace(tmp_path)  # a short chain: the DAG would draw it, but it is not shown
    session.set_graph(graph, path)
    assert panel.shows_live_bytes()
    assert dag._stale and not dag._items
    session.hover_node(graph.nodes[0].name)  # hovering the hidden page's graph is harmless
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    assert not panel.shows_live_bytes()
    qtbot.waitUntil(lambda: not dag._stale and len(dag._items) == len(session.graph.nodes))
