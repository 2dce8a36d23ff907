"""PyTorch CUDA memory snapshots (`torch.cuda.memory._dump_snapshot`) as serial-model graphs.

Read without torch, through a reader of plain pickled data that refuses every class and stays
within limits set by the file's size (`restricted_pickle`): a snapshot holds only builtins. The trace of one device becomes a chain of time steps: a `start` step, then one step
per event that changes live or reserved bytes (`alloc`, `free_completed`, `segment_alloc`,
`segment_free`, `segment_map`, `segment_unmap`). Every block is a buffer live over
`[step of its alloc, step of its free_completed)`; a block is not reusable before its
`free_completed`, so `free_requested` ends nothing. Blocks allocated before recording began (freed
in the trace with no alloc, or active in the snapshot's `segments` with none) live from `start`;
blocks still live at the end live through the last step.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

from .errors import PlanError
from .gc_pause import paused_collection
from .graph import Buffer, Graph, Node
from .input_limits import open_regular
from .restricted_pickle import load_plain_data

# Snapshots of long runs reach gigabytes; they are streamed, never held as bytes, so the cap
# only stops a file that could not be a snapshot of any one machine's memory.
SNAPSHOT_BYTES_LIMIT = 64 << 30

STEP_ACTIONS = frozenset({"alloc", "free_completed", "segment_alloc", "segment_free",
                          "segment_map", "segment_unmap"})
RESERVE_DELTA = {"segment_alloc": 1, "segment_map": 1, "segment_free": -1, "segment_unmap": -1}
ACTIVE_STATES = frozenset({"active_allocated", "active_pending_free"})
RECORD_HINT = ("call torch.cuda.memory._record_memory_history() before the run, then "
               "torch.cuda.memory._dump_snapshot(path)")


@dataclass(frozen=True)
class AllocatorTrace:
    """What PyTorch's caching allocator did over the recorded trace of one device.

    `step_live_bytes` and `step_reserved_bytes` have one entry per step of the graph's schedule
    (index t is step t). `addresses`, `stacks` and `streams` are keyed by buffer name; stacks list
    Python frames (`file:line function`, innermost first), then the C++ frames folded into one
    entry. `before_recording` names the buffers allocated before the trace began.
    """

    device: int
    peak_reserved_bytes: int
    peak_allocated_bytes: int
    step_live_bytes: tuple[int, ...]
    step_reserved_bytes: tuple[int, ...]
    addresses: Mapping[str, int]
    segments: tuple[tuple[int, int], ...]
    stacks: Mapping[str, tuple[str, ...]]
    streams: Mapping[str, int]
    before_recording: frozenset[str]
    step_times_us: tuple[int, ...]


def read_snapshot(path) -> dict:
    """The snapshot at `path` as plain data, streamed from the file through a reader that builds
    only dicts, lists, tuples, strings, bytes and numbers (see `restricted_pickle`).

    Every failure is a one-line `PlanError`: an unreadable or truncated file, a pickle that holds
    objects or passes the reader's limits, or data that is not a snapshot's top-level dictionary.
    """
    path = Path(path)
    handle = open_regular(path, SNAPSHOT_BYTES_LIMIT)
    try:
        with handle:
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
        return _load(path, device)


def _load(path: Path, device: int | None) -> Graph:
    """`load_snapshot`'s work: pick the device, then read its trace against its segments."""
    data = read_snapshot(path)
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
    segments = [s for s in data.get("segments", [])
                if isinstance(s, dict) and s.get("device", device) == device]
    events = traces[device]
    del data, traces  # other devices' traces go now; this one's events go as they are read
    try:
        return _TraceReader(events, segments, device).graph(path.stem)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}") from None
    except (KeyError, TypeError, AttributeError) as exc:  # segments or blocks of the wrong shape
        raise PlanError(f"{path}: malformed segments ({type(exc).__name__}: {exc})") from None


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
        self._walk(events)
        self._add_active_segment_blocks(segments)
        final = [(_int(s, "address", "segment"), _int(s, "total_size", "segment")) for s in segments]
        self.final_reserved = sum(size for _, size in final)
        self.seen_segments.update(final)

    def _walk(self, events: list) -> None:
        """Steps and blocks from the events, each event dropped from `events` once read (its
        frames, most of a snapshot's bytes, live on only as a folded stack)."""
        live: dict[int, int] = {}  # address -> index into blocks, for blocks live now
        touched: set[int] = set()  # addresses the trace has allocated or freed
        for i, event in enumerate(events):
            try:
                action = event["action"]
                if action not in STEP_ACTIONS:
                    continue
                addr, size = event["addr"], event["size"]
                stream, time_us = event.get("stream", 0), event.get("time_us", 0)
                if not all(isinstance(v, int) and v >= 0 for v in (addr, size, stream, time_us)):
                    raise PlanError(f"addr, size, stream and time_us must be non-negative "
                                    f"integers, got {addr!r}, {size!r}, {stream!r}, {time_us!r}")
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
                    live[addr] = len(self.blocks)
                    touched.add(addr)
                    self.blocks.append([step, None, size, addr, stream,
                                        self.stacks.fold(event.get("frames", ())), False])
                elif action == "free_completed":
                    if addr in live:
                        self.blocks[live.pop(addr)][1] = step
                    elif addr in touched:
                        raise PlanError(f"frees {addr:#x}, which the trace already freed")
                    else:  # allocated before recording began; its stack is where it was freed
                        touched.add(addr)
                        self.blocks.append([0, step, size, addr, stream,
                                            self.stacks.fold(event.get("frames", ())), True])
                elif action in ("segment_alloc", "segment_free"):
                    self.seen_segments.add((addr, size))
            except PlanError as exc:
                raise PlanError(f"device {self.device} event {i}: {exc}") from None
            except (KeyError, TypeError, AttributeError) as exc:
                raise PlanError(f"device {self.device} event {i}: malformed event "
                                f"({type(exc).__name__}: {exc})") from None
            finally:
                events[i] = None
        self.live_at_end = live

    def _add_active_segment_blocks(self, segments: list) -> None:
        """Blocks active at the snapshot that no alloc of the trace made: allocated before it."""
        for segment in segments:
            for block in segment.get("blocks", ()):
                if block.get("state") not in ACTIVE_STATES:
                    continue
                addr = _int(block, "address", "segment block")
                if addr in self.live_at_end:
                    continue
                # The trace records requested sizes; a segment's block keeps one too.
                size_key = "requested_size" if "requested_size" in block else "size"
                self.blocks.append([0, None, _int(block, size_key, "segment block"), addr,
                                    segment.get("stream", 0),
                                    self.stacks.fold(block.get("frames", ())), True])

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
        buffers, addresses, streams, before, stack_of = [], {}, {}, set(), {}
        # Request order is order of first step: blocks from before recording, then trace order.
        for first, end, size, addr, stream, stack, early in sorted(self.blocks,
                                                                   key=lambda b: b[0]):
            end = steps if end is None else end
            buffer_name = self.stacks.name(stack, early)
            last = end - 1
            uses = (node_names[first],) if first == last else (node_names[first], node_names[last])
            buffers.append(Buffer(buffer_name, size, uses))
            live_delta[first] += size
            live_delta[end] -= size
            addresses[buffer_name] = addr
            streams[buffer_name] = stream
            stack_of[buffer_name] = stack
            if early:
                before.add(buffer_name)
        step_live = _running_sum(live_delta[:steps])
        step_reserved = self._reserved_by_step()
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


class _Stacks:
    """Folds frame lists into stacks (Python frames, then one C++ entry) and names buffers."""

    def __init__(self):
        self._basenames: dict[str, str] = {}
        self._shared: dict[tuple[str, ...], tuple[str, ...]] = {}
        self._counts: dict[str, int] = {}
        self._names: set[str] = set()

    def fold(self, frames) -> tuple[str, ...]:
        """Python frames as `file:line function`, innermost first, then "… N C++ frames"."""
        python, native = [], 0
        for frame in frames:
            filename = frame.get("filename") if isinstance(frame, dict) else None
            if isinstance(filename, str) and (filename.endswith(".py") or
                                              filename[:1] == "<" and filename[-1:] == ">"):
                base = self._basenames.get(filename)
                if base is None:
                    base = self._basenames[filename] = \
                        filename.replace("\\", "/").rsplit("/", 1)[-1]
                python.append(f"{base}:{frame.get('line', 0)} {frame.get('name', '?')}")
            else:
                native += 1
        if native:
            python.append(f"… {native} C++ frame" + ("s" if native > 1 else ""))
        stack = tuple(python)
        # Many blocks come from the same place: keep one copy of each stack.
        return self._shared.setdefault(stack, stack)

    def name(self, stack: tuple[str, ...], before_recording: bool) -> str:
        """The innermost Python frame and a per-frame counter, unique among the names given."""
        if stack and not stack[0].startswith("… "):
            site = stack[0]
        else:
            site = "(before recording)" if before_recording else "(no Python frame)"
        while True:
            count = self._counts[site] = self._counts.get(site, 0) + 1
            name = f"{site} #{count}"
            if name not in self._names:
                self._names.add(name)
                return name


def _running_sum(deltas: list[int]) -> tuple[int, ...]:
    total, out = 0, []
    for delta in deltas:
        total += delta
        out.append(total)
    return tuple(out)


def _int(entry, key: str, what: str) -> int:
    value = entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(value, int) or value < 0:
        raise PlanError(f"malformed {what}: {key} must be a non-negative integer, got {value!r}")
    return value
