"""Room for the DAG's labels, what lets a reader (and OCR, see bench/dag_ocr.py) read them in
the first view: edges never run over a box, the memory bar sits clear of the text, the text is
at least 11 px when a graph opens, and a chain's first view in the window's panel shows eight
boxes or more with their labels."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from PySide6.QtCore import QRectF, QSize
from PySide6.QtGui import QFontInfo, QFontMetricsF

from slabscope import planner
from slabscope.app.views.dag.dag_drawing import NODE_HEIGHT
from slabscope.app.views.dag.dag_layout import LAYER_CROSSINGS, NODE_GAP, WAYPOINT_WIDTH
from slabscope.app.views.dag.dag_prepared import box_name, op_line, prepared_dag
from slabscope.app.views.dag.dag_view import BAR_HEIGHT, BAR_INSET, DagView
from tests import qt_waits
from tests.examples import DIAMOND, RELU_UNFUSED

STEPS = Path(__file__).parent / "data" / "steps"
PANEL = QSize(678, 403)  # the window's DAG panel at its default size of 1440×900


def branchy(blocks: int = 4, width: int = 3) -> planner.Graph:
    """Blocks of `width` parallel ops of different name lengths joined by a concat, each concat
    also fed by every concat before it (a densenet's long skip edges)."""
    nodes, edges, joins = [{"name": "in", "op": "upload"}], [], ["in"]
    for b in range(blocks):
        concat = f"cat{b}"
        for k in range(width):
            name = f"b{b}_{'conv' * (k + 1)}{k}"
            nodes.append({"name": name, "op": "Conv" if k % 2 else "BatchNormalization"})
            edges += [[joins[-1], name], [name, concat]]
        nodes.append({"name": concat, "op": "Concat"})
        edges += [[j, concat] for j in joins[:-1]]
        joins.append(concat)
    return planner.graph_from_dict({"nodes": nodes, "edges": edges, "buffers": []})


def chain(length: int, peak_at: int | None = None, buffers: bool = True) -> planner.Graph:
    """A chain of Relu ops; with `buffers`, one per edge, the one out of `peak_at` large."""
    names = [f"n{i}" for i in range(length)]
    return planner.graph_from_dict({
        "nodes": [{"name": n, "op": "Relu"} for n in names],
        "edges": [[a, b] for a, b in zip(names, names[1:])],
        "buffers": [{"name": f"b{i}", "bytes": 4096 if i == peak_at else 256,
                     "uses": [f"n{i}", f"n{i + 1}"]} for i in range(length - 1)] if buffers else []})


def points_along(path, step: float = 1.0):
    """Points every `step` scene units along each flattened stretch of `path`."""
    for polygon in path.toSubpathPolygons():
        for a, b in zip(polygon, list(polygon)[1:]):
            length = max((b - a).manhattanLength(), 1e-9)
            count = int(length / step) + 1
            for k in range(count + 1):
                yield a + (b - a) * (k / count)


@pytest.mark.parametrize("make", [lambda: planner.load(DIAMOND), lambda: planner.load(RELU_UNFUSED),
                                  branchy], ids=["diamond", "relu_unfused", "branchy"])
def test_no_edge_runs_over_a_box(qapp, make):
    graph = make()  # measured with the fonts of a running application
    prepared = prepared_dag(graph)
    drawn = prepared.drawing()
    # A box with a pixel of its border left free: an edge may end on the border, not enter.
    boxes = [QRectF(x - w / 2, y - NODE_HEIGHT / 2, w, NODE_HEIGHT).adjusted(1, 1, -1, -1)
             for x, y, w in zip(drawn.x, drawn.y, prepared.widths)]
    long_edges = 0
    for src, dst, _band, path in drawn.edges:
        long_edges += prepared.layout.layer[dst] - prepared.layout.layer[src] > 1
        for point in points_along(path):
            hit = [i for i, box in enumerate(boxes) if box.contains(point)]
            assert not hit, (graph.nodes[src].name, graph.nodes[dst].name,
                             [graph.nodes[i].name for i in hit], point)
    assert long_edges or len(graph.nodes) < 6  # the branchy graph has edges past boxes


def shown_view(qtbot, graph, size=PANEL) -> DagView:
    return qt_waits.shown_view(qtbot, graph, size)


def test_labels_open_at_11_px_or_more_clear_of_the_bar(qtbot):
    view = shown_view(qtbot, branchy())
    scale = view.transform().m11()
    for font in (view.label_font, view.op_font):
        assert QFontInfo(font).pixelSize() * scale >= 11
        # The line, centred in the box above the bar, ends a pixel or more above the bar.
        line = QFontMetricsF(font).height()
        text_bottom = (NODE_HEIGHT - BAR_HEIGHT - BAR_INSET) / 2 + line / 2
        assert (NODE_HEIGHT - BAR_HEIGHT - BAR_INSET - text_bottom) * scale >= 1
    for item in view._items:  # the op and the name fit in their box
        width = sum(QFontMetricsF(f).horizontalAdvance(t)
                    for f, t in ((view.op_font, item.op_label), (view.label_font, item.label)))
        assert width < item.box.width()


@pytest.mark.parametrize("peak_at", [None, 40], ids=["start", "live_peak"])
def test_a_chains_first_view_in_the_window_panel_shows_eight_labels(qtbot, peak_at):
    view = shown_view(qtbot, chain(80, peak_at) if peak_at else chain(80, buffers=False))
    in_view = view.labels_in_view()
    shown = [lines for lines, _box in in_view if lines]
    assert len(shown) >= 8
    if peak_at is not None:  # opened on the live-peak node, which is among them
        assert any(view.shown_graph().nodes[view.peak_index].name in lines for lines in shown)
    else:  # opened on the start, its first row just under the top edge
        assert "n0" in shown[0] and 0 <= min(box.top() for _lines, box in in_view) <= 8


def fan(width: int = 9) -> planner.Graph:
    """One input fanned out to `width` ops of long names, joined by a concat: a row wider than
    the panel."""
    branches = [f"branch_{k}_with_a_long_name" for k in range(width)]
    return planner.graph_from_dict({
        "nodes": [{"name": "in", "op": "upload"}] + [{"name": b, "op": "Conv"} for b in branches]
        + [{"name": "cat", "op": "Concat"}],
        "edges": [["in", b] for b in branches] + [[b, "cat"] for b in branches], "buffers": []})


def test_a_wide_rows_first_view_moves_sideways_to_show_the_most_boxes_whole(qtbot):
    view = shown_view(qtbot, fan())
    shown = view.mapToScene(view.viewport().rect()).boundingRect()
    assert view.sceneRect().width() > shown.width()  # the row is wider than the panel

    def whole() -> set[str]:
        return {lines[0] for lines, _box in view.labels_in_view() if lines}

    opened = whole()
    assert "in" in opened  # the start stays in view
    # Merely centred on the start, the row under it shows fewer boxes whole.
    view.centerOn(view.node_position("in").x(), shown.center().y())
    assert len(opened) > len(whole())


def test_a_scope_path_name_shows_its_last_part_and_the_tooltip_the_whole_path(qtbot):
    assert (box_name("/layer1/layer1.0/conv1/Conv"), op_line("/layer1/layer1.0/conv1/Conv", "Conv")) \
        == ("Conv", "")
    assert (box_name("/layers.0/attn/Slice_1"), op_line("/layers.0/attn/Slice_1", "Slice")) \
        == ("Slice_1", "Slice")
    assert box_name("relu_2") == "relu_2" and box_name("/") == "/"
    graph = planner.graph_from_dict({
        "nodes": [{"name": "/stem/conv/Conv", "op": "Conv"}, {"name": "/stem/act/Relu", "op": "Relu"}],
        "edges": [["/stem/conv/Conv", "/stem/act/Relu"]], "buffers": []})
    view = shown_view(qtbot, graph)
    assert sorted(lines for lines, _box in view.labels_in_view()) == [("Conv",), ("Relu",)]
    assert "/stem/act/Relu" in view.tooltip(1)


def test_a_recorded_steps_box_says_its_op_once():
    assert (op_line("qkv · sum (backward) #2", "sum"), box_name("qkv · sum (backward) #2", "sum")) \
        == ("sum", "qkv (backward) #2")
    assert box_name("optimizer · fc.weight · add_", "add_") == "optimizer · fc.weight"
    assert box_name("fc · addmm", "add") == "fc · addmm"  # only the op as a whole word goes
    assert box_name("relu", "relu") == "relu"  # a name that is only its op stays


def mirrored(depth: int = 40) -> planner.Graph:
    """A forward chain whose every op also feeds its backward op, as a recorded training step's
    saved activations do: forward op k's edge to backward op k spans 2 * (depth - k) - 1
    layers."""
    forward, backward = [f"fwd{k}" for k in range(depth)], [f"bwd{k}" for k in range(depth)]
    return planner.graph_from_dict({
        "nodes": [{"name": n, "op": "Relu"} for n in forward + backward[::-1]],
        "edges": [[a, b] for a, b in zip(forward, forward[1:])] + [[forward[-1], backward[-1]]]
        + [[b, a] for a, b in zip(backward, backward[1:])]
        + [[f, b] for f, b in zip(forward[:-1], backward[:-1])], "buffers": []})


def test_long_edges_past_a_layers_crossings_are_stubs_and_rows_stay_narrow(qapp):
    graph = mirrored()
    prepared = prepared_dag(graph)
    layout = prepared.layout
    edges = [(v, s) for v, after in enumerate(graph.successors) for s in after]
    spans = [layout.layer[s] - layout.layer[v] for v, s in edges]
    crossings = Counter()
    for k, (v, s) in enumerate(edges):
        if k not in layout.stubs:
            crossings.update(range(layout.layer[v] + 1, layout.layer[s]))
    assert max(crossings.values()) <= LAYER_CROSSINGS
    routed = [span for k, span in enumerate(spans) if k not in layout.stubs]
    assert layout.stubs and min(spans[k] for k in layout.stubs) > max(routed)  # longest first
    # Two boxes side by side at most, where routing every edge made rows of 40 waypoints.
    assert layout.width < 2 * max(prepared.widths) + LAYER_CROSSINGS * (WAYPOINT_WIDTH + NODE_GAP)


def test_a_recorded_training_steps_first_view_shows_eight_labels(qtbot):
    view = shown_view(qtbot, planner.load(STEPS / "mlp_adam_step.json"))
    shown = [lines for lines, _box in view.labels_in_view() if lines]
    assert len(shown) >= 8, shown


def test_o_hides_the_overview_that_can_cover_boxes_and_shows_it_again(qtbot):
    from PySide6.QtCore import Qt

    view = shown_view(qtbot, chain(80, 40))
    assert view.minimap.isVisible()  # most of the chain is out of view
    qtbot.keyClick(view, Qt.Key.Key_O)
    assert not view.minimap.isVisible() and not view.minimap.wanted
    view.zoom(1.25)  # a move keeps it hidden
    assert not view.minimap.isVisible()
    qtbot.keyClick(view, Qt.Key.Key_O)
    assert view.minimap.isVisible()


def chain_into_fans(peak_at: int = 10, fan_at: int = 14, width: int = 6) -> planner.Graph:
    """A chain whose live peak is at node `peak_at`, then at `fan_at` three rows of `width`
    parallel ops joined again: the rows worth showing lie below the peak."""
    chain_names = [f"c{i}" for i in range(fan_at + 1)]
    rows = [[f"{row}{k}" for k in range(width)] for row in "fgh"]
    edges = [[a, b] for a, b in zip(chain_names, chain_names[1:])]
    edges += [[chain_names[-1], f] for f in rows[0]] + [[a, b] for upper, lower in
                                                      zip(rows, rows[1:]) for a, b in zip(upper, lower)]
    edges += [[h, "join"] for h in rows[-1]]
    return planner.graph_from_dict({
        "nodes": [{"name": n, "op": "Relu"} for n in chain_names + sum(rows, []) + ["join"]],
        "edges": edges,
        "buffers": [{"name": f"b{a}_{b}", "bytes": 4096 if a == f"c{peak_at}" else 256,
                     "uses": [a, b]} for a, b in edges]})


def test_the_first_view_puts_the_live_peak_on_the_row_that_shows_the_most_boxes(qtbot):
    view = shown_view(qtbot, chain_into_fans())
    peak = view.peak_index
    assert view.shown_graph().nodes[peak].name == "c10"
    opened = view._whole_boxes(peak)
    # Centred on the live peak's own row, as the first view was, fewer boxes are whole.
    view.centerOn(view._drawn.x[peak], view._drawn.y[peak])
    view._shift_to_whole_rows()
    view._shift_to_whole_boxes(peak)
    assert 0 < view._whole_boxes(peak) < opened


def test_a_view_too_small_for_the_live_peaks_box_centres_on_it(qtbot):
    view = shown_view(qtbot, chain_into_fans(), QSize(60, 120))  # narrower than a box
    peak = view.peak_index
    centre = view.mapToScene(view.viewport().rect()).boundingRect().center()
    assert abs(centre.y() - view._drawn.y[peak]) < NODE_HEIGHT
