"""The slab bar: lanes, hover, highlights, the first-fit replay and the re-plan tween (offscreen)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.common.byte_axis import ByteAxis, format_bytes  # noqa: E402
from slabscope.app.views.common.palette import ANCESTOR, CONFLICT_OUTLINE, DESCENDANT  # noqa: E402
from slabscope.app.views.slab.slab_lanes import slab_lanes  # noqa: E402
from slabscope.app.views.slab.slab_view import SlabView  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


@pytest.fixture
def session():
    s = Session()
    s.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    return s


@pytest.fixture
def view(qtbot, session):
    widget = SlabView(session)
    qtbot.addWidget(widget)
    widget.resize(900, 320)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_boxes_sit_at_the_plans_offsets_and_reuse_stacks_above(view, session):
    offsets = {"x": 0, "w": 65_536, "b": 131_072, "workspace": 131_328, "t0": 1_179_904,
               "t1": 0, "y": 16_384}
    for name, offset in offsets.items():
        box = view.layer.rect_of(name)
        assert box.x() == offset
        assert box.width() == session.plan.by_name[name].reserved
    lanes = dict(zip(session.plan.order, slab_lanes(session.plan.placements)))
    assert lanes == {"x": 0, "w": 0, "b": 0, "workspace": 0, "t0": 0, "t1": 1, "y": 1}
    assert view.layer.rect_of("t1").y() > view.layer.rect_of("x").bottom()
    assert "1,196,288" in view.summary.text()
    assert view.legend.kinds == ("input", "workspace", "intermediate", "output")


def test_stepping_visits_every_request_in_order_with_the_traces_conflicts(view, session):
    plan = session.plan
    seen = []
    for _ in plan.steps:
        view.animation.step_forward()
        step = plan.steps[view.animation.current_step]
        seen.append(step.name)
        assert view.highlighted_conflicts() == step.conflicts
        outlined = view.layer.outlined()
        assert {n for n, c in outlined.items() if c == CONFLICT_OUTLINE} == set(step.conflicts)
        assert view.layer.shown_names() == list(plan.order[:step.request + 1])
        assert view.layer.rect_of(step.name).x() == step.offset
        assert step.narration() in view.narration_label.text()
    assert seen == list(plan.order)
    view.animation.step_forward()  # stays on the last request
    assert view.animation.current_step == len(plan.steps) - 1


def test_the_t1_step_outlines_b_and_t0_and_lands_in_xs_bytes(view):
    for _ in range(6):
        view.animation.step_forward()
    assert view.animation.current_step == 5
    assert view.highlighted_conflicts() == ("b", "t0")
    assert view.layer.rect_of("t1").x() == 0
    assert view.animation.narration.endswith("t1 conflicts with b and t0; lands at 0, in x's bytes")
    view.animation.step_back()
    assert view.animation.step.name == "t0"
    view.animation.show_plan()
    assert view.animation.current_step is None
    assert view.narration_label.text() == ""
    assert len(view.layer.shown_names()) == 7


def test_skipped_gaps_are_drawn_as_bands(qtbot):
    # c conflicts with a and b but not with the small buffer between them, so it skips that gap.
    graph = planner.graph_from_dict({
        "alignment": 1,
        "nodes": ["s", "m", "e"],
        "edges": [["s", "m"], ["m", "e"]],
        "buffers": [{"name": "a", "bytes": 4, "uses": ["s", "e"]},
                    {"name": "gap", "bytes": 2, "uses": ["s"]},
                    {"name": "b", "bytes": 4, "uses": ["s", "e"]},
                    {"name": "c", "bytes": 4, "uses": ["m", "e"]}]})
    session = Session()
    session.set_graph(graph)
    step = session.plan.steps[3]
    assert step.skipped_gaps, "the example must make first fit skip a gap"
    widget = SlabView(session)
    qtbot.addWidget(widget)
    for _ in range(4):
        widget.animation.step_forward()
    assert [(lo, hi) for lo, hi, _c, _t in widget.layer._bands] == list(step.skipped_gaps)
    widget.resize(500, 300)
    widget.show()
    widget.grab()  # paint: the gap's label is drawn whole however narrow its band
    assert widget.layer.drawn_band_labels == [f"{hi - lo} B < 4 B" for lo, hi in step.skipped_gaps]


def test_play_advances_on_a_timer_and_stops_at_the_end(view, session, qtbot):
    view.animation.set_speed(200)
    view.animation.play()
    assert view.animation.playing
    assert view.play_button.text() == "Pause"
    qtbot.waitUntil(lambda: not view.animation.playing, timeout=3000)
    assert view.animation.current_step == len(session.plan.steps) - 1
    assert view.play_button.text() == "Play"


def test_pause_keeps_the_step(view, qtbot):
    view.animation.set_speed(0.5)
    view.animation.play()
    view.animation.pause()
    assert not view.animation.playing
    assert view.animation.current_step == 0


def test_hover_reports_the_buffer_and_its_details(view, session):
    assert view.hover_at(20_000, 1.5) == "y"
    assert session.hovered_buffer == "y"
    text = view.details.full_text()
    for part in ("y", "16,384", "reserved", "offset 16,384..32,768", "relu, readback",
                 "conflicts t1"):
        assert part in text
    assert "uses: relu, readback" in view.plot_widget.toolTip()
    assert view.hover_at(2_000_000, 0.5) is None
    assert session.hovered_buffer is None


def test_pointer_motion_over_a_box_hovers_it(view, session, qtbot):
    box = view.layer.rect_of("workspace")
    scene_point = view.view_box.mapViewToScene(box.center())
    widget_point = view.plot_widget.mapFromScene(scene_point)
    qtbot.mouseMove(view.plot_widget.viewport(), widget_point)
    qtbot.waitUntil(lambda: session.hovered_buffer == "workspace", timeout=2000)


def test_hovered_node_outlines_what_it_reads_and_writes_and_dims_the_rest(view, session):
    session.hover_node("relu")
    outlined = view.layer.outlined()
    assert outlined == {"t1": ANCESTOR, "y": DESCENDANT}
    assert view.layer.opacity_of("x") < 255
    assert view.layer.opacity_of("t1") == 255
    session.hover_node(None)
    assert view.layer.outlined() == {}
    session.select_buffers(["w"])
    assert set(view.layer.outlined()) == {"w"}


def test_click_selects_a_buffer(view, session):
    view._clicked("x", Qt.KeyboardModifier.NoModifier)
    view._clicked("w", Qt.KeyboardModifier.ControlModifier)
    assert session.selection == ("x", "w")
    view._clicked(None, Qt.KeyboardModifier.NoModifier)
    assert session.selection == ()


def test_a_reorder_tweens_from_the_old_layout_to_the_new(view, session, qtbot):
    session.set_order(["t1", "y", "x", "w", "b", "workspace", "t0"])
    assert view.tween.running
    qtbot.waitUntil(lambda: not view.tween.running, timeout=2000)
    for placement in session.plan.placements:
        assert view.layer.rect_of(placement.name).x() == placement.offset
    session.undo_stack.undo()
    view.tween.finish()
    assert view.layer.rect_of("t1").x() == 0
    assert view.layer.rect_of("x").x() == 0


def test_a_plan_error_empties_the_bar_and_says_why(view, session):
    session.set_capacity(1000)
    assert view.layer.names == []
    assert "capacity exceeded" in view.summary.text()
    session.set_capacity(None)
    assert len(view.layer.names) == 7


def test_keys_zoom_pan_and_drive_the_replay(view, qtbot):
    (x0, x1), _ = view.view_box.viewRange()
    qtbot.keyClick(view.plot_widget, Qt.Key.Key_Plus)
    (z0, z1), _ = view.view_box.viewRange()
    assert z1 - z0 < x1 - x0
    qtbot.keyClick(view.plot_widget, Qt.Key.Key_Right)
    (p0, _p1), _ = view.view_box.viewRange()
    assert p0 > z0
    qtbot.keyClick(view.plot_widget, Qt.Key.Key_BracketRight)
    assert view.animation.current_step == 0
    qtbot.keyClick(view.plot_widget, Qt.Key.Key_Escape)
    assert view.animation.current_step is None


def test_byte_axis_labels_in_binary_units(qapp):
    assert format_bytes(1_196_288) == "1.14 MiB"
    assert format_bytes(256) == "256 B"
    axis = ByteAxis("bottom")
    levels = axis.tickSpacing(0, 1_196_288, 800)
    assert levels[0][0] % 1024 == 0
    assert axis.tickStrings([0, 204_800], 1, 204_800) == ["0 KiB", "200 KiB"]


def test_each_step_drops_the_request_into_its_lane(view, qtbot):
    view.animation.step_forward()
    assert view.tween.running
    qtbot.waitUntil(lambda: not view.tween.running, timeout=2000)
    assert view.layer.rect_of("x").y() == pytest.approx(view._target[2, 0])


def test_a_replan_during_the_replay_keeps_the_step(view, session):
    for _ in range(3):
        view.animation.step_forward()
    session.set_order(["y", "t1"])
    assert view.animation.current_step == 2
    assert view.animation.step.name == session.plan.steps[2].name
    with pytest.raises(ValueError):
        view.animation.set_speed(0)


def test_tall_plans_let_the_lanes_zoom(qtbot):
    # Forty buffers used by one node each along a chain all reuse the same bytes: forty lanes.
    nodes = [f"n{i}" for i in range(40)]
    graph = planner.graph_from_dict({
        "nodes": nodes, "edges": [[a, b] for a, b in zip(nodes, nodes[1:])],
        "buffers": [{"name": f"b{i}", "bytes": 256, "uses": [f"n{i}"]} for i in range(40)]})
    session = Session()
    session.set_graph(graph)
    widget = SlabView(session)
    qtbot.addWidget(widget)
    assert len(set(slab_lanes(session.plan.placements))) == 40
    assert widget.view_box.state["mouseEnabled"] == [True, True]
    (_x0, _x1), (y0, y1) = widget.view_box.viewRange()
    widget.handle_key(Qt.Key.Key_Plus)
    (_a, _b), (z0, z1) = widget.view_box.viewRange()
    assert z1 - z0 < y1 - y0
