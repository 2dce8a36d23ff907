"""Colouring a snapshot's blocks by their first user frame: the frames holding the most bytes
get a hue each and a legend entry, the rest are grey "other"; the lifetime map and the slab
bar offer the choice for snapshots only, share it through the view settings, and an export
draws it without the control."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtGui import QImage

from slabscope import planner
from slabscope.app.cli import main
from slabscope.app.render import build_view
from slabscope.app.state.session import Session
from slabscope.app.views.common.buffer_colours import (BY_CATEGORY, BY_FRAME, FRAME_HUES, OTHER_FRAMES,
                                                       OTHER_HUE, fills_for, frame_colours)
from slabscope.app.views.common.buffer_emphasis import buffer_fills
from slabscope.app.views.common.palette import shade
from slabscope.planner.formats.snapshot_names import user_site
from tests.examples import RELU_UNFUSED

REAL = Path(__file__).resolve().parents[2] / "shared" / "snapshots" / "cs336_a2_bcrafton.pickle"


@pytest.fixture(scope="module")
def snapshot() -> planner.Graph:
    if not REAL.exists():
        pytest.skip("no snapshot in ../shared/snapshots")
    return planner.load(REAL)


def test_the_frames_holding_most_bytes_get_a_hue_each(snapshot):
    colours = frame_colours(snapshot)
    named = [entry for entry in colours.legend if entry[1] != OTHER_FRAMES]
    assert len(named) == len(FRAME_HUES)
    assert [hue for hue, *_ in named] == list(FRAME_HUES)
    held = [entry[2] for entry in named]
    assert held == sorted(held, reverse=True)
    assert colours.legend[-1][:2] == (OTHER_HUE, OTHER_FRAMES)
    hue_of = {frame: hue for hue, frame, *_ in named}
    sites = [user_site(snapshot.allocator.full_stacks.get(b.name, ())) for b in snapshot.buffers]
    assert [fill.rgba() for fill in colours.fills] == \
        [shade(hue_of.get(site, OTHER_HUE), i).rgba() for i, site in enumerate(sites)]
    # Every block is in one legend entry: the counts add up.
    assert sum(entry[3] for entry in colours.legend) == len(snapshot.buffers)
    assert sum(entry[2] for entry in colours.legend) == sum(b.bytes for b in snapshot.buffers)


def test_the_map_and_the_bar_share_the_choice(qtbot, snapshot):
    session = Session()
    session.set_graph(snapshot, REAL)
    lifetimes, bar = build_view(session, "map"), build_view(session, "slab")
    for view in (lifetimes, bar):
        qtbot.addWidget(view)
        view.show()
    choice = lifetimes.colouring
    assert choice.combo.isVisible() and choice.combo.currentText() == BY_CATEGORY
    assert lifetimes.layer._fills == [buffer_fills(snapshot)[snapshot.buffer_index[n]]
                                      for n in lifetimes._names]
    choice.combo.setCurrentText(BY_FRAME)
    assert session.view.colours == "frame"
    frames = frame_colours(snapshot).fills
    assert lifetimes.layer._fills == [frames[snapshot.buffer_index[n]] for n in lifetimes._names]
    assert choice.frame_legend.isVisible() and not lifetimes.legend.isVisible()
    assert choice.frame_legend.text().count("&#9632;") == len(frame_colours(snapshot).legend)
    # The bar, shown again, follows.
    bar.hide()
    bar.show()
    assert bar.colouring.combo.currentText() == BY_FRAME
    assert bar.layer._fills == [frames[snapshot.buffer_index[n]] for n in bar._order]
    bar.colouring.combo.setCurrentText(BY_CATEGORY)
    assert session.view.colours == "kind" and bar.legend.isVisible()


def test_a_graph_without_stacks_is_coloured_by_kind(qtbot):
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    session.view.colours = "frame"
    view = build_view(session, "map")
    qtbot.addWidget(view)
    view.show()
    assert not view.colouring.combo.isVisible() and not view.colouring.frame_legend.isVisible()
    assert fills_for(session) == buffer_fills(session.graph)


def test_an_export_draws_the_frames_without_the_control(qapp, tmp_path, snapshot):
    kind, frame = tmp_path / "kind.png", tmp_path / "frame.png"
    assert main(["export", str(REAL), "--view", "map", "--png", str(kind)]) == 0
    assert main(["export", str(REAL), "--view", "map", "--colours", "frame",
                 "--png", str(frame)]) == 0
    assert QImage(str(kind)) != QImage(str(frame))
    session = Session()
    session.set_graph(snapshot, REAL)
    view = build_view(session, "map")
    view.enter_export()
    assert view.colouring.combo.isHidden()
    view.leave_export()
    view.deleteLater()
