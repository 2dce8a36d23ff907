"""`planner.diff` and `slabscope diff`: two runs compared, the live peak's difference attributed
exactly by every grouping."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.analysis.diff import common_groupings
from slabscope.planner.analysis.peak import live_peak
from tests.examples import DIAMOND, RELU_FUSED, RELU_UNFUSED
from tests.oracles import live_peak_from_scratch
from tests.snapshot_builder import TINY_SNAPSHOT, SnapshotBuilder, py_frame

PT2 = Path(__file__).parent / "data" / "pt2"
ROW_KEYS = {"key", "a_bytes", "b_bytes", "difference_bytes", "a_count", "b_count"}
SIDE_KEYS = {"file", "peak_live_bytes", "peak_step", "slab_bytes", "lower_bound_bytes",
             "conflicts", "reserved_bytes"}


def assert_adds_up(result):
    """Every grouping's rows add up to a's live peak, b's, and the difference."""
    a, b = result.a.peak, result.b.peak
    for name, rows in result.attribution.items():
        assert sum(r.a_bytes for r in rows) == a.bytes, name
        assert sum(r.b_bytes for r in rows) == b.bytes, name
        assert sum(r.difference_bytes for r in rows) == result.peak_live_difference_bytes, name
        assert sum(r.a_count for r in rows) == len(a.buffers)
        assert sum(r.b_count for r in rows) == len(b.buffers)
        sizes = [abs(r.difference_bytes) for r in rows]
        assert sizes == sorted(sizes, reverse=True)


@st.composite
def programs(draw):
    """A random chain program: nodes with ops and modules, buffers of a few kinds."""
    n = draw(st.integers(1, 7))
    names = [f"n{i}" for i in range(n)]
    ops = ["matmul", "relu", "softmax", None]
    nodes = [{"name": name, **({"op": op} if (op := draw(st.sampled_from(ops))) else {}),
              "attrs": {"module": draw(st.sampled_from(["", "enc", "enc.attn", "head"]))}}
             for name in names]
    buffers = []
    for b in range(draw(st.integers(1, 10))):
        first = draw(st.integers(0, n - 1))
        last = draw(st.integers(first, n - 1))
        buffers.append({"name": f"b{b}", "bytes": draw(st.integers(0, 5000)),
                        "kind": draw(st.sampled_from(["weight", "input", "intermediate"])),
                        "uses": list(dict.fromkeys([names[first], names[last]]))})
    return planner.graph_from_dict({"alignment": draw(st.sampled_from([1, 64])), "nodes": nodes,
                                    "edges": [[x, y] for x, y in zip(names, names[1:])],
                                    "buffers": buffers})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(), programs())
def test_every_grouping_adds_up_on_random_programs(a, b):
    result = planner.diff(a, b)
    assert set(result.attribution) == set(common_groupings(a, b))
    assert_adds_up(result)
    swapped = planner.diff(b, a)
    assert swapped.peak_live_difference_bytes == -result.peak_live_difference_bytes


def snapshot(path, seed: int, blocks: int):
    """A generated snapshot: blocks of seeded sizes from a few user frames, some freed."""
    import random

    rng = random.Random(seed)
    builder = SnapshotBuilder()
    builder.segment(0, blocks << 20)
    live = []
    for i in range(blocks):
        line = rng.choice([10, 20, 30, 40])
        builder.alloc(i << 20, rng.randint(1, 1 << 20) & ~511 or 512,
                      [py_frame("/src/model.py", line, "forward")])
        live.append(i << 20)
        if rng.random() < 0.4:
            builder.free(live.pop(rng.randrange(len(live))))
    return builder.write(path)


@pytest.mark.parametrize("seeds", [(1, 2), (3, 4), (5, 5)])
def test_generated_snapshots_add_up_by_frame_and_kind(tmp_path, seeds):
    a = planner.load(snapshot(tmp_path / "a.pickle", seeds[0], 30))
    b = planner.load(snapshot(tmp_path / "b.pickle", seeds[1], 40))
    result = planner.diff(a, b)
    assert set(result.attribution) == {"kind", "frame"}
    assert_adds_up(result)
    assert result.a.reserved_bytes == a.allocator.peak_reserved_bytes
    # Each side's live peak is the most bytes allocated at once, read from the trace's events.
    for path, figures in ((tmp_path / "a.pickle", result.a), (tmp_path / "b.pickle", result.b)):
        assert figures.peak.bytes == _peak_from_events(path)


def _peak_from_events(path) -> int:
    """The most bytes allocated at once, by walking a snapshot's alloc and free events."""
    events = pickle.loads(path.read_bytes())["device_traces"][0]
    live = peak = 0
    for event in events:
        live += {"alloc": event["size"], "free_completed": -event["size"]}.get(event["action"], 0)
        peak = max(peak, live)
    return peak


def test_identical_files_give_zero_and_swapping_negates():
    same = planner.diff(planner.load(RELU_UNFUSED), planner.load(RELU_UNFUSED))
    assert same.peak_live_difference_bytes == 0
    assert all(r.difference_bytes == 0 for rows in same.attribution.values() for r in rows)
    forward = planner.diff(planner.load(RELU_UNFUSED), planner.load(DIAMOND))
    backward = planner.diff(planner.load(DIAMOND), planner.load(RELU_UNFUSED))
    assert forward.peak_live_difference_bytes == -backward.peak_live_difference_bytes != 0
    for name, rows in forward.attribution.items():
        back = {r.key: r.difference_bytes for r in backward.attribution[name]}
        assert {r.key: -r.difference_bytes for r in rows} == back
    assert_adds_up(forward)


def test_diff_agrees_with_the_shared_peak_and_the_planner():
    a, b = planner.load(RELU_UNFUSED), planner.load(RELU_FUSED)
    result = planner.diff(a, b)
    assert result.a.peak.bytes == live_peak(a).bytes
    assert result.b.slab_bytes == planner.plan(b, conflicts=planner.default_conflicts(b)).slab_bytes
    assert result.b.lower_bound_bytes == planner.lower_bound(b, planner.default_conflicts(b)).bytes


def test_cli_json_has_exactly_the_keys(capsys):
    assert main(["diff", str(RELU_UNFUSED), str(RELU_FUSED), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"a", "b", "peak_live_difference_bytes", "attribution"}
    assert set(data["a"]) == set(data["b"]) == SIDE_KEYS
    assert data["a"]["file"] == str(RELU_UNFUSED)
    assert data["peak_live_difference_bytes"] == (data["b"]["peak_live_bytes"]
                                                  - data["a"]["peak_live_bytes"])
    assert set(data["attribution"]) == {"op", "kind"}
    for rows in data["attribution"].values():
        assert all(set(r) == ROW_KEYS for r in rows)
        assert sum(r["difference_bytes"] for r in rows) == data["peak_live_difference_bytes"]


def test_cli_text_report_on_snapshots(capsys, tmp_path):
    b = snapshot(tmp_path / "b.pickle", 7, 12)
    assert main(["diff", str(TINY_SNAPSHOT), str(b), "--conflicts", "serial"]) == 0
    text = capsys.readouterr().out
    assert "at its live peak. The largest changes by frame: model.py:" in text
    assert "in its slab" in text and "reserved by PyTorch" in text


def test_each_side_is_planned_under_its_own_model_and_names_it(capsys):
    step = Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json"
    assert main(["diff", str(DIAMOND), str(step), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["a"]["conflicts"], data["b"]["conflicts"]) == ("dag", "serial")
    assert main(["diff", str(DIAMOND), str(step), "--conflicts", "dag"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "(dag conflicts)" in lines[0] and "(dag conflicts)" in lines[1]


def test_cli_bad_input_is_one_line_and_exit_2(capsys, tmp_path):
    missing = tmp_path / "missing.json"
    assert main(["diff", str(RELU_UNFUSED), str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.json" in err


def test_exported_programs_attribute_by_module_and_match_a_count_from_scratch():
    a, b = (planner.load(PT2 / name) for name in ("mlp.pt2", "attention.pt2"))
    result = planner.diff(a, b)
    assert set(result.attribution) == {"op", "kind", "module"}
    assert_adds_up(result)
    for graph, figures in ((a, result.a), (b, result.b)):
        peak, step, live = live_peak_from_scratch(graph)
        assert (figures.peak.bytes, figures.peak.step, set(figures.peak.buffers)) == (peak, step, live)
