"""Where the slab bar draws a plan: the lane of each buffer, so that reused bytes stack visibly,
and each box's place. No Qt here: the planning worker lays out each plan as it makes it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.planner.model.intervals import distinct


def slab_lanes(placements) -> list[int]:
    """Per placement (in request order), the lane it rests in when stacked on the earlier ones.

    Buffers fall in request order onto the buffers already drawn over their bytes: a buffer
    lands one lane above the highest earlier buffer it overlaps, or in lane 0 on bare bytes. Buffers
    that share bytes therefore sit in different lanes, and reuse stacks upwards in request order.
    This is only a drawing choice; the plan decides the bytes. One skyline over the distinct
    offsets makes it a slice maximum per buffer (62,000 buffers in a fraction of a second).
    """
    count = len(placements)
    # Unsigned: offsets and ends run up to 2^64 - 1, past int64 (a plan's slab never passes it).
    starts = np.fromiter((p.offset for p in placements), dtype=np.uint64, count=count)
    ends = np.fromiter((p.end for p in placements), dtype=np.uint64, count=count)
    return stacked_lanes(starts, ends)


def stacked_lanes(starts: np.ndarray, ends: np.ndarray) -> list[int]:
    """`slab_lanes` over byte ranges [starts[i], ends[i]) given as arrays, in drawing order."""
    count = len(starts)
    edges = distinct(np.concatenate((starts, ends)))  # np.unique hashes: 4x slower
    first = np.searchsorted(edges, starts).tolist()
    last = np.searchsorted(edges, ends).tolist()
    skyline = np.zeros(max(len(edges), 1), dtype=np.int64)  # lanes taken above each elementary span
    lanes = [0] * count
    for i, (a, b) in enumerate(zip(first, last)):
        if b <= a:  # an empty buffer still takes the span it starts in
            b = a + 1
        lane = int(skyline[a:b].max())
        lanes[i] = lane
        skyline[a:b] = lane + 1
    return lanes


LANE_FILL = 0.86  # share of a lane's height a box covers


@dataclass(frozen=True)
class SlabLayout:
    """Where the slab bar draws a plan: one box per placement, in request order."""

    order: list[str]                 # buffer names
    position: dict[str, int]         # name -> box
    lanes: np.ndarray                # lane per box
    target: np.ndarray               # 4 x n: offset, reserved bytes, lane bottom, height
    rows: list[int]                  # the graph's buffer index per box


def _layout(plan, graph) -> SlabLayout:
    placements = plan.placements
    order = [p.name for p in placements]
    lanes = np.array(slab_lanes(placements), dtype=float)
    target = np.array([[p.offset for p in placements], [p.reserved for p in placements],
                       lanes + (1 - LANE_FILL) / 2, np.full(len(placements), LANE_FILL)],
                      dtype=float).reshape(4, len(placements))
    index = graph.buffer_index
    return SlabLayout(order, {n: i for i, n in enumerate(order)}, lanes, target,
                      [index[n] for n in order])


MIN_LANE_PIXELS = 6  # a lane lower than this draws its boxes as slivers, too thin to point at
MIN_BOX_PIXELS = 3   # a box narrower than this is a hairline at the slab's full width
LEGIBLE_SHARE = 0.5  # lanes are worth drawing when at least this share of the boxes is legible


def lanes_legible(layout: SlabLayout, slab_bytes: int, width: float, height: float,
                  headroom: float) -> bool:
    """Whether the bar's lanes, fitted to a plot `width` x `height` pixels showing the whole
    slab, draw each lane at least `MIN_LANE_PIXELS` high and most boxes at least
    `MIN_BOX_PIXELS` wide. `headroom`: lanes left free above the top one."""
    count = int(layout.lanes.max()) + 1 if layout.lanes.size else 1
    if height / (count + headroom) < MIN_LANE_PIXELS:
        return False
    widths = layout.target[1] * (width / max(float(slab_bytes), 1.0))
    return bool(widths.size == 0 or (widths >= MIN_BOX_PIXELS).mean() >= LEGIBLE_SHARE)


# Undo and redo bring back earlier plan objects: their layout is kept, not recomputed.
_layouts = IdentityCache(_layout)


def slab_layout(graph, plan) -> SlabLayout:
    """The slab bar's layout of `plan` (a plan of `graph`), computed once per plan (in the
    planning worker when the slab bar asked for it with `Session.prepare_plans`)."""
    return _layouts(plan, graph)
