"""What the panels need from a new graph or plan is made by the loading and planning workers,
so the GUI thread only shows it: the legends' kinds, the inspector's column widths, the lifetime
map's columns and name index, the slab bar's lanes at the peak step."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor

from slabscope.app.views.common.kind_legend import graph_kinds
from slabscope.app.views.common.lifetimes import placement_arrays, prepare_step_model
from slabscope.app.views.common.rect_layer import pick_fills
from slabscope.app.views.panels.inspector import _largest_sizes, prepare_widest
from slabscope.app.views.slab.slab_section import section_lanes, slab_section
from tests.qt_waits import show_tab


def test_the_workers_are_asked_for_what_the_panels_show(qtbot, window):
    show_tab(qtbot, window, "lifetime")  # the map behind the Slab tab has drawn nothing yet
    session = window.session
    assert {graph_kinds, _largest_sizes} <= set(session.prepare_graphs)
    assert {prepare_widest, prepare_step_model} <= set(session.prepare_plans)
    graph, plan = session.graph, session.plan
    assert window.slab_view.legend.kinds and set(window.slab_view.legend.kinds) <= graph_kinds(graph)
    columns = placement_arrays(plan, graph)
    assert columns.names == [p.name for p in plan.placements]
    assert columns.position == {p.name: i for i, p in enumerate(plan.placements)}
    assert list(columns.offsets) == [p.offset for p in plan.placements]
    # The map's boxes are looked up by the worker's index, not one built on the first hover.
    assert window.lifetime_view.layer._index_of is columns.position


def test_the_peak_steps_lanes_come_with_the_section(window):
    graph, plan = window.session.graph, window.session.plan
    section = slab_section(graph, plan)
    target = window.slab_view._layout_target
    live = section.live_at(section.peak_step)
    assert np.array_equal(section.peak_lanes, section_lanes(target, live))


def test_pick_fills_takes_by_index():
    fills = [QColor(i, 0, 0) for i in range(5)]
    assert pick_fills(fills, np.array([], dtype=np.int64)) == []
    assert pick_fills(fills, np.array([3])) == [fills[3]]
    assert pick_fills(fills, np.array([4, 0, 4])) == [fills[4], fills[0], fills[4]]


def test_the_raster_colours_are_the_fills_as_numbers(qtbot, window):
    show_tab(qtbot, window, "lifetime")
    for layer in (window.slab_view.layer, window.lifetime_view.layer):
        expected = [c.rgba() & 0xFFFFFF for c in layer._fills]
        assert layer._rgb is not None and layer._rgb.tolist() == expected


def test_the_session_makes_full_collections_rarer():
    import gc

    import slabscope.app.state.session  # noqa: F401  (what the window and exports import)
    from slabscope.app.state.heap import FULL_EVERY, calm_collector

    saved = gc.get_threshold()
    try:
        assert gc.get_threshold()[2] >= FULL_EVERY
        gc.set_threshold(saved[0], saved[1], 10)
        calm_collector()
        assert gc.get_threshold() == (saved[0], saved[1], FULL_EVERY)
        gc.set_threshold(saved[0], saved[1], 5 * FULL_EVERY)
        calm_collector()  # a rarer setting chosen elsewhere is kept
        assert gc.get_threshold()[2] == 5 * FULL_EVERY
    finally:
        gc.set_threshold(*saved)
