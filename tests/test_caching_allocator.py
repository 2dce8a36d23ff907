"""The caching-allocator model: each rule on hand-made requests, snapshot and graph replays,
the `allocator` command, and invariants on random request sequences."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.allocator.allocator_replay import replay_graph, replay_snapshot
from slabscope.planner.allocator.caching_allocator import (AllocatorOutOfMemory, AllocatorSettings,
                                                           CachingAllocator, allocation_size, round_size)
from tests.snapshot_builder import TINY_SNAPSHOT, SnapshotBuilder

MiB = 1 << 20
SHARED_SNAPSHOTS = Path(__file__).resolve().parents[2] / "shared" / "snapshots"
EXAMPLES = Path(__file__).resolve().parents[1] / "assets" / "example_graphs"


def sizes_made(model: CachingAllocator) -> list[int]:
    return [c.size for c in model.stats.creations]


# --- the rules ---------------------------------------------------------------------------

def test_sizes_round_to_512_bytes():
    plain = AllocatorSettings()
    assert [round_size(n, plain) for n in (0, 1, 512, 513, 1025)] == [512, 512, 512, 1024, 1536]


def test_roundup_power2_divisions_round_to_the_next_division():
    four = AllocatorSettings(roundup_power2_divisions=(4,) * 16)
    # 1.2 MiB lies between 1 and 2 MiB, whose quarters are 1, 1.25, 1.5, 1.75 MiB.
    assert round_size(int(1.2 * MiB), four) == int(1.25 * MiB)
    assert round_size(2 * MiB, four) == 2 * MiB  # a power of 2 stays
    assert round_size(1500, four) == 1536  # not above 512 x divisions: plain rounding
    # The snapshot's form: divisions keyed by the interval's start in MiB.
    from_snapshot = AllocatorSettings.from_snapshot({"roundup_power2_divisions": {"1": 4}})
    assert round_size(int(1.2 * MiB), from_snapshot) == int(1.25 * MiB)
    assert round_size(int(2.2 * MiB), from_snapshot) == int(2.2 * MiB) // 512 * 512 + 512


def test_segment_sizes_per_pool():
    assert allocation_size(512) == allocation_size(MiB) == 2 * MiB          # small pool
    assert allocation_size(MiB + 512) == allocation_size(10 * MiB - 512) == 20 * MiB
    assert allocation_size(10 * MiB) == 10 * MiB
    assert allocation_size(11 * MiB + 512) == 12 * MiB                     # rounded to 2 MiB
    model = CachingAllocator()
    model.malloc(100)
    model.malloc(3 * MiB)
    model.malloc(25 * MiB)
    assert sizes_made(model) == [2 * MiB, 20 * MiB, 26 * MiB]
    assert [c.small for c in model.stats.creations] == [True, False, False]


def test_best_fit_by_stream_then_size():
    model = CachingAllocator()
    big, small_one = model.malloc(40 * MiB), model.malloc(24 * MiB)
    model.free(big)
    model.free(small_one)
    chosen = model.malloc(22 * MiB)
    assert chosen.segment.size == 24 * MiB  # the smallest cached block that fits
    other_stream = model.malloc(22 * MiB, stream=7)
    assert other_stream.segment.size == 22 * MiB and len(model.stats.creations) == 3


def test_small_blocks_split_down_to_512_byte_remainders():
    model = CachingAllocator()
    a = model.malloc(MiB)
    b = model.malloc(MiB - 512)
    c = model.malloc(512)  # the last 512 B of the same 2 MiB segment
    assert a.segment is b.segment is c.segment
    assert (a.size, b.size, c.size) == (MiB, MiB - 512, 512)
    assert sizes_made(model) == [2 * MiB]


def test_large_blocks_split_only_above_1_mib_remainders():
    model = CachingAllocator()
    whole = model.malloc(19 * MiB)  # 1 MiB would remain: not split
    assert whole.size == 20 * MiB
    model.free(whole)
    part = model.malloc(18 * MiB - 512)  # 2 MiB + 512 remain: split off
    assert part.size == 18 * MiB - 512
    assert [b.size for b in model.free_blocks()] == [2 * MiB + 512]


def test_free_neighbours_merge_within_a_segment_never_across():
    model = CachingAllocator()
    first = model.malloc(19 * MiB)
    second = model.malloc(19 * MiB)
    assert second.segment.addr == first.segment.addr + 20 * MiB  # adjacent segments
    model.free(first)
    model.free(second)
    assert sorted(b.size for b in model.free_blocks()) == [20 * MiB, 20 * MiB]
    model.malloc(30 * MiB)  # 40 MiB free in two segments is not one 30 MiB block
    assert sizes_made(model) == [20 * MiB, 20 * MiB, 30 * MiB]
    # Within one segment, a freed block joins both free neighbours.
    model = CachingAllocator()
    a, b, c = model.malloc(4 * MiB), model.malloc(4 * MiB), model.malloc(4 * MiB)
    model.free(a)
    model.free(c)
    model.free(b)
    assert [blk.size for blk in model.free_blocks()] == [20 * MiB]


def test_freed_segments_stay_cached():
    model = CachingAllocator()
    block = model.malloc(50 * MiB)
    model.free(block)
    assert model.stats.reserved == 50 * MiB
    model.malloc(45 * MiB)
    assert sizes_made(model) == [50 * MiB]


def test_max_split_size_keeps_oversize_blocks_whole_and_for_large_requests():
    model = CachingAllocator(AllocatorSettings(max_split_size=8 * MiB))
    oversize = model.malloc(12 * MiB)
    model.free(oversize)
    model.malloc(4 * MiB)  # a request under the limit never takes an oversize block
    assert sizes_made(model) == [12 * MiB, 20 * MiB]
    whole = model.malloc(10 * MiB)  # takes the 12 MiB block (within 20 MiB) and does not split it
    assert whole.size == 12 * MiB
    model = CachingAllocator(AllocatorSettings(max_split_size=8 * MiB))
    model.free(model.malloc(40 * MiB))
    model.malloc(12 * MiB)  # 40 MiB is 20 MiB or more above 12 MiB: not handed out
    assert sizes_made(model) == [40 * MiB, 12 * MiB]


def test_expandable_segments_grow_one_segment_per_stream():
    model = CachingAllocator(AllocatorSettings(expandable_segments=True))
    first = model.malloc(5 * MiB)
    second = model.malloc(30 * MiB)
    assert first.segment is second.segment
    assert sizes_made(model) == [20 * MiB, 20 * MiB]  # 20 MiB pages for the large pool
    assert model.stats.reserved == 40 * MiB  # without: 20 MiB + 30 MiB segments
    plain = CachingAllocator()
    plain.malloc(5 * MiB)
    plain.malloc(30 * MiB)
    assert plain.stats.reserved == 50 * MiB


def test_out_of_memory_frees_cached_segments_then_fails():
    model = CachingAllocator(capacity=31 * MiB)
    model.free(model.malloc(512))  # a cached 2 MiB small segment
    model.malloc(30 * MiB)  # 32 MiB would pass the capacity: the cached segment goes first
    assert model.stats.released == [(model.stats.creations[0].addr, 2 * MiB)]
    with pytest.raises(AllocatorOutOfMemory, match="capacity"):
        model.malloc(30 * MiB)


def test_a_released_segment_must_be_wholly_free():
    model = CachingAllocator()
    block = model.malloc(30 * MiB)
    assert not model.release_segment(block.segment.addr)
    model.free(block)
    assert model.release_segment(block.segment.addr) and model.stats.reserved == 0


# --- snapshot replays --------------------------------------------------------------------

def recorded_run() -> SnapshotBuilder:
    """A trace whose segments are where the real allocator's rules put them.

    Segment A (20 MiB) predates recording and holds w (4 MiB). x (4 MiB) is split off A's free
    rest; y (30 MiB) needs segment B; a 1000 B request needs small segment C; y is freed and
    B released (empty_cache); z (30 MiB) needs a new segment D.
    """
    a, b, c, d = 0x7F0000000000, 0x7F0010000000, 0x7F0020000000, 0x7F0030000000
    builder = SnapshotBuilder()
    builder.segment(a, 20 * MiB, record=False)
    builder.alloc(a, 4 * MiB, record=False)
    builder.alloc(a + 4 * MiB, 4 * MiB)
    builder.segment(b, 30 * MiB)
    builder.alloc(b, 30 * MiB)
    builder.segment(c, 2 * MiB, segment_type="small")
    builder.alloc(c, 1024)
    builder.free(a + 4 * MiB)
    builder.free(b)
    builder.release(b)
    builder.segment(d, 30 * MiB)
    builder.alloc(d, 30 * MiB)
    return builder


def test_snapshot_replay_predicts_each_recorded_segment(tmp_path):
    path = recorded_run().write(tmp_path / "run.pickle")
    replay = replay_snapshot(path)
    assert replay.recorded_segments == (30 * MiB, 2 * MiB, 30 * MiB)
    assert replay.segments_created == replay.recorded_segments
    assert replay.matched_in_order == 3
    assert replay.placements_matched == replay.allocs == 4
    assert replay.initial_reserved_bytes == 20 * MiB
    assert replay.peak_reserved_bytes == replay.recorded_peak_reserved_bytes == 52 * MiB
    assert replay.recorded_segment_frees == 1
    assert replay.peak_reserved_bytes == planner.load_snapshot(path).allocator.peak_reserved_bytes


def test_snapshot_replay_reports_segments_it_did_not_predict(tmp_path):
    builder = SnapshotBuilder()
    builder.segment(0x10000000, 20 * MiB, record=False)
    builder.segment(0x20000000, 20 * MiB)  # the model serves this request from segment 1
    builder.alloc(0x20000000, 4 * MiB)
    replay = replay_snapshot(builder.write(tmp_path / "odd.pickle"))
    assert replay.recorded_segments == (20 * MiB,)
    assert replay.segments_created == () and replay.matched_in_order == 0


def test_blocks_from_before_recording_keep_their_unsplit_rest(tmp_path):
    # w was allocated before recording with a 960 KiB rest too small to split off; the trace
    # only says it asked for 4 MiB, but x's alloc shows where the free block after w began.
    base = 0x7F0000000000
    builder = SnapshotBuilder()
    builder.segment(base, 20 * MiB, record=False)
    builder.alloc(base, 4 * MiB + 960 * 1024, record=False)
    builder.alloc(base + 4 * MiB + 960 * 1024, 2 * MiB)
    builder.free(base + 4 * MiB + 960 * 1024)
    builder.free(base)
    freed = builder.traces[0][-1]
    assert freed["action"] == "free_completed" and freed["addr"] == base
    freed["size"] = 4 * MiB  # PyTorch records the requested size, not the block's
    replay = replay_snapshot(builder.write(tmp_path / "rest.pickle"))
    assert replay.placements_matched == replay.allocs == 1
    assert replay.segments_created == ()


def test_snapshot_what_ifs_change_the_settings(tmp_path):
    path = recorded_run().write(tmp_path / "run.pickle")
    replay = replay_snapshot(path, expandable_segments=True, max_split_size=64 * MiB)
    assert replay.settings.expandable_segments and replay.settings.max_split_size == 64 * MiB
    assert replay.peak_reserved_bytes >= replay.peak_live_bytes


def test_expandable_snapshot_replay_follows_segment_maps(tmp_path):
    import pickle

    base = 0x602000000
    trace = [{"action": action, "addr": addr, "size": size, "stream": 0, "time_us": k,
              "frames": []}
             for k, (action, addr, size) in enumerate([
                 ("segment_map", base, 20 * MiB), ("alloc", base, 16 * MiB),
                 ("segment_map", base + 20 * MiB, 20 * MiB), ("alloc", base + 16 * MiB, 16 * MiB),
                 ("free_requested", base + 16 * MiB, 16 * MiB),
                 ("free_completed", base + 16 * MiB, 16 * MiB),
                 ("segment_unmap", base + 20 * MiB, 20 * MiB)])]
    blocks = [{"address": base, "size": 16 * MiB, "requested_size": 16 * MiB,
               "state": "active_allocated", "frames": []},
              {"address": base + 16 * MiB, "size": 4 * MiB, "requested_size": 0,
               "state": "inactive", "frames": []}]
    data = {"segments": [{"device": 0, "address": base, "total_size": 20 * MiB, "stream": 0,
                          "segment_type": "large", "is_expandable": True, "blocks": blocks}],
            "device_traces": [trace], "allocator_settings": {"expandable_segments": True}}
    path = tmp_path / "expandable.pickle"
    path.write_bytes(pickle.dumps(data))
    replay = replay_snapshot(path)
    assert replay.settings.expandable_segments
    assert replay.segments_created == replay.recorded_segments == (20 * MiB, 20 * MiB)
    assert replay.matched_in_order == 2 and replay.placements_matched == 2
    assert replay.peak_reserved_bytes == replay.recorded_peak_reserved_bytes == 40 * MiB
    assert replay.step_reserved[-1] == 20 * MiB  # the unmapped free end went back


def test_tiny_snapshot_replays():
    replay = replay_snapshot(TINY_SNAPSHOT)
    assert len(replay.recorded_segments) == 2 and replay.allocs == 4
    assert len(replay.step_reserved) == len(planner.load_snapshot(TINY_SNAPSHOT).schedule)


@pytest.mark.parametrize("name", ["cs336_a2_magma27.pickle", "cs336_a2_bcrafton.pickle"])
def test_shared_snapshots_replay_without_spurious_segments(name):
    path = SHARED_SNAPSHOTS / name
    if not path.exists():
        pytest.skip(f"shared snapshots not present ({SHARED_SNAPSHOTS})")
    replay = replay_snapshot(path)
    trace = planner.load_snapshot(path).allocator
    assert replay.recorded_segments == () and replay.segments_created == ()
    assert replay.peak_reserved_bytes == trace.peak_reserved_bytes
    assert replay.peak_live_bytes == trace.peak_allocated_bytes
    assert replay.placements_matched == replay.allocs  # every block where PyTorch put it


# --- graph replays and the command ---------------------------------------------------------

def test_graph_replay_allocates_at_first_use_and_frees_after_last():
    graph = planner.load(EXAMPLES / "diamond.json")
    replay = replay_graph(graph)
    assert replay.segments_created == (2 * MiB,)
    assert replay.peak_live_bytes == max(replay.step_live)
    assert len(replay.step_reserved) == len(graph.schedule or graph.nodes)


def test_allocator_command_json(tmp_path, capsys):
    path = recorded_run().write(tmp_path / "run.pickle")
    assert main(["allocator", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["segments_created"] == data["recorded_segments"] == [30 * MiB, 2 * MiB, 30 * MiB]
    assert data["matched_in_order"] == 3
    assert data["peak_reserved_bytes"] == 52 * MiB and data["peak_live_bytes"] > 0


def test_allocator_command_reads_a_snapshot_once(tmp_path, capsys, monkeypatch):
    # The replay and the graph share one read: reading and pre-scanning are most of the load.
    from slabscope.planner.formats import torch_snapshot

    path = recorded_run().write(tmp_path / "run.pickle")
    expected = {**replay_snapshot(path).summary(),
                "slab_bytes": planner.plan(planner.load_snapshot(path)).slab_bytes}
    reads = []
    read = torch_snapshot.load_plain_data
    monkeypatch.setattr(torch_snapshot, "load_plain_data",
                        lambda *args: reads.append(args) or read(*args))
    assert main(["allocator", str(path), "--json"]) == 0
    assert len(reads) == 1
    data = json.loads(capsys.readouterr().out)
    assert {key: data[key] for key in expected} == json.loads(json.dumps(expected))


def test_allocator_command_text_and_what_ifs(capsys):
    assert main(["allocator", str(EXAMPLES / "diamond.json"), "--expandable-segments",
                 "--max-split-size-mb", "64"]) == 0
    out = capsys.readouterr().out
    assert "PyTorch would reserve 2.0 MiB; the slab needs" in out
    assert "expandable_segments True, max_split_size 64.0 MiB" in out


def test_allocator_command_bad_input_is_one_line(tmp_path, capsys):
    missing = tmp_path / "missing.pickle"
    assert main(["allocator", str(missing)]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and len(err.strip().splitlines()) == 1
    assert main(["allocator", str(EXAMPLES / "diamond.json"), "--device", "1"]) == 2


# --- invariants ----------------------------------------------------------------------------

def check_invariants(model: CachingAllocator) -> None:
    """Blocks tile their segments exactly, segments never overlap, free neighbours are merged,
    and the totals agree with the blocks."""
    allocated = requested = 0
    spans = []
    for segment in model.segments.values():
        cursor = segment.addr
        previous_free = False
        for block in segment.blocks():
            assert block.addr == cursor and block.size > 0
            assert not (previous_free and not block.allocated), "free neighbours not merged"
            previous_free = not block.allocated
            cursor += block.size
            if block.allocated:
                allocated += block.size
                requested += block.requested
        assert cursor == segment.addr + segment.size
        spans.append((segment.addr, segment.addr + segment.size))
    spans.sort()
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))
    stats = model.stats
    assert (stats.allocated, stats.requested) == (allocated, requested)
    assert stats.reserved == sum(s.size for s in model.segments.values())
    assert stats.reserved >= stats.allocated >= stats.requested
    assert model.free_blocks(3) == model.free_blocks()[:3]  # the fast path agrees


requests = st.one_of(st.integers(1, 2 * MiB), st.integers(2 * MiB, 48 * MiB))
ops = st.lists(st.tuples(st.booleans(), requests, st.integers(0, 1), st.integers(0, 10**6)),
               max_size=60)


@hsettings(max_examples=120, deadline=None)
@given(ops, st.booleans(), st.sampled_from([None, 4 * MiB, 16 * MiB]))
def test_reserved_never_below_live_and_blocks_never_overlap(steps, expandable, split):
    model = CachingAllocator(AllocatorSettings(max_split_size=split,
                                               expandable_segments=expandable))
    live = []
    for is_free, size, stream, pick in steps:
        if is_free and live:
            model.free(live.pop(pick % len(live)))
        else:
            live.append(model.malloc(size, stream))
        check_invariants(model)
    model.empty_cache()
    check_invariants(model)
