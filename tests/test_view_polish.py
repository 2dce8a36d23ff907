"""Polish of the window's panels: the step axis fits the data, the request list says what it
waits for, busy badges cover no text, the slab bar's lanes stay readable."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.lifetimes.lifetime_view import STEP_FIT_PIXELS, LifetimeView  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402
from tests.held_executor import HeldExecutor  # noqa: E402


@pytest.mark.parametrize("width", [420, 1400])
def test_the_step_axis_ends_at_the_data_within_a_few_pixels(qtbot, width):
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    view = LifetimeView(session)
    qtbot.addWidget(view)
    view.resize(width, 400)
    view.show()
    qtbot.waitExposed(view)
    view.view_box.autoRange()
    (x0, x1), _ = view.view_box.viewRange()
    bounds = view.layer.boundingRect()
    left, right = bounds.left(), bounds.right()
    per_pixel = (x1 - x0) / view.view_box.width()
    assert 0 <= (left - x0) / per_pixel <= STEP_FIT_PIXELS + 1
    assert 0 <= (x1 - right) / per_pixel <= STEP_FIT_PIXELS + 1


def write_trace(path, count: int):
    """A MiniMalloc trace of `count` short-lived buffers."""
    rows = ["id,lower,upper,size"] + [f"{i},{i},{i + 3},{64 * (1 + i % 7)}" for i in range(count)]
    path.write_text("\n".join(rows) + "\n")
    return path


def test_the_request_list_says_what_it_waits_for_and_then_lists_the_requests(qtbot, tmp_path):
    from slabscope.app.views.panels.request_list import RequestList

    session = Session()
    executor = HeldExecutor()
    session.use_executor(executor)
    panel = RequestList(session)
    qtbot.addWidget(panel)
    panel.resize(260, 400)
    panel.show()
    qtbot.waitExposed(panel)
    assert panel.view.placeholder().startswith("No graph open")
    trace = write_trace(tmp_path / "many.csv", 5000)
    session.open(trace)
    assert panel.view.placeholder().startswith("Loading many.csv…")
    executor.run_next()  # the load; the plan waits, as it would while the worker plans
    assert session.graph is not None and session.plan is None
    assert panel.view.placeholder() == "Listing 5,000 requests…"  # laid out a batch a turn
    qtbot.waitUntil(lambda: panel.view.placeholder() is None)
    assert session.plan is None  # the rows are on show while the plan is still on its way
    top = panel.view.indexAt(panel.view.viewport().rect().topLeft())
    assert top.data() == session.order[0]
    picture = panel.view.viewport().grab().toImage()
    assert picture.pixelColor(8, panel.view.visualRect(top).center().y()) != picture.pixelColor(
        picture.width() - 1, picture.height() - 1)  # the first row's swatch is drawn


def test_busy_badges_cover_no_text_in_the_window_at_any_size(qtbot):
    from PySide6.QtCore import QRectF
    from PySide6.QtWidgets import QAbstractButton
    from slabscope.app.window import MainWindow
    from tests.qt_waits import settled

    window = MainWindow(Session())
    qtbot.addWidget(window)
    assert window.open_path(RELU_UNFUSED)
    window.show()
    settled(qtbot, window)
    long_text = "Searching… best so far 1.14 MiB, 0.00% above the bound (provisional)"
    for size in ((1440, 900), (1000, 640), (760, 520)):
        window.resize(*size)
        qtbot.waitUntil(lambda: window.width() == size[0])
        for name in ("slab", "lifetime", "inspector"):
            overlay = window.busy_overlays[name]
            overlay.set_text(long_text)
            dock = window.docks[name]
            badge = overlay.badge_rect()
            # Below the title bar, inside the panel, nothing is covered.
            assert badge.bottom() <= dock.widget().geometry().top(), (name, size)
            title = dock.fontMetrics().horizontalAdvance(dock.windowTitle())
            assert badge.isEmpty() or badge.left() > title, (name, size)
            for button in dock.findChildren(QAbstractButton):
                if button.isVisible() and button.parentWidget() is dock:
                    assert not badge.intersects(QRectF(button.geometry())), (name, size)
            overlay.set_text(None)
    # The DAG panel has no title bar: with a graph to cover, it gets no badge.
    window.busy_overlays["graph"].set_text("Loading…")
    assert window.busy_overlays["graph"].badge_rect().isEmpty()
    window.busy_overlays["graph"].set_text(None)



def transformer_graph(tmp_path, layers: int):
    """A generated transformer (16 tokens, width 32, 2 heads) of `layers` blocks, loaded."""
    from slabscope.gpu.generators import transformer, write_graph

    path = tmp_path / f"transformer{layers}.json"
    write_graph(transformer(16, 32, 2, layers=layers), path)
    return planner.load(path), path


def slab_bar(qtbot, width: int, height: int, graph=None, path=None):
    """A slab bar of `width` x `height` pixels; given a graph, it is planned before the bar
    exists (as an export builds it) rather than after it is on screen."""
    from slabscope.app.views.slab.slab_view import SlabView

    session = Session()
    if graph is not None:
        session.set_graph(graph, path)
    view = SlabView(session)
    qtbot.addWidget(view)
    view.resize(width, height)
    view.show()
    qtbot.waitExposed(view)
    return session, view


def test_the_slab_bar_chooses_lanes_or_one_step_from_pixels(qtbot, tmp_path):
    from slabscope.app.views.slab.slab_lanes import MIN_LANE_PIXELS
    from slabscope.app.views.slab.slab_view import ALL_LANES, ONE_STEP, SECTION_LANES

    graph, path = transformer_graph(tmp_path, 4)
    # The same 24-lane plan: legible lanes in a tall bar, slivers in a short one.
    session, tall = slab_bar(qtbot, 1200, 900)
    session.set_graph(graph, path)
    lanes = int(tall._lanes.max()) + 1
    assert lanes < SECTION_LANES  # a lane count alone would keep the lanes
    assert tall.view_box.height() / lanes >= MIN_LANE_PIXELS
    assert tall.mode_choice.currentText() == ALL_LANES and tall.section is None
    session, short = slab_bar(qtbot, 1200, 260)
    session.set_graph(graph, path)
    assert short.view_box.height() / lanes < MIN_LANE_PIXELS
    assert short.mode_choice.currentText() == ONE_STEP and short.section is not None
    assert "(the live-peak step)" in short.summary.text()
    # The choice follows the bar's size until the user picks a mode; theirs then holds.
    tall.resize(1200, 260)
    qtbot.waitUntil(lambda: tall.mode_choice.currentText() == ONE_STEP)
    tall.mode_choice.setCurrentText(ALL_LANES)
    tall.resize(1200, 240)
    qtbot.waitUntil(lambda: tall.view_box.height() < short.view_box.height())
    assert tall.mode_choice.currentText() == ALL_LANES and tall.section is None
    # Planned before the bar had its size (as an export does): chosen once the size is known.
    _session, built_late = slab_bar(qtbot, 1200, 260, graph, path)
    qtbot.waitUntil(lambda: built_late.mode_choice.currentText() == ONE_STEP)
    # The example's two lanes stay lanes in a short bar; the user's choice always holds.
    relu = planner.load(RELU_UNFUSED)
    _session, small = slab_bar(qtbot, 700, 260, relu, RELU_UNFUSED)
    assert small.mode_choice.currentText() == ALL_LANES
    chosen = Session()
    chosen.set_graph(graph, path)
    chosen.view.slab = "lanes"  # as a session file or `export --slab-view lanes` sets it
    from slabscope.app.views.slab.slab_view import SlabView

    kept = SlabView(chosen)
    qtbot.addWidget(kept)
    kept.resize(1200, 260)
    kept.show()
    qtbot.waitExposed(kept)
    assert kept.mode_choice.currentText() == ALL_LANES


def test_a_wide_transformers_hairline_lanes_open_at_one_step_in_any_bar(qtbot, tmp_path):
    from slabscope.app.views.slab.slab_view import ONE_STEP

    from slabscope.gpu.generators import transformer, write_graph

    path = tmp_path / "transformer12.json"
    write_graph(transformer(64, 256, 4, layers=12), path)
    graph = planner.load(path)
    # 73 lanes of boxes mostly under 3 px wide beside 36 MiB of weights: even a tall bar
    # would draw them as hairlines at the left.
    session, view = slab_bar(qtbot, 1200, 1400)
    session.set_graph(graph, path)
    assert view.mode_choice.currentText() == ONE_STEP
    assert set(view.layer.shown_names()) < {p.name for p in session.plan.placements}


def test_an_empty_slab_bar_names_its_lanes_without_a_scale(qtbot):
    _session, view = slab_bar(qtbot, 900, 300)
    axis = view.plot_widget.getPlotItem().getAxis("left")
    assert axis.labelString().find("x0.") == -1 and "lanes" in axis.labelString()
