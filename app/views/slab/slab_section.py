"""The slab at one step: which buffers are live at a step of the lifetime map, how many bytes they
hold, and the step where that is most. No Qt here: the planning worker computes it per plan."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.common.lifetimes import step_model
from slabscope.app.views.common.peak_headline import graph_live_peak
from slabscope.app.views.slab.slab_lanes import slab_layout, stacked_lanes


@dataclass(frozen=True)
class SlabSection:
    """Lifetimes of a plan's boxes (in the slab layout's order) and bytes live per step."""

    first: np.ndarray        # first step of each box
    last: np.ndarray         # last step of each box
    step_name: str           # "DAG layer" or "schedule step"
    live_bytes: np.ndarray   # reserved bytes live at each step
    peak_step: int           # the live peak's step (docs/peak.md), in this step model
    peak_lanes: np.ndarray   # `section_lanes` at the peak step, where the bar opens

    @property
    def steps(self) -> int:
        """How many steps there are."""
        return len(self.live_bytes)

    def live_at(self, step: int) -> np.ndarray:
        """Per box, whether it is live at `step`."""
        return (self.first <= step) & (step <= self.last)


def _section(plan, graph) -> SlabSection:
    layout = slab_layout(graph, plan)
    model = step_model(graph, plan.conflict_model)
    first_all, last_all, step_name = model.first, model.last, model.step_name
    rows = np.asarray(layout.rows, dtype=np.int64)
    first = np.asarray(first_all, dtype=np.int64)[rows]
    last = np.asarray(last_all, dtype=np.int64)[rows]
    steps = int(last.max()) + 1 if last.size else 1
    delta = np.zeros(steps + 1, dtype=np.float64)  # float: sums of large slabs pass int64 rarely
    reserved = layout.target[1]
    np.add.at(delta, first, reserved)
    np.add.at(delta, last + 1, -reserved)
    live = np.cumsum(delta[:steps])
    # The live peak's node, in this model's steps (a DAG layer or the schedule step): every panel
    # marks the same step.
    node = graph_live_peak(graph).node
    peak = min(model.node_step.get(node, int(np.argmax(live))), steps - 1) if node is not None else 0
    lanes = section_lanes(layout.target, (first <= peak) & (peak <= last))
    return SlabSection(first, last, step_name, live, peak, lanes)


_sections = IdentityCache(_section)


def slab_section(graph, plan) -> SlabSection:
    """`plan`'s boxes over the steps of `graph`, computed once per plan (in the planning worker
    once the slab bar has asked for it with `Session.prepare_plans`)."""
    return _sections(plan, graph)


def section_lanes(target: np.ndarray, live: np.ndarray) -> np.ndarray:
    """Per box, its lane among the boxes live at one step (0 for the others): live boxes that
    share bytes (possible where the conflict model lets them) stack as in the whole bar."""
    lanes = np.zeros(target.shape[1])
    picked = np.flatnonzero(live)
    starts = target[0, picked].astype(np.uint64)
    ends = (target[0, picked] + target[1, picked]).astype(np.uint64)
    lanes[picked] = stacked_lanes(starts, ends)
    return lanes
