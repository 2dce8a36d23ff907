"""The slab bar at one step keeps its left axis title whole beside a bar a few lanes high."""

from __future__ import annotations

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.slab.slab_view import ONE_STEP, SlabView
from tests.examples import write_slow_search_trace


def test_the_one_step_axis_title_fits_beside_a_short_bar(qtbot, tmp_path):
    trace = write_slow_search_trace(tmp_path / "trace.csv")  # 1,087 schedule steps
    session = Session()
    session.set_graph(planner.load(trace), trace)
    view = SlabView(session)
    qtbot.addWidget(view)
    view.resize(1200, 260)  # about the Slab dock of the window at its default size
    view.show()
    qtbot.waitExposed(view)
    view.mode_choice.setCurrentText(ONE_STEP)
    view.show_step(1_000)
    title = view.plot_widget.getPlotItem().getAxis("left").labelText
    assert view.fontMetrics().horizontalAdvance(title) <= view.view_box.height()
    assert "step 1,000" in view.summary.text()  # the step is said where there is room
