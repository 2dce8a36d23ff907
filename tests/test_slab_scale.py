"""The slab bar at scale: the lower bound and the gap are always drawn, and the bar can show the
slab at one step (the buffers live then, as a cross-section of the lifetime map)."""

from __future__ import annotations

import os
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from slabscope import planner  # noqa: E402
import slabscope.app.views.slab.slab_view as slab_view_module  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.lifetimes.lifetime_view import LifetimeView  # noqa: E402
from slabscope.app.views.slab.slab_view import ALL_LANES, ONE_STEP, SlabView  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


def make_view(qtbot):
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    view = SlabView(session)
    qtbot.addWidget(view)
    view.resize(900, 320)
    view.show()
    qtbot.waitExposed(view)
    return session, view


def test_the_bound_and_the_gap_are_drawn(qtbot, monkeypatch):
    def fake_lower_bound(graph, conflicts="dag", cancel=None):
        return SimpleNamespace(bytes=1_000_000, witness=("x",), conflicts=conflicts)

    monkeypatch.setattr(planner, "lower_bound", fake_lower_bound)
    session, view = make_view(qtbot)
    slab = session.plan.slab_bytes
    assert view.bound_line.isVisible() and view.bound_line.value() == 1_000_000
    assert view.gap_band.isVisible() and view.gap_band.getRegion() == (1_000_000, slab)
    gap = slab - 1_000_000
    view.view_box.setXRange(900_000, slab * 1.05, padding=0)  # the gap is wide on screen
    assert view.bound_line.label.format == f"bound 977 KiB, gap 192 KiB ({gap / 1_000_000:.1%})"
    # Zoomed out until the gap is a few pixels, both read in one label left of the bound's
    # line (the leftmost), so that neither line crosses it.
    view.view_box.setXRange(0, slab * 50, padding=0)
    assert view.slab_end.label.format == ""
    assert view.bound_line.label.format == (f"slab end 1.14 MiB · bound 977 KiB, gap 192 KiB "
                                            f"({gap / 1_000_000:.1%})")
    assert "gap</b> 192 KiB" in view.summary.text()
    assert "lanes (buffers reusing bytes stack upward)" in view.summary.text()


def test_a_plan_at_its_bound_has_no_gap_band(qtbot):
    session, view = make_view(qtbot)
    assert view.bound_line.value() == session.plan.slab_bytes == session.lower_bound().bytes
    assert not view.gap_band.isVisible()
    assert view.bound_line.label.format == ""
    assert view.slab_end.label.format == "slab end = bound 1.14 MiB"


def live_names(session, step):
    lifetimes = LifetimeView(session)
    try:
        names = []
        for name in (p.name for p in session.plan.placements):
            box = lifetimes.layer.rect_of(name)
            if box.left() < step + 0.5 < box.right():
                names.append(name)
        return names
    finally:
        lifetimes.deleteLater()


def test_one_step_is_a_cross_section_of_the_lifetime_map_moved_by_the_slider(qtbot):
    session, view = make_view(qtbot)
    assert view.mode_choice.currentText() == ALL_LANES and view.section is None
    view.mode_choice.setCurrentText(ONE_STEP)
    section = view.section
    # Live bytes per step are largest at the step it opens on.
    assert view.section_step == section.peak_step == int(np.argmax(section.live_bytes))
    assert sorted(view.layer.shown_names()) == sorted(live_names(session, section.peak_step))
    assert f"DAG layer {section.peak_step}</b> (the live-peak step)" in view.summary.text()
    assert view.scrubber.isEnabled() and not view.play_button.isEnabled()
    for step in range(section.steps):
        view.scrubber.setValue(step)
        assert view.section_step == step
        assert sorted(view.layer.shown_names()) == sorted(live_names(session, step))
        shown = set(view.layer.shown_names())
        live_bytes = sum(session.plan.by_name[n].reserved for n in shown)
        assert live_bytes == section.live_bytes[step]
    view.handle_key(Qt.Key.Key_BracketLeft)
    assert view.section_step == section.steps - 2
    view.mode_choice.setCurrentText(ALL_LANES)
    assert view.section is None and len(view.layer.shown_names()) == len(session.plan.placements)


def test_a_bar_of_many_lanes_opens_at_its_peak_step(qtbot, monkeypatch):
    monkeypatch.setattr(slab_view_module, "SECTION_LANES", 1)
    session, view = make_view(qtbot)
    assert view.mode_choice.currentText() == ONE_STEP
    assert view.section_step == view.section.peak_step
    # A new plan of the same graph keeps the step and the mode.
    view.scrubber.setValue(0)
    session.set_order(["t1", "t0"])
    assert view.mode_choice.currentText() == ONE_STEP and view.section_step == 0
