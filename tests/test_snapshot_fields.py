"""Snapshot fields are checked by type and range: one-line errors naming the event or segment,
a note for live blocks at overlapping addresses, and no allocator figures without segments."""

import pickle
import warnings
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.formats import torch_snapshot
from slabscope.planner.formats.torch_snapshot import load_snapshot
from tests.snapshot_builder import SnapshotBuilder, py_frame


def segment(size: int = 1 << 20, address: int = 0, **fields) -> dict:
    return {"device": 0, "address": address, "total_size": size, "stream": 0, "blocks": [],
            **fields}


def alloc(addr: int, size: int = 512, **fields) -> dict:
    return {"action": "alloc", "addr": addr, "size": size, "stream": 0, "time_us": 1,
            "frames": [py_frame("/src/m.py", 3, "f")], **fields}


def write(tmp_path, events, segments=None, name: str = "s.pickle"):
    path = tmp_path / name
    snapshot = {"segments": [segment()] if segments is None else segments,
                "device_traces": [events]}
    path.write_bytes(pickle.dumps(snapshot, protocol=4))
    return path


def error(path, match: str) -> str:
    with pytest.raises(planner.PlanError, match=match) as caught:
        planner.load(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


@pytest.mark.parametrize("event, match", [
    (alloc(0, size=True), "event 0: size must be an integer, got bool"),
    (alloc(False), "event 0: addr must be an integer, got bool"),
    (alloc(0, stream=True), "event 0: stream must be an integer, got bool"),
    (alloc(0, size=10**39), r"event 0: size 10{39} is out of range \[0, 2\*\*64 - 1\]"),
    (alloc(0, stream=10**30), "event 0: stream 10{30} is out of range"),
    (alloc(0, stream=-1), "event 0: stream -1 is out of range"),
    (alloc(0, time_us=1.5), "event 0: time_us must be an integer, got float"),
    (alloc(0, size=None), "event 0: size must be an integer, got NoneType"),
    ({"action": "alloc", "addr": 0}, "event 0: size is missing"),
    ({"action": ["alloc"]}, "event 0: action must be a string, got list"),
    ([1, 2], "event 0: the event must be a dictionary, got list"),
    (alloc(0, frames="x"), "event 0: frames must be a list, got str"),
    (alloc(0, frames=[7]), "event 0: frame 0 must be a dictionary, got int"),
    (alloc(0, frames=[{"filename": 3}]), "event 0: frame 0: filename must be a string, got int"),
    (alloc(0, frames=[{"filename": "a.py", "line": [[[1]]]}]),
     "event 0: frame 0: line must be an integer, got list"),
    (alloc(0, frames=[{"filename": "a.py", "line": True}]),
     "event 0: frame 0: line must be an integer, got bool"),
    (alloc(0, frames=[{"filename": "a.py", "line": 1, "name": b"f"}]),
     "event 0: frame 0: name must be a string, got bytes"),
    (alloc(0, frames=[{"filename": "a.py", "line": 1, "name": "f" * 5000}]),
     "event 0: frame 0: a name of 5,000 characters is over the 4,096-character limit"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_event_fields_of_the_wrong_type_or_range_are_one_line_errors(tmp_path, event, match):
    error(write(tmp_path, [event]), f"device 0 {match}")


@pytest.mark.parametrize("segments, match", [
    ([segment(True)], "segment at index 0: total_size must be an integer, got bool"),
    ([segment(address=-5)], "segment at index 0: address -5 is out of range"),
    ([segment(device="0")], "segment at index 0: device must be an integer, got str"),
    ([segment(stream=2**64)], "segment at index 0: stream 18446744073709551616 is out of range"),
    ([segment(blocks={})], "segment at index 0: blocks must be a list, got dict"),
    ([segment(blocks=[{"state": 1}])], "segment at index 0 block 0: state must be a string"),
    ([segment(blocks=[{"state": "active_allocated", "address": 0, "size": True}])],
     "segment at index 0 block 0: size must be an integer, got bool"),
    ([7], "segment at index 0 must be a dictionary, got int"),
])
def test_segment_fields_are_checked_too(tmp_path, segments, match):
    error(write(tmp_path, [alloc(0)], segments), match)


def test_an_integer_past_the_digit_limit_is_refused_while_reading(tmp_path):
    error(write(tmp_path, [alloc(0, size=10**5000)]), "over the 40-digit limit")


def test_a_deeply_nested_line_is_refused_while_reading(tmp_path):
    path = write(tmp_path, [alloc(0, frames=[{"filename": "a.py", "line": "LINE"}])])
    # 2,000 nested lists, written as opcodes (the stock pickler recurses, and gives up first).
    nested = b"]" * 2000 + b"K\x01" + b"a" * 2000
    data = path.read_bytes()
    assert data.count(b"\x8c\x04LINE") == 1
    path.write_bytes(data.replace(b"\x8c\x04LINE", nested))
    error(path, "containers nest deeper than the limit of 64")


def test_live_blocks_at_overlapping_addresses_are_a_note_and_still_plan(tmp_path):
    events = [alloc(0, 1024), alloc(512, 512), alloc(4096, 512), alloc(4096 + 256, 512)]
    path = write(tmp_path, events)
    with pytest.warns(UserWarning, match=r"s\.pickle: 2 allocations of device 0 overlap a block "
                                         r"still live at the time \(the first: event 1 allocates "
                                         r"\[0x200, 0x400\) over \[0x0, 0x400\) from event 0\)"):
        graph = planner.load(path)
    plan = planner.plan(graph, conflicts="serial")
    assert planner.verify(graph, plan).ok


def test_freed_blocks_do_not_overlap_what_takes_their_place(tmp_path):
    events = [alloc(0, 1024), {"action": "free_completed", "addr": 0, "size": 1024},
              alloc(512, 512), alloc(0, 512)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_snapshot(write(tmp_path, events))


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(1, 12)),
                    max_size=60))
def test_the_overlap_note_finds_the_first_overlap_as_brute_force_does(tmp_path_factory, ops):
    """Allocs and frees over a small address space (units of 512 bytes), with chunks of two
    so that they split and empty often: the note names the first alloc over a live block."""
    live, events, first = {1 << 30: 512}, [alloc(1 << 30)], None  # one far away: never empty
    for n, (is_free, start, length) in enumerate(ops * 3):
        if is_free and live:
            addr = sorted(live)[start % len(live)]
            events.append({"action": "free_completed", "addr": addr, "size": live.pop(addr)})
            continue
        addr, size = (start + 41 * (n % 60)) * 512, length * 512
        if addr in live:
            continue
        if first is None and any(a < addr + size and addr < a + s for a, s in live.items()):
            first = len(events)
        live[addr] = size
        events.append(alloc(addr, size))
    path = write(tmp_path_factory.mktemp("o"), events, [segment(1 << 31)])
    with warnings.catch_warnings(record=True) as caught, \
            patch.object(torch_snapshot._LiveRanges, "CHUNK", 2):
        warnings.simplefilter("always")
        load_snapshot(path)
    notes = [str(w.message) for w in caught]
    if first is None:
        assert notes == []
    else:
        assert len(notes) == 1 and f"(the first: event {first} allocates" in notes[0]


def test_a_trace_without_segments_is_an_error_not_reserved_zero(tmp_path, capsys):
    path = write(tmp_path, [alloc(0, 200)], segments=[])
    message = error(path, "200 bytes are live at event 0 but the snapshot's segments reserve "
                          "only 0; segments and trace disagree")
    assert "segments left out" in message
    assert main(["plan", str(path)]) == 2
    captured = capsys.readouterr()
    assert "reserved peak" not in captured.out and "plan saves" not in captured.out


def test_a_block_before_recording_counts_against_the_segments_too(tmp_path):
    builder = SnapshotBuilder()
    builder.segment(0, 4096)
    builder.alloc(0, 1024, [py_frame("a.py", 1, "f")])
    data = builder.snapshot()
    data["segments"][0]["total_size"] = 512  # smaller than the block inside it
    path = tmp_path / "small.pickle"
    path.write_bytes(pickle.dumps(data))
    error(path, "segments and trace disagree")


ANY_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=8)
    | st.binary(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=6)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_any_field_replaced_by_any_value_loads_or_is_a_one_line_error(tmp_path_factory, data):
    from tests.snapshot_builder import tiny

    snapshot = tiny().snapshot()
    # Every dict of the snapshot (events, frames, segments, blocks) with its keys.
    entries, todo = [], [snapshot]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            entries.append(value)
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    entry = data.draw(st.sampled_from(entries))
    key = data.draw(st.sampled_from(sorted(entry) + ["extra"]))
    entry[key] = data.draw(ANY_VALUE)
    path = tmp_path_factory.mktemp("f") / "s.pickle"
    path.write_bytes(pickle.dumps(snapshot, protocol=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            graph = planner.load(path)
        except planner.PlanError as exc:
            assert "\n" not in str(exc) and str(path) in str(exc)
            return
    assert all(isinstance(b.bytes, int) and not isinstance(b.bytes, bool) for b in graph.buffers)
    assert planner.verify(graph, planner.plan(graph, conflicts="serial")).ok
