"""Hostile pickles as snapshots: memo bombs, deep nesting, shared frames, lying lengths.

The reader is bounded by the bytes it reads: whatever opcodes a file holds, it either returns
plain data or raises a one-line `PlanError`, in memory proportional to the file."""

import io
import pickle
import struct
import tempfile
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.planner.formats.safety.restricted_pickle import (ELEMENTS_BASE, ELEMENTS_PER_BYTE,
                                                                load_plain_data)
from slabscope.planner.formats.torch_snapshot import load_snapshot, read_snapshot
from tests.strategies import PICKLE_PROGRAMS as PROGRAMS
from tests.strategies import PLAIN_DATA as PLAIN

PROTO4 = b"\x80\x04"


def load_bytes(data: bytes):
    return load_plain_data(io.BytesIO(data), len(data))


def write(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "bomb.pickle"
    path.write_bytes(data)
    return path


def one_line_error(path: Path, match: str) -> str:
    """The PlanError `planner.load` raises for `path`; it must be one line naming the file."""
    with pytest.raises(planner.PlanError, match=match) as caught:
        planner.load(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    return message


def binget(i: int) -> bytes:
    return b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)


def laughs(levels: int, width: int = 10) -> bytes:
    """L0 = [0], L(k) = [L(k-1)] * width through the memo: `levels` * `width` * 2 bytes that
    expand to width**levels elements."""
    out = [PROTO4, b"]\x94(K\x00e"]  # L0 = [0], memo 0
    for level in range(1, levels + 1):
        out.append(b"](" + binget(level - 1) * width + b"e\x94")
    out.append(b".")
    return b"".join(out)


def test_a_memo_billion_laughs_stops_at_the_element_limit(tmp_path):
    data = laughs(30)  # 10**30 elements once expanded, from 630 bytes
    limit = ELEMENTS_BASE + ELEMENTS_PER_BYTE * len(data)
    message = one_line_error(write(tmp_path, data), f"more than {limit:,} elements")
    assert "memo references count every element they repeat" in message


def test_dup_and_long_binget_count_what_they_repeat(tmp_path):
    # L(k) = [L(k-1), L(k-1)] by DUP, memoized and fetched back with LONG_BINGET.
    out = [PROTO4, b"]K\x00a"]
    for level in range(64):
        out.append(b"r" + struct.pack("<I", level) + b"0](" + b"j" + struct.pack("<I", level)
                   + b"2e")
    data = b"".join(out) + b"."
    one_line_error(write(tmp_path, data), "(more than .* elements|nest deeper than the limit)")


def test_a_list_appended_to_itself_is_a_cycle(tmp_path):
    one_line_error(write(tmp_path, PROTO4 + b"]2a."), "a container holds itself")


@pytest.mark.parametrize("data", [
    PROTO4 + b"]" * 100_000 + b"a" * 99_999 + b".",  # nested on the stack
    PROTO4 + b"]\x94" + b"".join(b"]" + binget(i) + b"a\x94" for i in range(1000)) + b".",
], ids=["stack", "memo"])
def test_deep_nesting_is_an_error_not_a_recursion_error(tmp_path, data):
    one_line_error(write(tmp_path, data), "containers nest deeper than the limit of 64")


def test_a_nine_byte_pickle_with_a_huge_memo_index_costs_nothing(tmp_path):
    # `}` then LONG_BINPUT 500,000,000: the stock unpickler sizes its memo by the index, 7.9 GB;
    # a writer stores at the next index, so one past the end is refused.
    data = b"}r" + struct.pack("<I", 500_000_000) + b"."
    tracemalloc.start()
    try:
        one_line_error(write(tmp_path, data), "memo index 500,000,000 skips past the 0 entries")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 256 << 10


@pytest.mark.parametrize("data, match", [
    (PROTO4 + b"\x8d" + struct.pack("<Q", 1 << 60) + b"abc", "truncated snapshot"),  # BINUNICODE8
    (PROTO4 + b"\x8e" + struct.pack("<Q", 1 << 62), "truncated snapshot"),  # BINBYTES8
    (PROTO4 + b"X" + struct.pack("<I", 2**32 - 1), "truncated snapshot"),  # BINUNICODE
    (PROTO4 + b"\x8b" + struct.pack("<i", 2**31 - 1), "over the 40-digit limit"),  # LONG4
    (PROTO4 + b"\x8a\xff" + b"\x01" * 255 + b".", "over the 40-digit limit"),  # LONG1
    (b"I" + b"9" * 5000 + b"\n.", "5,000 digits is over the 40-digit limit"),  # protocol 0
    (PROTO4 + b"\x8f.", "EMPTY_SET builds something a snapshot never holds"),
    (PROTO4 + b"\x81", r"contains objects \(opcode NEWOBJ\)"),
    (b"\x80\x09", "pickle protocol 9 is newer than 5"),
    (PROTO4 + b"K\x01(K\x02u.", "items are added to a int"),
])
def test_lying_lengths_and_other_opcodes_are_one_line_errors(tmp_path, data, match):
    one_line_error(write(tmp_path, data), match)


def test_a_frames_list_shared_by_every_event_is_folded_once(tmp_path):
    frame = {"filename": "/src/model.py", "line": 7, "name": "forward"}
    frames = [frame] * 150  # one list, one frame: pickled once, then fetched from the memo
    events = [{"action": "alloc", "addr": i * 512, "size": 512, "frames": frames}
              for i in range(20_000)]
    snapshot = {"segments": [{"device": 0, "address": 0, "total_size": 20_000 * 512,
                              "blocks": []}], "device_traces": [events]}
    path = tmp_path / "shared.pickle"
    path.write_bytes(pickle.dumps(snapshot, protocol=4))
    assert path.stat().st_size < 1 << 20  # 3 million frames once expanded
    graph = load_snapshot(path)
    assert len(graph.buffers) == 20_000
    stacks = set(graph.allocator.stacks.values())
    assert stacks == {("model.py:7 forward",) * 150}




@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=PROGRAMS, protocol=st.sampled_from([b"", b"\x80\x02", PROTO4, b"\x80\x05"]))
def test_nothing_but_plan_error_escapes_from_any_opcodes(program, protocol):
    data = protocol + b"".join(b"".join(block) * times for block, times in program) + b"."
    tracemalloc.start()
    try:
        try:
            load_bytes(data)
        except planner.PlanError as exc:
            assert "\n" not in str(exc)
        with tempfile.TemporaryDirectory() as folder:  # and the whole snapshot path
            path = Path(folder) / "fuzz.pickle"
            path.write_bytes(data)
            try:
                load_snapshot(path)
            except planner.PlanError as exc:
                assert "\n" not in str(exc) and str(path) in str(exc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # Memory stays proportional to the file (and the element limit), never to its claims.
    assert peak < (64 << 20) + 200 * len(data)




@settings(max_examples=200, deadline=None)
@given(value=PLAIN, protocol=st.integers(0, 5), shared=st.booleans())
def test_plain_data_reads_as_the_stock_unpickler_reads_it(value, protocol, shared):
    if shared:  # the same object twice: memo references in every protocol
        value = [value, value, {"again": value}]
    data = pickle.dumps(value, protocol=protocol)
    try:
        expected = ClassRefusing(io.BytesIO(data)).load()
    except pickle.UnpicklingError:  # bytes before protocol 3 are calls to codecs or bytes
        with pytest.raises(planner.PlanError, match=r"contains objects \((_codecs|__builtin__)"):
            load_bytes(data)
        return
    assert load_bytes(data) == expected


class ClassRefusing(pickle.Unpickler):
    """The stock unpickler, refusing every class: what the reader must agree with."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"{module}.{name}")


def test_read_snapshot_returns_the_same_data_as_the_stock_unpickler(tmp_path):
    from tests.snapshot_builder import TINY_SNAPSHOT

    assert read_snapshot(TINY_SNAPSHOT) == pickle.loads(TINY_SNAPSHOT.read_bytes())


def test_a_deep_tuple_is_refused_before_it_is_hashed(tmp_path):
    # TUPLE1 100,000 times, then the tuple as a dict key: hashing it would recurse in C.
    data = PROTO4 + b"}K\x00" + b"\x85" * 100_000 + b"K\x01s."
    one_line_error(write(tmp_path, data), "containers nest deeper than the limit of 64")
