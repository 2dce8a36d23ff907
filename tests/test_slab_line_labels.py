"""The slab bar's line labels: the slab end's and the bound's sit in a row above the boxes (never
over a box or its name, in lanes or at one step), a merged label sits left of both lines (no
line crosses it), an empty label draws nothing, and the summary keeps the buffer count with the
words before it."""

from __future__ import annotations

import os
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.slab.slab_view import ALL_LANES, ONE_STEP, SlabView  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


@pytest.fixture
def view(qtbot, monkeypatch):
    def fake_lower_bound(graph, conflicts="dag", cancel=None):
        return SimpleNamespace(bytes=1_000_000, witness=("x",), conflicts=conflicts)

    monkeypatch.setattr(planner, "lower_bound", fake_lower_bound)
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    bar = SlabView(session)
    qtbot.addWidget(bar)
    bar.resize(900, 260)
    bar.show()
    qtbot.waitExposed(bar)
    return bar


def _label_box(line, view):
    """The label's rectangle in data coordinates (bytes, lanes)."""
    rect = line.label.sceneBoundingRect()
    top_left = view.view_box.mapSceneToView(rect.topLeft())
    bottom_right = view.view_box.mapSceneToView(rect.bottomRight())
    return top_left.x(), bottom_right.x(), bottom_right.y(), top_left.y()  # left, right, low, high


def _boxes_top(view) -> float:
    """The highest top edge of the boxes on show within the bytes in view."""
    (x0, x1), _ = view.view_box.viewRange()
    x, width, y, height = view._target
    in_view = view._shown_mask() & (x < x1) & (x + width > x0)
    return float((y + height)[in_view].max())


@pytest.mark.parametrize("mode", [ALL_LANES, ONE_STEP])
def test_line_labels_sit_above_the_boxes(qtbot, view, mode):
    view.mode_choice.setCurrentText(mode)
    slab = view.session.plan.slab_bytes
    view.view_box.setXRange(900_000, slab * 1.05, padding=0)  # the gap is wide: two labels
    view.grab()  # laid out and painted: the labels are where they are drawn
    assert view.slab_end.label.isVisible() and view.bound_line.label.isVisible()
    top = _boxes_top(view)
    for line in (view.slab_end, view.bound_line):
        left, right, low, high = _label_box(line, view)
        assert low >= top  # the whole label is above every box
        assert right <= line.value() + 1e-6 * slab  # left of its own line
    # The slab end's label keeps clear of the bound's line, and the bound's of the end's.
    end_left, _, _, _ = _label_box(view.slab_end, view)
    assert end_left > view.bound_line.value()


def test_a_merged_label_sits_left_of_both_lines(qtbot, view):
    slab = view.session.plan.slab_bytes
    view.view_box.setXRange(0, slab * 50, padding=0)  # the gap is a few pixels
    view.grab()
    assert not view.slab_end.label.isVisible()  # empty: no white fill drawn for it
    label = view.bound_line.label
    assert label.isVisible() and label.format.startswith("slab end ")
    left, right, _, _ = _label_box(view.bound_line, view)
    for value in (view.bound_line.value(), view.slab_end.value()):
        assert not left < value < right  # no line crosses it
    view.view_box.setXRange(900_000, slab * 1.05, padding=0)
    assert view.slab_end.label.isVisible() and view.slab_end.label.format.startswith("slab end")


def test_the_buffer_count_stays_with_the_words_before_it(qtbot, view):
    plan = view.session.plan
    assert (f"{plan.conflict_model}&nbsp;conflicts,&nbsp;{len(plan.placements):,}&nbsp;buffers"
            in view.summary.text())
