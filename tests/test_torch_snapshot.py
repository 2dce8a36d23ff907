"""PyTorch memory snapshots: lifetimes from the trace, the allocator's side, names, bad input."""

import json
import os
import pickle
from pathlib import Path

import pytest

from slabscope import planner
from slabscope.app.cli import main
from slabscope.planner.formats.torch_snapshot import AllocatorTrace, load_snapshot
from tests.examples import RELU_UNFUSED
from tests.snapshot_builder import TINY_SNAPSHOT, SnapshotBuilder, py_frame, tiny

SHARED_SNAPSHOTS = Path(__file__).resolve().parents[2] / "shared" / "snapshots"
REAL = ["cs336_a2_magma27.pickle", "cs336_a2_bcrafton.pickle"]


@pytest.fixture(params=REAL)
def real_snapshot(request) -> Path:
    """One of the shared real snapshots; the test skips where they are not beside the tree."""
    path = SHARED_SNAPSHOTS / request.param
    if not path.exists():
        pytest.skip(f"shared snapshots not present ({SHARED_SNAPSHOTS})")
    return path


def lifetimes(graph):
    """Buffer name -> (first step, last step) over the graph's chain."""
    position = {n: i for i, n in enumerate(graph.schedule)}
    return {b.name: (position[b.uses[0]], position[b.uses[-1]]) for b in graph.buffers}


@pytest.fixture
def tiny_graph(tmp_path):
    return load_snapshot(tiny().write(tmp_path / "tiny.pickle", protocol=2))


def test_committed_tiny_snapshot_is_what_the_builder_writes():
    assert pickle.loads(TINY_SNAPSHOT.read_bytes()) == tiny().snapshot()


def test_each_block_lives_from_its_alloc_until_its_free_completed(tiny_graph):
    graph = tiny_graph
    assert graph.schedule == (
        "start", "alloc 0", "free_completed 2", "segment_alloc 3", "alloc 4", "free_completed 6",
        "alloc 7", "segment_alloc 9", "alloc 10", "free_completed 12", "segment_free 13")
    end = len(graph.schedule) - 1
    assert lifetimes(graph) == {
        "train.py:9 step #1": (0, 1),              # freed in the trace, allocated before it
        "model.py:20 __init__ #1": (0, end),       # active in segments, no alloc in the trace
        "model.py:118 forward #1": (1, 4),         # alloc 0 .. free_completed 6
        "model.py:118 forward #2": (4, end),       # free_requested only: never reusable
        "(no Python frame) #1": (6, end),          # live at the end
        "model.py:118 forward #3": (8, 8),
    }
    assert graph.allocator.before_recording == {"train.py:9 step #1", "model.py:20 __init__ #1"}
    assert [b.bytes for b in graph.buffers] == [512, 1024, 512, 1536, 512, 8192]
    assert graph.alignment == 1 and graph.order == tuple(b.name for b in graph.buffers)
    assert planner.default_conflicts(graph) == "serial"


def test_allocator_side_walks_segments_back_through_the_trace(tiny_graph):
    trace = tiny_graph.allocator
    assert isinstance(trace, AllocatorTrace) and trace.device == 0
    assert trace.step_live_bytes == (1536, 2048, 1536, 1536, 3072, 2560, 3072, 3072, 11264,
                                     3072, 3072)
    # 4 KiB before recording, + 2 KiB segment, + 8 KiB segment, which is released at the end.
    assert trace.step_reserved_bytes == (4096, 4096, 4096, 6144, 6144, 6144, 6144, 14336, 14336,
                                         14336, 6144)
    assert trace.peak_allocated_bytes == 11264 and trace.peak_reserved_bytes == 14336
    assert trace.segments == ((0x10000, 4096), (0x20000, 2048), (0x30000, 8192))
    assert trace.step_times_us == (1040, 1040, 1060, 1070, 1080, 1100, 1110, 1130, 1140, 1160,
                                   1170)
    assert planner.lower_bound(tiny_graph, "serial").bytes == trace.peak_allocated_bytes


def test_stacks_streams_and_addresses_are_kept(tiny_graph):
    trace = tiny_graph.allocator
    assert trace.stacks["model.py:118 forward #2"] == (
        "model.py:118 forward", "train.py:7 <module>", "… 2 C++ frames")
    assert trace.stacks["(no Python frame) #1"] == ("… 1 C++ frame",)
    assert trace.stacks["train.py:9 step #1"] == ("train.py:9 step",)  # a Windows path
    assert trace.streams["model.py:118 forward #2"] == 1
    assert trace.streams["model.py:118 forward #1"] == 0
    assert trace.addresses["model.py:118 forward #3"] == 0x30000


def test_names_stay_unique_when_a_site_looks_like_a_counted_name(tmp_path):
    builder = SnapshotBuilder()
    builder.segment(0, 1 << 20)
    builder.alloc(0, 512, [py_frame("a.py", 1, "f")])
    builder.alloc(512, 512, [py_frame("a.py", 1, "f #1")])
    builder.alloc(1024, 512, [py_frame("a.py", 1, "f")])
    graph = load_snapshot(builder.write(tmp_path / "s.pickle"))
    names = [b.name for b in graph.buffers]
    assert names == ["a.py:1 f #1", "a.py:1 f #1 #1", "a.py:1 f #2"]


def test_device_option_and_default_first_device_with_a_trace(tmp_path):
    builder = SnapshotBuilder(device=1, devices=3)
    builder.segment(0, 4096)
    builder.alloc(0, 1024, [py_frame("m.py", 3, "g")])
    path = builder.write(tmp_path / "s.pickle")
    assert load_snapshot(path).allocator.device == 1
    assert planner.load(path).allocator.device == 1
    assert load_snapshot(path, device=1).allocator.peak_reserved_bytes == 4096
    with pytest.raises(planner.PlanError, match="device 2 has no trace; devices with one: 1"):
        load_snapshot(path, device=2)


def test_inconsistent_segments_are_reported(tmp_path):
    builder = SnapshotBuilder()
    builder.segment(0, 4096)
    builder.release(0)
    data = builder.snapshot()
    data["device_traces"][0][1]["size"] = 512  # made 4096 bytes, released 512
    path = tmp_path / "s.pickle"
    path.write_bytes(pickle.dumps(data))
    with pytest.raises(planner.PlanError, match="segments and trace disagree"):
        load_snapshot(path)


class Shell:
    """Unpickled by a plain `pickle.load`, this runs a shell command that creates `marker`."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return os.system, (f"touch {self.marker}",)


@pytest.mark.parametrize("payload, message", [
    (pickle.dumps({"segments": [], "device_traces": [[Shell(Path("/nonexistent/x"))]]}),
     r"not a memory snapshot: it contains objects \((os|posix|nt)\.system\)"),
    (pickle.dumps({"segments": [Path("x")]}), r"it contains objects \(pathlib\.\w*Path\)"),
    (b"cposix\nsystem\n(S'true'\ntR.", r"contains objects \(posix\.system\)"),  # protocol 0
    (b"(S'true'\niposix\nsystem\n.", r"contains objects \(posix\.system\)"),  # INST opcode
    (pickle.dumps(tiny().snapshot())[:-300], "truncated snapshot"),
    (b"", "truncated snapshot"),
    (b"\x80\x05not a pickle at all", "not a memory snapshot"),
    (pickle.dumps([1, 2, 3]), "not a memory snapshot: expected a dictionary"),
    (pickle.dumps({"segments": [], "allocator_settings": {}}),
     r"no allocation trace .*_record_memory_history\(\) before the run"),
    (pickle.dumps({"segments": [], "device_traces": [[]]}), "_record_memory_history"),
    (pickle.dumps({"segments": [], "device_traces": [[{"action": "alloc", "addr": "x"}]]}),
     "device 0 event 0: addr must be an integer, got str"),
    (pickle.dumps({"segments": [{"address": 0, "total_size": 512, "blocks": [7]}],
                   "device_traces": [[{"action": "snapshot"}]]}),
     "segment at index 0 block 0 must be a dictionary, got int"),
    (pickle.dumps({"segments": [], "device_traces": [[
        {"action": "free_completed", "addr": 0, "size": 512},
        {"action": "free_completed", "addr": 0, "size": 512}]]}),
     "device 0 event 1: frees 0x0, which the trace already freed"),
], ids=["os.system", "class", "global", "inst", "truncated", "empty", "garbage", "list", "no traces",
        "empty traces", "bad event", "bad segment", "double free"])
def test_bad_files_are_one_line_errors(tmp_path, payload, message):
    path = tmp_path / "bad.pickle"
    path.write_bytes(payload)
    with pytest.raises(planner.PlanError, match=message) as caught:
        planner.load(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_a_folder_is_refused_before_reading(tmp_path):
    folder = tmp_path / "dir.pickle"
    folder.mkdir()
    with pytest.raises(planner.PlanError, match="cannot read: a folder, not a regular file"):
        load_snapshot(folder)


def test_real_snapshots_lower_bound_is_peak_live_and_reserved_is_segments(real_snapshot):
    path = real_snapshot
    graph = planner.load(path)
    trace = graph.allocator
    data = pickle.loads(path.read_bytes())
    allocs = sum(e["action"] == "alloc" for e in data["device_traces"][0])
    active = sum(b["state"].startswith("active") for s in data["segments"] for b in s["blocks"])
    assert len(graph.buffers) == allocs + active  # every active block predates the trace
    assert len(trace.before_recording) == active
    assert planner.lower_bound(graph, "serial").bytes == trace.peak_allocated_bytes
    # No segment events in these traces: reserved bytes are the segments at the snapshot.
    assert trace.peak_reserved_bytes == sum(s["total_size"] for s in data["segments"])
    assert set(trace.step_reserved_bytes) == {trace.peak_reserved_bytes}
    assert trace.peak_allocated_bytes <= trace.peak_reserved_bytes
    plan = planner.plan(graph, conflicts="serial")
    assert planner.verify(graph, plan).ok


def test_search_plans_real_snapshots_within_a_tenth_of_a_percent_of_peak_live(real_snapshot):
    graph = planner.load(real_snapshot)
    # A generous budget for a loaded CI machine: search stops at the bound in a few seconds here.
    plan = planner.plan(graph, algorithm="search", conflicts="serial", budget=60)
    assert plan.slab_bytes <= 1.001 * graph.allocator.peak_allocated_bytes
    assert planner.verify(graph, plan).ok


def test_plan_command_prints_the_allocator_beside_the_static_plan(capsys):
    assert main(["plan", str(TINY_SNAPSHOT)]) == 0
    out = capsys.readouterr().out
    assert "lower bound             11,264  (serial model)" in out
    assert "PyTorch caching allocator, device 0" in out
    assert "reserved peak           14,336" in out
    assert "peak live               11,264  (the serial lower bound)" in out
    slab = int(next(line for line in out.splitlines() if line.startswith("slab bytes"))
               .split()[2].replace(",", ""))
    assert f"plan saves     {14336 - slab:>15,}" in out


def test_plan_json_adds_the_allocator(capsys):
    assert main(["plan", str(TINY_SNAPSHOT), "--json", "--device", "0",
                 "--algorithm", "search", "--budget", "1"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["allocator"] == {"peak_reserved_bytes": 14336, "peak_allocated_bytes": 11264,
                                 "device": 0}
    assert data["conflicts"] == "serial" and data["lower_bound_bytes"] == 11264
    assert data["slab_bytes"] == 11264  # this small trace packs to its bound


@pytest.mark.parametrize("args, message", [
    (["--device", "1"], "device 1 has no trace; devices with one: 0"),
    (["--device", "0", "--order", "nope"], "unknown buffer 'nope'"),
])
def test_plan_command_rejects_bad_devices_and_names(capsys, args, message):
    assert main(["plan", str(TINY_SNAPSHOT), *args]) == 2
    assert message in capsys.readouterr().err


def test_plan_command_refuses_hostile_pickles_with_exit_2(tmp_path, capsys):
    path, marker = tmp_path / "evil.pickle", tmp_path / "owned"
    path.write_bytes(pickle.dumps(Shell(marker)))
    assert main(["plan", str(path)]) == 2
    captured = capsys.readouterr()
    assert "not a memory snapshot: it contains objects (" in captured.err
    assert captured.out == "" and not marker.exists()


def test_device_option_is_for_snapshots_only(capsys):
    assert main(["plan", str(RELU_UNFUSED), "--device", "0"]) == 2
    assert "--device applies only to PyTorch memory snapshots" in capsys.readouterr().err


def test_hover_text_shows_the_stack_address_and_stream():
    from slabscope.app.state.session import Session
    from slabscope.app.views.common.buffer_details import describe_buffer, describe_buffer_line

    session = Session()
    session.set_graph(planner.load(TINY_SNAPSHOT), TINY_SNAPSHOT)
    text = describe_buffer(session, "model.py:118 forward #2").splitlines()
    assert text[0] == "model.py:118 forward #2"
    assert "PyTorch address: 0x20000" in text and "stream: 1" in text
    assert text[-4:] == ["stack:", "  model.py:118 forward", "  train.py:7 <module>",
                         "  … 2 C++ frames"]
    assert "allocated: before recording began" in describe_buffer(session, "train.py:9 step #1")
    line = describe_buffer_line(session, "model.py:118 forward #2")
    assert "\n" not in line and line.endswith("from model.py:118 forward < train.py:7 <module> < …")


def test_hover_text_of_other_graphs_has_no_allocator_facts():
    from slabscope.app.state.session import Session
    from slabscope.app.views.common.buffer_details import describe_buffer

    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    text = describe_buffer(session, "t0")
    assert "stack" not in text and "PyTorch" not in text


def test_inspector_name_tooltip_is_the_stack(qtbot):
    from PySide6.QtCore import Qt

    from slabscope.app.state.session import Session
    from slabscope.app.views.panels.inspector import COLUMNS, BufferTableModel

    session = Session()
    session.set_graph(planner.load(TINY_SNAPSHOT), TINY_SNAPSHOT)
    model = BufferTableModel(session)
    row = next(r for r in range(model.rowCount()) if model.buffer_name(r) == "(no Python frame) #1")
    tip = model.data(model.index(row, COLUMNS.index("name")), Qt.ItemDataRole.ToolTipRole)
    lines = tip.splitlines()
    assert lines[0] == "(no Python frame) #1" and lines[-2:] == ["stack:", "  … 1 C++ frame"]


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe.pickle"
    os.mkfifo(fifo)
    with pytest.raises(planner.PlanError, match="a FIFO, not a regular file"):
        load_snapshot(fifo)


def test_synthetic_training_trace_walks_back_to_a_forward_simulation(tmp_path):
    from bench.snapshots import synthetic_snapshot

    data = synthetic_snapshot(3000, seed=1)
    path = tmp_path / "synthetic.pickle"
    path.write_bytes(pickle.dumps(data, protocol=4))
    graph = planner.load(path)
    trace = graph.allocator
    events = data["device_traces"][0]
    made = {e["addr"] for e in events if e["action"] == "segment_alloc"}
    assert any(e["action"] == "segment_free" for e in events)
    # Forward from the segments that predate the trace (the weights'): those no segment_alloc
    # made; the generator never releases them.
    reserved = sum(s["total_size"] for s in data["segments"] if s["address"] not in made)
    forward = [reserved]
    for e in events:
        if e["action"] in ("segment_alloc", "segment_free"):
            reserved += e["size"] if e["action"] == "segment_alloc" else -e["size"]
        if e["action"] in ("alloc", "free_completed", "segment_alloc", "segment_free"):
            forward.append(reserved)
    assert trace.step_reserved_bytes == tuple(forward)
    assert all(live <= res for live, res in zip(trace.step_live_bytes, trace.step_reserved_bytes))
    assert planner.lower_bound(graph, "serial").bytes == trace.peak_allocated_bytes
    assert len(trace.before_recording) == 200


def test_expandable_segments_map_and_unmap_walk_back_too(tmp_path):
    # An expandable segment grows by mapping pages and shrinks by unmapping them; the snapshot
    # reports the mapped size at the end (here 4 MiB, after 2 + 4 mapped and 2 unmapped).
    mib = 1 << 20
    events = [
        {"action": "segment_map", "addr": 0, "size": 2 * mib},
        {"action": "alloc", "addr": 0, "size": 2 * mib},
        {"action": "segment_map", "addr": 2 * mib, "size": 4 * mib},
        {"action": "alloc", "addr": 2 * mib, "size": 4 * mib},
        {"action": "free_completed", "addr": 0, "size": 2 * mib},
        {"action": "segment_unmap", "addr": 0, "size": 2 * mib},
    ]
    segment = {"device": 0, "address": 0, "total_size": 4 * mib, "is_expandable": True,
               "blocks": [{"address": 2 * mib, "size": 4 * mib, "requested_size": 4 * mib,
                           "state": "active_allocated", "frames": []}]}
    path = tmp_path / "expandable.pickle"
    path.write_bytes(pickle.dumps({"segments": [segment], "device_traces": [events]}))
    trace = load_snapshot(path).allocator
    assert trace.step_reserved_bytes == (0, 2 * mib, 2 * mib, 6 * mib, 6 * mib, 6 * mib, 4 * mib)
    assert trace.step_live_bytes == (0, 0, 2 * mib, 2 * mib, 6 * mib, 4 * mib, 4 * mib)
    assert trace.peak_reserved_bytes == 6 * mib and trace.peak_allocated_bytes == 6 * mib
    assert trace.before_recording == frozenset()
