"""The compiled pre-scan that lets the stock C unpickler build a snapshot.

`pickle_prescan.proves_plain` may say yes only to pickles the restricted reader accepts, and the
stock unpickler must then build what the reader builds; everything else is left to the reader,
so `load_plain_data` answers exactly as the reader alone does."""

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
from slabscope.planner.formats.safety import restricted_pickle
from slabscope.planner.formats.safety.pickle_prescan import proves_plain
from slabscope.planner.formats.safety.restricted_pickle import (ELEMENTS_BASE, ELEMENTS_PER_BYTE,
                                                                load_plain_data)
from slabscope.planner.formats.torch_snapshot import read_snapshot
from tests.strategies import PICKLE_PROGRAMS, PLAIN_DATA

pytest.importorskip("numba", reason="the pre-scan runs only where numba compiles it")

PROTO4 = b"\x80\x04"
SHARED_SNAPSHOTS = Path(__file__).resolve().parents[2] / "shared" / "snapshots"


def limit_for(data: bytes) -> int:
    return ELEMENTS_BASE + ELEMENTS_PER_BYTE * len(data)


def reader_alone(data: bytes):
    """What the restricted reader's own opcode loop makes of `data`: a value, or its PlanError."""
    try:
        return restricted_pickle._Reader(io.BytesIO(data), len(data)).run()
    except Exception as exc:  # noqa: BLE001 - compared as `load_plain_data` reports it
        try:
            load_plain_data(io.BytesIO(data), len(data))
        except planner.PlanError as reported:
            return reported
        raise AssertionError(f"the reader raised {exc!r}, load_plain_data did not") from None


def from_file(data: bytes):
    """`load_plain_data` on `data` in a real file (the memory-mapped path)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.pickle"
        path.write_bytes(data)
        with path.open("rb") as handle:
            return load_plain_data(handle, len(data))


@settings(max_examples=150, deadline=None)
@given(value=PLAIN_DATA, protocol=st.integers(0, 5), shared=st.booleans())
def test_plain_data_of_every_protocol_reads_as_the_reader_reads_it(value, protocol, shared):
    if shared:  # the same object again: memo references
        value = [value, value, {"again": value}]
    data = pickle.dumps(value, protocol=protocol)
    expected = reader_alone(data)
    if isinstance(expected, planner.PlanError):  # bytes before protocol 3 are codecs calls
        assert not proves_plain(data, limit_for(data))
        return
    assert proves_plain(data, limit_for(data))  # the fast path serves every writer's pickle
    assert load_plain_data(io.BytesIO(data), len(data)) == expected
    assert from_file(data) == expected


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=PICKLE_PROGRAMS, protocol=st.sampled_from([b"", b"\x80\x02", PROTO4, b"\x80\x05"]))
def test_what_the_scan_proves_the_reader_accepts_and_builds_alike(program, protocol):
    data = protocol + b"".join(b"".join(block) * times for block, times in program) + b"."
    expected = reader_alone(data)
    tracemalloc.start()
    try:
        proven = proves_plain(data, limit_for(data))
        try:
            got = load_plain_data(io.BytesIO(data), len(data))
        except planner.PlanError as exc:
            got = exc
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < (64 << 20) + 200 * len(data)
    if proven:
        assert not isinstance(expected, planner.PlanError), expected
    if isinstance(expected, planner.PlanError):
        assert isinstance(got, planner.PlanError) and str(got) == str(expected)
        assert "\n" not in str(got)
    else:
        assert got == expected


def memo_lists(count: int) -> bytes:
    """`count` empty lists, each memoised at its own index."""
    return b"".join(b"]" + (b"q" + bytes([i]) if i < 256 else b"r" + struct.pack("<I", i))
                    for i in range(count))


def get(i: int) -> bytes:
    return b"h" + bytes([i]) if i < 256 else b"j" + struct.pack("<I", i)


def test_nesting_made_by_appending_to_memoised_lists_is_refused():
    # Each list is empty when memoised; GET and APPEND later chain 70 of them.
    data = PROTO4 + memo_lists(70) + b"".join(get(i) + get(i + 1) + b"a0" for i in range(69))
    data += get(0) + b"."
    assert not proves_plain(data, limit_for(data))
    with pytest.raises(planner.PlanError, match="nest deeper than the limit of 64"):
        load_plain_data(io.BytesIO(data), len(data))


def test_a_billion_laughs_filled_in_after_memoising_is_refused():
    # L(k) are made empty first, then filled top down: L(k) gets ten references to L(k-1).
    levels = 30
    data = PROTO4 + memo_lists(levels + 1) + get(0) + b"K\x00a0"
    data += b"".join(get(k) + b"(" + get(k - 1) * 10 + b"e0" for k in range(levels, 0, -1))
    data += get(levels) + b"."
    assert not proves_plain(data, limit_for(data))
    with pytest.raises(planner.PlanError, match="more than .* elements"):
        load_plain_data(io.BytesIO(data), len(data))


def test_what_the_scan_overestimates_the_reader_decides():
    # L5 holds 10**5 zeros through the memo, within the limit. A dict's key 1 set to it 20
    # times: the scan counts every replaced value (over the limit), so it cannot prove the
    # pickle; the reader, which sees one value, accepts it.
    laughs = [PROTO4, b"](K\x00e\x94"]
    for level in range(1, 6):
        laughs.append(b"](" + get(level - 1) * 10 + b"e\x94")
    data = b"".join(laughs) + b"0}(" + (b"K\x01" + get(5)) * 20 + b"u."
    assert not proves_plain(data, limit_for(data))
    value = load_plain_data(io.BytesIO(data), len(data))
    assert list(value) == [1] and len(value[1]) == 10


@pytest.mark.parametrize("data", [
    PROTO4 + b"\x95" + struct.pack("<Q", 1 << 40) + b"K\x01.",  # a frame longer than the file
    PROTO4 + b"\x8a\x11" + b"\x01" * 17 + b".",  # 17 bytes: the reader checks the digits
    b"(I1\nI2\nI3\n1N.",  # POP_MARK
    b"(0K\x05.",  # POP of a bare mark
    b"(lp0\nI7\naL12345678901234567890L\naF1.5\naS'x'\naVy\nag0\na.",  # protocol 0
    b"(lI010\naI01\naI00\naF1_0\na.",  # what the C unpickler reads otherwise: octal, "1_0"
    PROTO4 + b"K\x01(K\x02u.",  # SETITEMS onto an int
    PROTO4 + b"]\x94h\x00a.",  # a list holding itself
])
def test_odd_pickles_answer_exactly_as_the_reader_does(data):
    expected = reader_alone(data)
    try:
        got = load_plain_data(io.BytesIO(data), len(data))
    except planner.PlanError as exc:
        assert isinstance(expected, planner.PlanError) and str(exc) == str(expected)
    else:
        assert got == expected


def test_a_proven_pickle_never_runs_the_opcode_loop(monkeypatch):
    data = pickle.dumps({"frames": [{"line": 3}] * 5, "size": 10**20}, protocol=4)

    def refuse(*args):
        raise AssertionError("the opcode loop ran on a proven pickle")

    monkeypatch.setattr(restricted_pickle, "_SCAN_CACHED", True)
    monkeypatch.setattr(restricted_pickle._Reader, "run", refuse)
    assert load_plain_data(io.BytesIO(data), len(data)) == pickle.loads(data)


@pytest.mark.parametrize("name", ["cs336_a2_bcrafton", "cs336_a2_magma27"])
def test_the_real_snapshots_read_as_the_reader_reads_them(name):
    path = SHARED_SNAPSHOTS / f"{name}.pickle"
    if not path.exists():
        pytest.skip("../shared/snapshots is absent")
    data = path.read_bytes()
    assert proves_plain(data, limit_for(data))
    assert read_snapshot(path) == reader_alone(data)


def test_without_a_numba_cache_a_small_file_goes_to_the_opcode_loop(monkeypatch):
    # Compiling the scan in every process would cost more than the loop on a small file.
    data = pickle.dumps({"frames": [{"line": 3}] * 5}, protocol=4)
    monkeypatch.setattr(restricted_pickle, "_SCAN_CACHED", False)
    monkeypatch.setattr(restricted_pickle, "_load_proven", None)  # not called
    assert load_plain_data(io.BytesIO(data), len(data)) == pickle.loads(data)
