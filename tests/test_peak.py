"""The one definition of what is live at the live peak, shared by explain, diff and the window."""

from __future__ import annotations

from pathlib import Path

import pytest

from slabscope import planner
from slabscope.planner.analysis.peak import GROUPINGS, group, live_peak, supported_groupings
from tests.examples import RELU_UNFUSED
from tests.oracles import live_peak_from_scratch
from tests.snapshot_builder import TINY_SNAPSHOT

ADAM_STEP = Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json"


def test_the_peak_and_who_is_live_there_match_a_count_from_scratch():
    graph = planner.load(RELU_UNFUSED)
    peak = live_peak(graph)
    expected_bytes, expected_step, expected_live = live_peak_from_scratch(graph)
    assert (peak.bytes, peak.step, set(peak.buffers)) == (expected_bytes, expected_step, expected_live)
    sizes = [graph.reserved[b] for b in peak.buffers]
    assert sizes == sorted(sizes, reverse=True)


@pytest.mark.parametrize("grouping", GROUPINGS)
def test_every_grouping_adds_up_to_the_peak(grouping):
    graph = planner.load(RELU_UNFUSED)
    peak = live_peak(graph)
    groups = group(graph, peak, grouping)
    assert sum(g.bytes for g in groups) == peak.bytes
    assert sum(g.count for g in groups) == len(peak.buffers)


def test_a_snapshot_groups_by_kind_and_frame():
    graph = planner.load_snapshot(TINY_SNAPSHOT)
    assert supported_groupings(graph) == ("kind", "frame")
    peak = live_peak(graph)
    assert sum(g.bytes for g in group(graph, peak, "frame")) == peak.bytes


def test_an_unknown_grouping_is_refused():
    graph = planner.load(RELU_UNFUSED)
    with pytest.raises(ValueError, match="unknown grouping"):
        group(graph, live_peak(graph), "colour")


def test_a_buffer_is_attributed_to_the_first_node_that_names_it():
    # A recorded step stretches a weight's and an optimizer state's uses to the step's first
    # node (the first layer's op): the buffer is the op's that reads or writes it.
    graph = planner.load(ADAM_STEP)
    peak = live_peak(graph)
    schedule = planner.conflict_model(graph, "serial").schedule
    named = {}
    for n in schedule:
        node = graph.nodes[n]
        for name in (*node.outputs, *node.inputs, *node.workspace):
            named.setdefault(name, n)
    stretched = 0
    for b, n in zip(peak.buffers, peak.producers):
        buffer = graph.buffers[b]
        assert n == named[buffer.name]
        stretched += graph.nodes[n].name != buffer.uses[0]
    assert stretched > 0  # weights and optimizer state the first op never touches
    phases = {graph.nodes[n].attrs.get("phase") for b, n in zip(peak.buffers, peak.producers)
              if graph.buffers[b].kind == "optimizer_state"}
    assert phases == {"optimizer"}
    # No module runs the optimizer's ops: its state and temporaries group as the optimizer's.
    modules = {g.key: set(g.buffers) for g in group(graph, peak, "module")}
    assert modules["optimizer"] == {b for b, n in zip(peak.buffers, peak.producers)
                                    if graph.nodes[n].attrs.get("phase") == "optimizer"}


def test_without_operands_a_buffer_is_attributed_to_its_first_use():
    graph = planner.load(TINY_SNAPSHOT)
    peak = live_peak(graph)
    model = planner.conflict_model(graph, "serial")
    first = model.use_steps()[0]
    assert peak.producers == tuple(model.schedule[first[b]] for b in peak.buffers)
