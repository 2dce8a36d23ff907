"""The lifetime map: boxes over DAG layers or schedule steps, the peak, the lower bound, hover."""

from __future__ import annotations

import os
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.common.palette import ANCESTOR, DESCENDANT  # noqa: E402
from slabscope.app.views.lifetimes.lifetime_view import (HOVER_HINT, PYTORCH, LifetimeView,  # noqa: E402
                                                         buffer_lifetimes, dag_layers, packed_addresses)
from tests.examples import DIAMOND, RELU_UNFUSED  # noqa: E402


def make_view(qtbot, path=RELU_UNFUSED):
    session = Session()
    session.set_graph(planner.load(path), path)
    view = LifetimeView(session)
    qtbot.addWidget(view)
    view.resize(900, 500)
    view.show()
    qtbot.waitExposed(view)
    return session, view


def test_layers_are_longest_paths_from_a_source():
    graph = planner.load(DIAMOND)
    layer = dict(zip((n.name for n in graph.nodes), dag_layers(graph)))
    assert layer == {"a": 0, "b": 1, "c": 1, "d": 2}


def test_each_box_spans_its_buffers_lifetime_at_its_offset(qtbot):
    session, view = make_view(qtbot)
    # upload 0, lt_matmul 1, add_bias 2, relu 3, readback 4
    spans = {"x": (0, 1), "w": (0, 1), "b": (0, 2), "workspace": (1, 1), "t0": (1, 2),
             "t1": (2, 3), "y": (3, 4)}
    for name, (first, last) in spans.items():
        box = view.layer.rect_of(name)
        assert first < box.left() < first + 0.5 and last + 0.5 < box.right() < last + 1
        placement = session.plan.by_name[name]
        assert (box.top(), box.height()) == (placement.offset, placement.reserved)
    assert view.plot_widget.getPlotItem().getAxis("bottom").labelText == "DAG layer"


def test_the_slab_line_names_the_buffer_that_reaches_it_and_the_live_peak_step_is_marked(qtbot):
    session, view = make_view(qtbot)
    assert view.peak_line.isVisible()
    assert view.peak_line.value() == session.plan.slab_bytes == 1_196_288
    assert "reached by buffer t0" in view.summary.text()
    assert [text for _, text in view.mark_labels()] == ["slab = bound 1.14 MiB"]
    xs, ys = view.peak_marker.getData()
    assert list(ys) == [1_196_288]
    assert view.layer.rect_of("t0").left() < xs[0] < view.layer.rect_of("t0").right()


def test_the_lower_bound_line_follows_the_planner(qtbot, monkeypatch):
    calls = []

    def fake_lower_bound(graph, conflicts="dag", cancel=None):
        calls.append(conflicts)
        return SimpleNamespace(bytes=1_000_000, witness=("x",), conflicts=conflicts)

    monkeypatch.setattr(planner, "lower_bound", fake_lower_bound)
    session, view = make_view(qtbot)
    assert view.lower_bound_line.isVisible()
    assert view.lower_bound_line.value() == 1_000_000
    assert view.mark_labels() == [(1_196_288.0, "slab 1.14 MiB"), (1_000_000.0, "bound 977 KiB")]
    assert "gap " in view.summary.text()
    session.set_order(["t1", "y"])
    assert calls == ["dag"]  # computed once per graph and conflict model


def test_the_real_lower_bound_is_drawn(qtbot):
    session, view = make_view(qtbot)
    expected = planner.lower_bound(session.graph, conflicts="dag").bytes
    assert view.lower_bound_line.value() == expected <= session.plan.slab_bytes


def test_the_serial_model_uses_schedule_steps(qtbot):
    session, view = make_view(qtbot, DIAMOND)
    session.set_conflicts("serial")
    first, last, step_name = buffer_lifetimes(session.graph, "serial")
    assert step_name == "schedule step"
    assert view.plot_widget.getPlotItem().getAxis("bottom").labelText == "schedule step"
    index = session.graph.buffer_index
    for name in ("p", "q", "r"):
        box = view.layer.rect_of(name)
        assert int(box.left()) == first[index[name]]


def test_hover_and_node_highlight(qtbot):
    session, view = make_view(qtbot)
    assert view.hover_at(2.5, 100) == "t1"
    assert session.hovered_buffer == "t1"
    assert "conflicts" in view.details.full_text() and "add_bias, relu" in view.details.full_text()
    session.hover_buffer(None)
    session.hover_node("add_bias")
    outlined = view.layer.outlined()
    assert outlined == {"t0": ANCESTOR, "b": ANCESTOR, "t1": DESCENDANT}
    assert [(lo, hi) for lo, hi, _c, _t in view.layer._bands] == [(2, 3)]


def test_the_detail_line_follows_the_plan_and_the_file(qtbot):
    session, view = make_view(qtbot)
    view.hover_at(2.5, 100)
    assert view.details.full_text().startswith("t1")
    session.hover_buffer(None)  # the pointer left: the line clears ...
    assert view.details.full_text() == HOVER_HINT
    session.select_buffers(["t1"])  # ... unless the buffer is selected
    assert view.details.full_text().startswith("t1")
    session.set_order(["y", "t1"])  # ... and gives the new offset after a reorder
    assert f"offset {session.plan.by_name['t1'].offset:,}.." in view.details.full_text()
    session.set_graph(planner.load(DIAMOND), DIAMOND)  # another file: back to the hint
    assert view.details.full_text() == HOVER_HINT


def test_keys_zoom_both_axes(qtbot):
    _session, view = make_view(qtbot)
    (x0, x1), (y0, y1) = view.view_box.viewRange()
    qtbot.keyClick(view.plot_widget, "+")
    (a0, a1), (b0, b1) = view.view_box.viewRange()
    assert a1 - a0 < x1 - x0 and b1 - b0 < y1 - y0


def test_a_snapshot_can_show_where_pytorch_put_each_block(qtbot):
    from pathlib import Path

    snapshot = Path(__file__).resolve().parents[2] / "shared" / "snapshots" / "cs336_a2_magma27.pickle"
    if not snapshot.exists():
        pytest.skip("no snapshot in ../shared/snapshots")
    session = Session()
    session.set_graph(planner.load(snapshot), snapshot)
    view = LifetimeView(session)
    qtbot.addWidget(view)
    assert not view.placement_choice.isHidden()
    name = next(iter(session.graph.allocator.addresses))
    assert view.layer.rect_of(name).top() == session.plan.by_name[name].offset
    view.placement_choice.setCurrentText(PYTORCH)
    packed = packed_addresses(session.graph.allocator)
    assert view.layer.rect_of(name).top() == packed[name]
    assert max(packed.values()) < sum(size for _, size in session.graph.allocator.segments)
