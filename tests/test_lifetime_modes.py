"""The lifetime map's lines say what they mean in both placement modes, and their margin labels
stack apart when they would touch on screen."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.common.byte_axis import format_bytes  # noqa: E402
from slabscope.app.views.common.margin_marks import place_marks  # noqa: E402
from slabscope.app.views.lifetimes.lifetime_view import (PLANNED, PYTORCH, LifetimeView, packed_addresses)  # noqa: E402
from tests.snapshot_builder import TINY_SNAPSHOT  # noqa: E402

REAL_SNAPSHOT = Path(__file__).resolve().parents[2] / "shared" / "snapshots" / "cs336_a2_bcrafton.pickle"


def snapshot_view(qtbot, path):
    session = Session()
    session.set_graph(planner.load(path), path)
    view = LifetimeView(session)
    qtbot.addWidget(view)
    view.resize(1000, 600)
    view.show()
    qtbot.waitExposed(view)
    return session, view


def check_both_modes(session, view):
    plan, trace = session.plan, session.graph.allocator
    bound = session.lower_bound().bytes
    view.placement_choice.setCurrentText(PLANNED)
    assert view.drawn_lines() == {"slab": plan.slab_bytes, "bound": bound}
    tops = [p.offset + p.reserved for p in plan.placements]
    assert max(tops) == plan.slab_bytes
    reaching = [p.name for p in plan.placements if p.offset + p.reserved == plan.slab_bytes]
    assert any(f"reached by {word} {reaching[0]}" in view.summary.text()
               for word in ("buffer", "buffers"))

    view.placement_choice.setCurrentText(PYTORCH)
    packed = packed_addresses(trace)
    by_name = plan.by_name
    pytorch_tops = {n: at + by_name[n].reserved for n, at in packed.items()}
    pytorch_peak = max(pytorch_tops.values())
    extent = sum(size for _, size in trace.segments)
    assert view.drawn_lines() == {"slab": pytorch_peak, "bound": bound,
                                  "plan": plan.slab_bytes, "reserved": extent}
    # No box of a shown block lies above the peak line, and the header names one that reaches it.
    assert all(top <= pytorch_peak for top in pytorch_tops.values())
    first = next(n for n in (p.name for p in plan.placements) if pytorch_tops.get(n) == pytorch_peak)
    assert any(f"reached by {word} {first}" in view.summary.text()
               for word in ("buffer", "buffers"))
    assert "PyTorch's highest address" in view.summary.text()
    labels = " · ".join(text for _, text in view.mark_labels())
    for number in (pytorch_peak, extent, plan.slab_bytes, bound):
        assert format_bytes(number) in labels
    xs, ys = view.peak_marker.getData()
    assert set(ys) == {pytorch_peak}


def test_lines_match_the_numbers_in_both_modes_on_a_tiny_snapshot(qtbot):
    session, view = snapshot_view(qtbot, TINY_SNAPSHOT)
    check_both_modes(session, view)


def test_lines_match_the_numbers_in_both_modes_on_a_real_snapshot(qtbot):
    if not REAL_SNAPSHOT.exists():
        pytest.skip("no snapshot in ../shared/snapshots")
    session, view = snapshot_view(qtbot, REAL_SNAPSHOT)
    check_both_modes(session, view)


def test_labels_stack_by_pixels_and_merge_only_when_equal():
    peak, bound = 3.78 * 2**30, 3.58 * 2**30
    marks = [(bound, "bound 3.58 GiB"), (peak, "peak 3.78 GiB")]
    # 0.2 GiB is 2 px on a 40 GiB-tall, 400 px view: the bound's label moves one line down.
    pixels = 400 / (40 * 2**30)
    (top, top_text), (below, below_text) = place_marks(marks, pixels, 16)
    assert (top, top_text, below_text) == (peak, "peak 3.78 GiB", "bound 3.58 GiB")
    assert (top - below) * pixels == pytest.approx(16)
    # The same gap on a 4 GiB-tall, 400 px view is 20 px: each label at its line.
    assert place_marks(marks, 400 / (4 * 2**30), 16) == [marks[1], marks[0]]
    assert place_marks([(10.0, "peak 10 B"), (10.0, "bound 10 B")], 1.0, 16) == \
        [(10.0, "peak = bound 10 B")]
