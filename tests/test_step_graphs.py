"""Without torch: recorded training steps (committed, from `torch_trace --step`) read back with
their kinds and schedule, written back unchanged, and re-planned with each buffer freed at its
last access (never above the recorded order's live peak)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.planner.analysis.peak import group, live_peak, supported_groupings
from slabscope.planner.formats.graph_writer import graph_to_dict, write_graph
from slabscope.planner.recording.dataflow import dataflow_lifetimes

STEPS = Path(__file__).parent / "data" / "steps"
FILES = ("mlp_adam_step.json", "block_sgd_step.json")


@pytest.fixture(scope="module", params=FILES)
def step(request):
    return planner.load(STEPS / request.param)


def test_a_recorded_step_reads_back_with_kinds_schedule_and_modules(step):
    assert {b.kind for b in step.buffers} == {"weight", "gradient", "optimizer_state", "input",
                                              "activation", "temporary"}
    assert len(step.schedule) == len(step.nodes)
    ends = {step.schedule[0], step.schedule[-1]}
    assert all(ends <= set(b.uses) for b in step.buffers if b.kind in ("weight", "optimizer_state"))
    peak = live_peak(step)
    assert "module" in supported_groupings(step)
    for grouping in ("kind", "module", "op"):
        assert sum(g.bytes for g in group(step, peak, grouping)) == peak.bytes
    # Every gradient is made in backward, every optimizer op runs after the last backward op.
    phases = [step.nodes[step.node_index[name]].attrs["phase"] for name in step.schedule]
    assert phases.index("optimizer") > max(i for i, p in enumerate(phases) if p == "backward")


def test_a_recorded_step_is_planned_in_its_recorded_order_by_default(step):
    assert step.conflicts == planner.default_conflicts(step) == "serial"
    plan = planner.plan(step, conflicts=planner.default_conflicts(step))
    assert plan.conflict_model == "serial" and planner.verify(step, plan).ok
    assert planner.lower_bound(step, "serial").bytes == live_peak(step).bytes
    # Asked for, the dag model still plans it, and needs more: it keeps apart buffers the
    # recorded order never had live together.
    dag = planner.plan(step, conflicts="dag")
    assert dag.conflict_model == "dag" and dag.slab_bytes > plan.slab_bytes


def test_writing_a_step_and_reading_it_back_changes_nothing(step, tmp_path):
    write_graph(step, tmp_path / "again.json")
    again = planner.load(tmp_path / "again.json")
    assert (again.nodes, again.buffers, set(again.edges), again.schedule, again.order,
            again.conflicts) == \
        (step.nodes, step.buffers, set(step.edges), step.schedule, step.order, step.conflicts)
    assert graph_to_dict(again) == json.loads((tmp_path / "again.json").read_text())


def test_freed_at_last_use_and_reordered_never_needs_more_than_the_recorded_step(step):
    recorded = live_peak(step).bytes
    freed = dataflow_lifetimes(step)
    standing = {b.name: b.uses for b in step.buffers if b.kind in ("weight", "optimizer_state")}
    assert all(freed.buffer(name).uses[0] == step.schedule[0] and
               freed.buffer(name).uses[-1] == step.schedule[-1] for name in standing)
    assert live_peak(freed).bytes <= recorded
    best = planner.schedule(freed, iterations=50, budget=2.0)
    assert best.peak_bytes <= live_peak(freed).bytes
    ordered = planner.with_schedule(freed, best.order)
    assert live_peak(ordered).bytes == best.peak_bytes
    plan = planner.plan(ordered, conflicts="serial")
    assert planner.verify(ordered, plan).ok and plan.slab_bytes >= best.peak_bytes


def test_the_mlp_step_frees_gradients_early_once_updates_may_move():
    step = planner.load(STEPS / "mlp_adam_step.json")
    best = planner.schedule(dataflow_lifetimes(step), iterations=50, budget=2.0)
    assert best.peak_bytes < 0.9 * live_peak(step).bytes
    # The first update runs before the last gradient is made: the optimizer step moved into
    # backward.
    position = {name: i for i, name in enumerate(best.order)}
    nodes = {node.name: node for node in step.nodes}
    first_update = min(position[n] for n in best.order if nodes[n].attrs["phase"] == "optimizer")
    last_backward = max(position[n] for n in best.order if nodes[n].attrs["phase"] == "backward")
    assert first_update < last_backward
