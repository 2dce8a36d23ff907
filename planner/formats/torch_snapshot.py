"""PyTorch CUDA memory snapshots (`torch.cuda.memory._dump_snapshot`) as serial-model graphs.

Read without torch, through a reader of plain pickled data that refuses every class and stays
within limits set by the file's size (`restricted_pickle`): a snapshot holds only builtins.
Every field used is checked by type and range. The trace of one device becomes a chain of time
steps: a `start` step, then one step per event that changes live or reserved bytes (`alloc`,
`free_completed`, `segment_alloc`, `segment_free`, `segment_map`, `segment_unmap`). Every block
is a buffer live over `[step of its alloc, step of its free_completed)`; a block is not reusable
before its `free_completed`, so `free_requested` ends nothing. Blocks allocated before recording
began (freed in the trace with no alloc, or active in the snapshot's `segments` with none) live
from `start`; blocks still live at the end live through the last step.
"""

from __future__ import annotations

import os
import warnings
from bisect import bisect_left, bisect_right, insort
from pathlib import Path
from types import MappingProxyType

from ..model.allocator_trace import AllocatorTrace
from ..model.graph import SIZE_LIMIT, Buffer, Graph, Node
from ..support.errors import PlanError
from ..support.gc_pause import paused_collection
from .safety.input_limits import open_regular
from .safety.restricted_pickle import load_plain_data
from .snapshot_names import category, frame_entry, user_site

# Snapshots of long runs reach gigabytes; they are streamed, never held as bytes, so the cap
# only stops a file that could not be a snapshot of any one machine's memory.
SNAPSHOT_BYTES_LIMIT = 64 << 30

STEP_ACTIONS = frozenset({"alloc", "free_completed", "segment_alloc", "segment_free",
                          "segment_map", "segment_unmap"})
RESERVE_DELTA = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
# Python file names and function names are far shorter; a longer one is not a frame.
FRAME_TEXT_LIMIT = 4096
ACTIVE_STATES = frozenset({"active_allocated", "active_pending_free"})
RECORD_HINT = ("call torch.cuda.memory._record_memory_history() before the run, then "
               "torch.cuda.memory._dump_snapshot(path)")


def read_snapshot(path) -> dict:
    """The snapshot at `path` as plain data, streamed from the file through a reader that builds
    only dicts, lists, tuples, strings, bytes and numbers (see `restricted_pickle`).

    Every failure is a one-line `PlanError`: an unreadable or truncated file, a pickle that holds
    objects or passes the reader's limits, or data that is not a snapshot's top-level dictionary.
    """
    path = Path(path)
    handle = open_regular(path, SNAPSHOT_BYTES_LIMIT)
    try:
        # Millions of acyclic objects: collector passes would free nothing.
        with handle, paused_collection():
            data = load_plain_data(handle, os.fstat(handle.fileno()).st_size)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}") from None
    except OSError as exc:
        raise PlanError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except MemoryError:
        raise PlanError(f"{path}: not enough memory to read the snapshot") from None
    if not isinstance(data, dict) or not isinstance(data.get("segments", []), list):
        raise PlanError(f"{path}: not a memory snapshot: expected a dictionary with 'segments' "
                        f"and 'device_traces', got {type(data).__name__}")
    return data


def load_snapshot(path, device: int | None = None) -> Graph:
    """Read a PyTorch memory snapshot into a serial-model `Graph` over one device's trace.

    `device`: the device whose trace to read; default, the first device with one. The graph's
    `allocator` holds what the caching allocator did (peak reserved and live bytes, per-step
    curves, block addresses, stacks, streams). Buffers are named after their innermost Python
    frame and a counter (`model.py:118 forward #3`); request order is trace order.
    """
    path = Path(path)
    with paused_collection():  # millions of acyclic objects: collector passes would free nothing
        return _graph(read_snapshot(path), path, device)


def snapshot_graph(data: dict, path, device: int | None = None) -> Graph:
    """`load_snapshot` of a snapshot already read by `read_snapshot` from `path`, for a caller
    that also replays it and so reads the file once. `data` is used up: emptied, and the chosen
    trace's events dropped as they are read."""
    path = Path(path)
    with paused_collection():
        return _graph(data, path, device)


def _graph(data: dict, path: Path, device: int | None) -> Graph:
    """The graph of the snapshot `data` read from `path`: pick the device, then read its trace
    against its segments."""
    traces = data.get("device_traces")
    if not isinstance(traces, list) or not any(isinstance(t, list) and t for t in traces):
        raise PlanError(f"{path}: the snapshot has no allocation trace (no device_traces): "
                        f"{RECORD_HINT}")
    with_trace = [d for d, t in enumerate(traces) if isinstance(t, list) and t]
    if device is None:
        device = with_trace[0]
    elif device not in with_trace:
        raise PlanError(f"{path}: device {device} has no trace; devices with one: "
                        f"{', '.join(map(str, with_trace))}")
    try:
        segments = [s for i, s in enumerate(data.get("segments", []))
                    if _u64(_entry(s, f"segment at index {i}"), "device", f"segment at index {i}",
                            device) == device]
        events = traces[device]
        # Other devices' traces go now (the caller may hold `data`); this one's events go as
        # they are read.
        data.clear()
        del traces
        reader = _TraceReader(events, segments, device)
        graph = reader.graph(path.stem)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}") from None
    for note in reader.notes:
        warnings.warn(f"{path.name}: {note}", stacklevel=4)
    return graph


def check_segments_apart(segments, device: int) -> None:
    """A PlanError when two of the (address, size) segments overlap: each is a device allocation
    of its own, so overlapping ones are a damaged snapshot, and their reserved bytes would be
    counted twice."""
    end, last = None, None
    for addr, size in sorted(segments):
        if size and end is not None and addr < end:
            raise PlanError(f"device {device}: segments {last[0]:#x} ({last[1]:,} bytes) and "
                            f"{addr:#x} ({size:,} bytes) overlap; a snapshot's segments are "
                            f"separate device allocations, so its reserved bytes would count "
                            f"the overlap twice")
        if size and (end is None or addr + size > end):
            end, last = addr + size, (addr, size)


class _TraceReader:
    """One device's events and final segments, turned into steps and blocks."""

    def __init__(self, events: list, segments: list, device: int):
        self.device = device
        self.step_event: list[int] = [-1]  # event index of each step; -1 for `start`
        self.step_action: list[str] = ["start"]
        self.step_time: list[int] = []
        self.reserve_delta: list[int] = [0]
        # Per block: [first step, end step or None, bytes, address, stream, stack, before].
        self.blocks: list[list] = []
        self.seen_segments: set[tuple[int, int]] = set()
        self.stacks = _Stacks()
        self.notes: list[str] = []  # what the reader accepted but the user should know
        self._walk(events)
        self._add_active_segment_blocks(segments)
        final = [(_u64(s, "address", f"segment at index {i}"),
                  _u64(s, "total_size", f"segment at index {i}")) for i, s in enumerate(segments)]
        check_segments_apart(final, device)
        self.final_reserved = sum(size for _, size in final)
        self.seen_segments.update(final)

    def _walk(self, events: list) -> None:
        """Steps and blocks from the events, each event dropped from `events` once read (its
        frames, most of a snapshot's bytes, live on only as a folded stack)."""
        live: dict[int, int] = {}  # address -> index into blocks, for blocks live now
        ranges = _LiveRanges()  # the address ranges of live blocks, to notice overlaps
        overlaps, first_overlap = 0, ""
        touched: set[int] = set()  # addresses the trace has allocated or freed
        for i, event in enumerate(events):
            what = f"device {self.device} event {i}"
            try:
                action = _entry(event, "the event").get("action")
                if not isinstance(action, str):
                    raise PlanError(f"action must be a string, got {type(action).__name__}")
                if action not in STEP_ACTIONS:
                    continue
                addr, size = event.get("addr"), event.get("size")
                stream, time_us = event.get("stream", 0), event.get("time_us", 0)
                # Plain in-range integers pass here; `_u64` checks (and names) anything else.
                if not (type(addr) is int and type(size) is int and type(stream) is int
                        and type(time_us) is int and 0 <= addr <= SIZE_LIMIT
                        and 0 <= size <= SIZE_LIMIT and 0 <= stream <= SIZE_LIMIT
                        and 0 <= time_us <= SIZE_LIMIT):
                    addr, size = _u64(event, "addr"), _u64(event, "size")
                    stream = _u64(event, "stream", default=0)
                    time_us = _u64(event, "time_us", default=0)
                step = len(self.step_event)
                self.step_event.append(i)
                self.step_action.append(action)
                self.step_time.append(time_us)
                self.reserve_delta.append(RESERVE_DELTA.get(action, 0) * size)
                if action == "alloc":
                    if addr in live:
                        first = self.step_event[self.blocks[live[addr]][0]]
                        raise PlanError(f"allocates {addr:#x}, which is still live "
                                        f"(allocated at event {first})")
                    if size:
                        other = ranges.overlapping(addr, addr + size)
                        if other is not None:
                            overlaps += 1
                            if not first_overlap:
                                block = self.blocks[live[other]]
                                first_overlap = (
                                    f"event {i} allocates [{addr:#x}, {addr + size:#x}) over "
                                    f"[{other:#x}, {other + block[2]:#x}) from event "
                                    f"{self.step_event[block[0]]}")
                        ranges.add(addr, addr + size)
                    live[addr] = len(self.blocks)
                    touched.add(addr)
                    self.blocks.append([step, None, size, addr, stream,
                                        self.stacks.fold(event.get("frames", ())), False])
                elif action == "free_completed":
                    if addr in live:
                        block = self.blocks[live.pop(addr)]
                        block[1] = step
                        if block[2]:
                            ranges.remove(addr)
                    elif addr in touched:
                        raise PlanError(f"frees {addr:#x}, which the trace already freed")
                    else:  # allocated before recording began; its stack is where it was freed
                        touched.add(addr)
                        self.blocks.append([0, step, size, addr, stream,
                                            self.stacks.fold(event.get("frames", ())), True])
                elif action in ("segment_alloc", "segment_free"):
                    self.seen_segments.add((addr, size))
            except PlanError as exc:
                raise PlanError(f"{what}: {exc}") from None
            finally:
                events[i] = None
        self.live_at_end = live
        if overlaps:
            self.notes.append(
                f"{overlaps:,} allocation{'s' if overlaps > 1 else ''} of device {self.device} "
                f"overlap{'' if overlaps > 1 else 's'} a block still live at the time (the first: "
                f"{first_overlap}); the blocks are planned as separate buffers")

    def _add_active_segment_blocks(self, segments: list) -> None:
        """Blocks active at the snapshot that no alloc of the trace made: allocated before it."""
        for i, segment in enumerate(segments):
            what = f"segment at index {i}"
            stream = _u64(segment, "stream", what, 0)
            blocks = segment.get("blocks", [])
            if not isinstance(blocks, list):
                raise PlanError(f"{what}: blocks must be a list, got {type(blocks).__name__}")
            for j, block in enumerate(blocks):
                where = f"{what} block {j}"
                state = _entry(block, where).get("state")
                if not isinstance(state, str):
                    raise PlanError(f"{where}: state must be a string, got "
                                    f"{type(state).__name__}")
                if state not in ACTIVE_STATES:
                    continue
                addr = _u64(block, "address", where)
                # The trace records requested sizes; a segment's block keeps one too.
                size = _u64(block, "requested_size" if "requested_size" in block else "size",
                            where)
                if addr in self.live_at_end:
                    continue
                self.blocks.append([0, None, size, addr, stream,
                                    self.stacks.fold(block.get("frames", ()), where), True])

    def graph(self, name: str) -> Graph:
        """The chain graph of the steps, a buffer per block, and the allocator's side."""
        steps = len(self.step_event)
        start_time = self.step_time[0] if self.step_time else 0
        times = tuple([start_time] + self.step_time)
        node_names = tuple("start" if e < 0 else f"{a} {e}"
                           for e, a in zip(self.step_event, self.step_action))
        nodes = tuple(Node(n, attrs=MappingProxyType({"action": a, "event": e, "time_us": t}))
                      for n, a, e, t in zip(node_names, self.step_action, self.step_event, times))
        live_delta = [0] * (steps + 1)
        buffers, addresses, streams, before, stack_of, full_of = [], {}, {}, set(), {}, {}
        # Request order is order of first step: blocks from before recording, then trace order.
        for first, end, size, addr, stream, stack, early in sorted(self.blocks,
                                                                   key=lambda b: b[0]):
            end = steps if end is None else end
            buffer_name = self.stacks.name(stack, early)
            last = end - 1
            uses = (node_names[first],) if first == last else (node_names[first], node_names[last])
            buffers.append(Buffer(buffer_name, size, uses,
                                  kind=category(stack.full, early, freed=end < steps)))
            full_of[buffer_name] = stack.full
            live_delta[first] += size
            live_delta[end] -= size
            addresses[buffer_name] = addr
            streams[buffer_name] = stream
            stack_of[buffer_name] = stack
            if early:
                before.add(buffer_name)
        step_live = _running_sum(live_delta[:steps])
        step_reserved = self._reserved_by_step()
        # Every live block lies in a segment: more live than reserved means the segments are
        # missing or wrong, and "reserved" or "plan saves" figures would be nonsense.
        over = next((t for t, (a, r) in enumerate(zip(step_live, step_reserved)) if a > r), None)
        if over is not None:
            at = "the start" if over == 0 else f"event {self.step_event[over]}"
            raise PlanError(f"device {self.device}: {step_live[over]:,} bytes are live at {at} "
                            f"but the snapshot's segments reserve only {step_reserved[over]:,}; "
                            f"segments and trace disagree (were the segments left out?)")
        trace = AllocatorTrace(
            device=self.device,
            peak_reserved_bytes=max(step_reserved),
            peak_allocated_bytes=max(step_live),
            step_live_bytes=step_live,
            step_reserved_bytes=step_reserved,
            addresses=MappingProxyType(addresses),
            segments=tuple(sorted(self.seen_segments)),
            stacks=MappingProxyType(stack_of),
            streams=MappingProxyType(streams),
            before_recording=frozenset(before),
            step_times_us=times,
            full_stacks=MappingProxyType(full_of),
        )
        return Graph(nodes=nodes, edges=tuple(zip(node_names, node_names[1:])),
                     buffers=tuple(buffers), alignment=1,
                     order=tuple(b.name for b in buffers),
                     schedule=node_names, name=name, allocator=trace)

    def _reserved_by_step(self) -> tuple[int, ...]:
        """Reserved bytes after each step: the final segments walked back through the trace."""
        reserved = [0] * len(self.reserve_delta)
        total = self.final_reserved
        for step in range(len(reserved) - 1, -1, -1):
            reserved[step] = total
            total -= self.reserve_delta[step]
            if total < 0:
                raise PlanError(f"device {self.device}: the snapshot's segments walked back "
                                f"through the trace go negative before event "
                                f"{self.step_event[step]}; segments and trace disagree")
        return tuple(reserved)


class _LiveRanges:
    """The address ranges of live blocks, sorted by start in chunks, so that adding, removing
    and finding an overlap cost O(log n + chunk) even with a million blocks live at once."""

    CHUNK = 512

    def __init__(self):
        self.chunks: list[list[int]] = []  # sorted starts, each chunk after the one before
        self.firsts: list[int] = []  # the first start of each chunk
        self.ends: dict[int, int] = {}

    def overlapping(self, lo: int, hi: int) -> int | None:
        """The start of a live range that overlaps [lo, hi), if the one starting last before
        `hi` does (live ranges that do not overlap each other need no other check)."""
        i = bisect_left(self.firsts, hi) - 1
        if i < 0:
            return None
        chunk = self.chunks[i]
        start = chunk[bisect_left(chunk, hi) - 1]
        return start if self.ends[start] > lo else None

    def add(self, lo: int, hi: int) -> None:
        self.ends[lo] = hi
        if not self.chunks:
            self.chunks.append([lo])
            self.firsts.append(lo)
            return
        i = max(bisect_right(self.firsts, lo) - 1, 0)
        chunk = self.chunks[i]
        insort(chunk, lo)
        self.firsts[i] = chunk[0]
        if len(chunk) > 2 * self.CHUNK:
            self.chunks[i:i + 1] = [chunk[:self.CHUNK], chunk[self.CHUNK:]]
            self.firsts[i:i + 1] = [chunk[0], chunk[self.CHUNK]]

    def remove(self, lo: int) -> None:
        del self.ends[lo]
        i = bisect_right(self.firsts, lo) - 1
        chunk = self.chunks[i]
        del chunk[bisect_left(chunk, lo)]
        if chunk:
            self.firsts[i] = chunk[0]
        else:
            del self.chunks[i], self.firsts[i]


class _Stacks:
    """Folds frame lists into stacks (Python frames, then one C++ entry) and names buffers."""

    def __init__(self):
        self._basenames: dict[str, str] = {}
        self._by_list: dict[int, _Stack] = {}  # id of a frames list -> its stack
        # id of a frame -> its short and full text, () for C++
        self._by_frame: dict[int, tuple[str, str] | tuple[()]] = {}
        self._shared: dict[tuple[str, ...], _Stack] = {}
        self._counts: dict[str, int] = {}
        self._names: set[str] = set()

    def fold(self, frames, what: str = "") -> "_Stack":
        """Python frames as `file:line function`, innermost first, then "… N C++ frames"; the
        same with full paths as its `full`; errors start with `what` (where the frames are).

        One frame list, or one frame, shared by many events through the pickle's memo is
        folded once: both caches are keyed by `id`, which is safe because every object of the
        snapshot was built before the walk and is alive while it can be looked up."""
        stack = self._by_list.get(id(frames))
        if stack is not None:
            return stack
        if not isinstance(frames, (list, tuple)):
            raise PlanError(f"{what}: frames must be a list, got {type(frames).__name__}"
                            if what else f"frames must be a list, got {type(frames).__name__}")
        python, full, native = [], [], 0
        for j, frame in enumerate(frames):
            entry = self._by_frame.get(id(frame))
            if entry is None:
                entry = self._by_frame[id(frame)] = self._frame(frame, f"{what} frame {j}".lstrip())
            if entry:
                python.append(entry[0])
                full.append(entry[1])
            else:
                native += 1
        if native:
            python.append(f"… {native} C++ frame" + ("s" if native > 1 else ""))
            full.append(python[-1])
        key = tuple(full)
        # Many blocks come from the same place: keep one copy of each stack.
        stack = self._shared.get(key)
        if stack is None:
            stack = self._shared[key] = _Stack(python, key)
        self._by_list[id(frames)] = stack
        return stack

    def _frame(self, frame, what: str) -> tuple[str, str] | tuple[()]:
        """One frame as (`file:line function`, the same with the full path), or () for C++."""
        filename = _entry(frame, what).get("filename")
        if not isinstance(filename, str):
            raise PlanError(f"{what}: filename must be a string, got {type(filename).__name__}")
        if not (filename.endswith(".py") or filename[:1] == "<" and filename[-1:] == ">"):
            return ()
        name, line = frame.get("name", "?"), _u64(frame, "line", what, 0)
        if not isinstance(name, str):
            raise PlanError(f"{what}: name must be a string, got {type(name).__name__}")
        for text, key in ((filename, "filename"), (name, "name")):
            if len(text) > FRAME_TEXT_LIMIT:
                raise PlanError(f"{what}: a {key} of {len(text):,} characters is over the "
                                f"{FRAME_TEXT_LIMIT:,}-character limit")
        base = self._basenames.get(filename)
        if base is None:
            base = self._basenames[filename] = filename.replace("\\", "/").rsplit("/", 1)[-1]
        return f"{base}:{line} {name}", frame_entry(filename, line, name)

    def name(self, stack: "_Stack", before_recording: bool) -> str:
        """The innermost frame of the user's code (else the innermost Python frame) and a
        per-site counter, unique among the names given."""
        site = user_site(stack.full)
        if site is None and stack and not stack[0].startswith("… "):
            site = stack[0]
        if site is None:
            site = "(before recording)" if before_recording else "(no Python frame)"
        while True:
            count = self._counts[site] = self._counts.get(site, 0) + 1
            name = f"{site} #{count}"
            if name not in self._names:
                self._names.add(name)
                return name


class _Stack(tuple):
    """A folded stack of file names (a plain tuple to compare), with `full`: the same frames
    with their full paths."""

    def __new__(cls, entries, full: tuple[str, ...]):
        stack = super().__new__(cls, entries)
        stack.full = full
        return stack


def _running_sum(deltas: list[int]) -> tuple[int, ...]:
    total, out = 0, []
    for delta in deltas:
        total += delta
        out.append(total)
    return tuple(out)


def _entry(value, what: str) -> dict:
    """`value` if it is a dictionary, else a PlanError naming `what`."""
    if not isinstance(value, dict):
        raise PlanError(f"{what} must be a dictionary, got {type(value).__name__}")
    return value


_REQUIRED = object()


def _u64(entry: dict, key: str, what: str = "", default=_REQUIRED) -> int:
    """`entry[key]`, an integer in the unsigned 64-bit range (booleans are not integers);
    `default` when the key is absent, if one is given. Messages start with `what`."""
    value = entry.get(key, default)
    where = f"{what}: " if what else ""
    if value is _REQUIRED:
        raise PlanError(f"{where}{key} is missing")
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlanError(f"{where}{key} must be an integer, got {type(value).__name__}")
    if not 0 <= value <= SIZE_LIMIT:
        raise PlanError(f"{where}{key} {value} is out of range [0, 2**64 - 1]")
    return value
