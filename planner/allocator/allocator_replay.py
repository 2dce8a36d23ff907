"""Replaying events through the caching-allocator model: a snapshot's trace or a graph's schedule.

`replay_snapshot` starts the model from the segments and blocks that existed before recording
began (the snapshot's final `segments` walked back through the trace), sends the recorded `alloc`
and `free_completed` events through it in trace order, applies recorded `segment_free`s, and
pairs each segment the model creates with the recorded `segment_alloc` of the same request.
`replay_graph` turns a graph's schedule into allocs (at a buffer's first use) and frees (after
its last) and reports what PyTorch would reserve for it.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..conflicts.conflict_model import conflict_model
from ..formats.torch_snapshot import (ACTIVE_STATES, RECORD_HINT, STEP_ACTIONS,
                                      check_segments_apart, read_snapshot)
from ..model.graph import Graph
from ..support.cancel import NEVER, Cancelled, CancelToken
from ..support.errors import PlanError
from ..support.gc_pause import paused_collection
from .caching_allocator import (SMALL_BUFFER, SMALL_SIZE, AllocatorSettings, CachingAllocator,
                                FragmentationAtPeak, round_size)

SEGMENT_MADE = frozenset({"segment_alloc", "segment_map"})
SEGMENT_GONE = frozenset({"segment_free", "segment_unmap"})
TOP_FREE_BLOCKS = 8
TOP_LIVE_BUFFERS = 12
# Events (or steps) replayed between two progress reports and cancel checks.
REPORT_EVERY = 4096


class FreeBlock(NamedTuple):
    """A cached free block: where, how large, its stream, its segment's size and pool."""

    addr: int
    size: int
    stream: int
    segment_bytes: int
    small: bool


@dataclass(frozen=True)
class AllocatorReplay:
    """What the model reserved over a replay, step by step, and how it compares with a recording.

    `step_reserved` and `step_live` have one entry per step (index t: after step t's allocs).
    `live` counts requested bytes, what the program asked for; `allocated` counts block sizes.
    `free_at_peak` lists the largest cached free blocks at `peak_step`.
    `top_live_at_peak` (graph replays) indexes the largest buffers live at `peak_step`.
    For a snapshot, `recorded_segments` are the sizes of its `segment_alloc`s in order and
    `matched_in_order` how many the model made at the same request with the same size.
    """

    settings: AllocatorSettings
    peak_reserved_bytes: int
    peak_live_bytes: int
    peak_allocated_bytes: int
    peak_step: int
    segments_created: tuple[int, ...]
    fragmentation: FragmentationAtPeak | None
    free_at_peak: tuple[FreeBlock, ...]
    step_reserved: tuple[int, ...]
    step_live: tuple[int, ...]
    initial_reserved_bytes: int = 0
    recorded_segments: tuple[int, ...] | None = None
    matched_in_order: int | None = None
    recorded_peak_reserved_bytes: int | None = None
    recorded_segment_frees: int = 0
    placements_matched: int | None = None
    allocs: int = 0
    top_live_at_peak: tuple[int, ...] = ()

    def summary(self) -> dict:
        """The replay as JSON-ready data (without the per-step curves)."""
        frag = self.fragmentation
        data = {
            "peak_reserved_bytes": self.peak_reserved_bytes,
            "peak_live_bytes": self.peak_live_bytes,
            "peak_allocated_bytes": self.peak_allocated_bytes,
            "peak_step": self.peak_step,
            "segments_created": list(self.segments_created),
            "initial_reserved_bytes": self.initial_reserved_bytes,
            "fragmentation_at_peak": None if frag is None else {
                "reserved_bytes": frag.reserved_bytes,
                "live_bytes": frag.requested_bytes,
                "allocated_bytes": frag.allocated_bytes,
                "reserved_minus_live_bytes": frag.reserved_bytes - frag.requested_bytes,
                "largest_free_block_bytes": frag.largest_free_block,
                "free_blocks": frag.free_blocks},
            "settings": {"expandable_segments": self.settings.expandable_segments,
                         "max_split_size_bytes": self.settings.max_split_size},
            "allocs": self.allocs,
        }
        if self.recorded_segments is not None:
            data.update({
                "recorded_segments": list(self.recorded_segments),
                "matched_in_order": self.matched_in_order,
                "recorded_peak_reserved_bytes": self.recorded_peak_reserved_bytes,
                "recorded_segment_frees": self.recorded_segment_frees,
                "placements_matched": self.placements_matched})
        return data


class _Recorder:
    """Per-step curves and the state at the model's peak, kept as the replay goes."""

    def __init__(self, model: CachingAllocator):
        self.model = model
        self.reserved: list[int] = []
        self.live: list[int] = []
        self.peak_seen = None
        self.peak_step = 0
        self.free_at_peak: tuple = ()

    def step(self) -> None:
        stats = self.model.stats
        self.reserved.append(stats.reserved)
        self.live.append(stats.requested)
        if stats.at_peak is not self.peak_seen:
            self.peak_seen = stats.at_peak
            self.peak_step = len(self.reserved) - 1
            self.free_at_peak = _largest_free(self.model)

    def result(self, **extra) -> AllocatorReplay:
        model, stats = self.model, self.model.stats
        if stats.at_peak is None:  # no malloc ever ran at the peak: the state at the start
            model.note_peak()
            self.free_at_peak = _largest_free(model)
        return AllocatorReplay(
            settings=model.settings, peak_reserved_bytes=stats.peak_reserved,
            peak_live_bytes=stats.peak_requested, peak_allocated_bytes=stats.peak_allocated,
            peak_step=self.peak_step,
            segments_created=tuple(c.size for c in stats.creations),
            fragmentation=stats.at_peak, free_at_peak=self.free_at_peak,
            step_reserved=tuple(self.reserved), step_live=tuple(self.live), **extra)


def _largest_free(model: CachingAllocator) -> tuple[FreeBlock, ...]:
    """The largest cached free blocks, largest first."""
    return tuple(FreeBlock(b.addr, b.size, b.stream, b.segment.size, b.small)
                 for b in model.free_blocks(TOP_FREE_BLOCKS))


# --- graphs --------------------------------------------------------------------------------

def replay_graph(graph: Graph, settings: AllocatorSettings | None = None,
                 cancel: CancelToken = NEVER) -> AllocatorReplay:
    """What the caching allocator would reserve running `graph`'s schedule from an empty cache.

    Each buffer is allocated (its own bytes, on its stream if the graph came from a snapshot)
    at the first step that uses it, in request order, and freed after the last; step t's frees
    follow its allocs. `cancel` is told the progress and may stop the work.
    """
    with paused_collection():
        first, last = conflict_model(graph, "serial").use_steps()
        steps = len(graph.schedule or graph.nodes)
        starts: list[list[int]] = [[] for _ in range(steps)]
        ends: list[list[int]] = [[] for _ in range(steps)]
        for i in graph.request_order():
            starts[int(first[i])].append(i)
        for i in range(len(graph.buffers)):
            ends[int(last[i])].append(i)
        streams = graph.allocator.streams if graph.allocator is not None else {}
        model = CachingAllocator(settings)
        recorder = _Recorder(model)
        blocks: dict[int, object] = {}
        buffers = graph.buffers
        for t in range(steps):
            if t % REPORT_EVERY == 0:
                cancel.report("replaying the allocator", t / steps)
            for i in starts[t]:
                buffer = buffers[i]
                blocks[i] = model.malloc(buffer.bytes, streams.get(buffer.name, 0))
            recorder.step()
            for i in ends[t]:
                model.free(blocks.pop(i))
        peak = recorder.peak_step
        at_peak = np.flatnonzero((np.asarray(first) <= peak) & (np.asarray(last) >= peak))
        top = heapq.nlargest(TOP_LIVE_BUFFERS, at_peak.tolist(), key=lambda i: buffers[i].bytes)
        return recorder.result(allocs=len(buffers), top_live_at_peak=tuple(top))


# --- snapshots -----------------------------------------------------------------------------

def snapshot_events(data: dict, path: Path, device: int | None = None
                    ) -> tuple[list, list, dict, int]:
    """The trace for one device of the snapshot `data` (as `torch_snapshot.read_snapshot` read
    it from `path`): (events, that device's final segments, allocator_settings, device)."""
    traces = data.get("device_traces")
    # A number or a boolean here is no trace, as `load_snapshot` says too.
    with_trace = [d for d, t in enumerate(traces) if isinstance(t, list) and t] \
        if isinstance(traces, list) else []
    if not with_trace:
        raise PlanError(f"{path}: the snapshot has no allocation trace (no device_traces): "
                        f"{RECORD_HINT}")
    if device is None:
        device = with_trace[0]
    elif device not in with_trace:
        raise PlanError(f"{path}: device {device} has no trace; devices with one: "
                        f"{', '.join(map(str, with_trace))}")
    segments = [s for s in data.get("segments", [])
                if isinstance(s, dict) and s.get("device", device) == device]
    try:
        check_segments_apart([(s["address"], s["total_size"]) for s in segments
                              if type(s.get("address")) is int
                              and type(s.get("total_size")) is int], device)
    except PlanError as exc:
        raise PlanError(f"{path}: {exc}") from None
    settings = data.get("allocator_settings")
    return traces[device], segments, settings if isinstance(settings, dict) else {}, device


def replay_snapshot(path, device: int | None = None, *, expandable_segments: bool | None = None,
                    max_split_size: int | None = None, cancel: CancelToken = NEVER,
                    data: dict | None = None) -> AllocatorReplay:
    """Replay a snapshot's trace through the model and compare its segments with the recorded.

    The settings are the snapshot's `allocator_settings`, changed by `expandable_segments` and
    `max_split_size` (bytes) when given. `data`: the snapshot as `read_snapshot` already read it
    from `path` (left unchanged, so `snapshot_graph` can use it next); None reads the file.
    Errors are one-line `PlanError`s naming the file; `cancel` is told the progress and may stop
    the work.
    """
    path = Path(path)
    with paused_collection():
        events, segments, raw_settings, device = snapshot_events(
            read_snapshot(path) if data is None else data, path, device)
        settings = AllocatorSettings.from_snapshot(raw_settings).with_changes(
            expandable_segments, max_split_size)
        try:
            return _SnapshotReplay(events, segments, settings).run(cancel)
        except Cancelled:
            raise
        except PlanError as exc:
            raise PlanError(f"{path}: device {device}: {exc}") from None
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise PlanError(f"{path}: device {device}: malformed trace or segments "
                            f"({type(exc).__name__}: {exc})") from None


def _next_boundary(allocated_at: list[int], first_alloc: dict[int, int], start: int,
                   limit: int, freed_at: int) -> int:
    """Where the block at `start`, live from before recording until event `freed_at`, must end:
    at the lowest address above it that the trace allocates while it is live (an alloc always
    takes the start of a free block), or at `limit`."""
    k = bisect_right(allocated_at, start)
    while k < len(allocated_at) and allocated_at[k] < limit:
        if first_alloc[allocated_at[k]] < freed_at:
            return allocated_at[k]
        k += 1
    return limit


class _SnapshotReplay:
    """One device's trace replayed against the state that predates it."""

    def __init__(self, events: list, segments: list, settings: AllocatorSettings):
        self.events = [e for e in events if isinstance(e, dict) and e.get("action") in STEP_ACTIONS]
        self.segments = segments
        self.settings = settings
        self.model = CachingAllocator(settings)

    # The state before recording -------------------------------------------------------------

    def _initial_state(self) -> dict[int, object]:
        """Segments and live blocks as they were when recording began; returns address -> block
        for the blocks live then."""
        first_segment_action: dict[int, str] = {}
        # addr -> (requested, size if the snapshot records it, index of its free or None)
        early_blocks: dict[int, tuple[int, int | None, int | None]] = {}
        live: set[int] = set()
        first_alloc: dict[int, int] = {}  # address -> index of the first traced alloc there
        # addr -> (size, stream, small, expandable)
        early_segments: dict[int, tuple[int, int, bool, bool]] = {}
        for index, event in enumerate(self.events):
            action, addr = event["action"], event["addr"]
            if action == "alloc":
                live.add(addr)
                first_alloc.setdefault(addr, index)
            elif action == "free_completed":
                if addr in live:
                    live.discard(addr)
                elif addr not in first_alloc and addr not in early_blocks:
                    early_blocks[addr] = (event["size"], None, index)  # predates the recording
            elif addr not in first_segment_action:
                first_segment_action[addr] = action
                if action in SEGMENT_GONE:
                    size = event["size"]
                    early_segments[addr] = (size, event.get("stream", 0), size == SMALL_BUFFER,
                                            action == "segment_unmap")
        for segment in self.segments:
            addr = segment["address"]
            if addr in first_segment_action:  # made or freed in the trace: not as it began
                continue
            small = segment.get("segment_type") == "small" if "segment_type" in segment \
                else segment["total_size"] == SMALL_BUFFER
            early_segments[addr] = (segment["total_size"], segment.get("stream", 0), small,
                                    bool(segment.get("is_expandable", False)))
            for block in segment.get("blocks", ()):
                if block.get("state") in ACTIVE_STATES and block["address"] not in live:
                    requested = block.get("requested_size", block["size"]) or block["size"]
                    early_blocks[block["address"]] = (requested, block["size"], None)
        starts = sorted(early_segments)
        members: dict[int, list[int]] = {addr: [] for addr in starts}
        for addr in early_blocks:
            k = bisect_right(starts, addr) - 1
            if k >= 0 and addr < starts[k] + early_segments[starts[k]][0]:
                members[starts[k]].append(addr)
        allocated_at = sorted(first_alloc)
        blocks: dict[int, object] = {}
        for addr in starts:
            size, stream, small, expandable = early_segments[addr]
            end = addr + size
            inside = sorted(members[addr])
            live_blocks = []
            for j, start in enumerate(inside):
                requested, known, freed_at = early_blocks[start]
                limit = inside[j + 1] if j + 1 < len(inside) else end
                if known is None:
                    limit = _next_boundary(allocated_at, first_alloc, start, limit, freed_at)
                length = known if known is not None else self._early_size(requested, small,
                                                                         limit - start)
                live_blocks.append((start, min(length, limit - start), requested))
            for block in self.model.add_segment(addr, size, stream, small, live_blocks,
                                                expandable):
                blocks[block.addr] = block
        self.initial_reserved = self.model.stats.reserved
        return blocks

    def _early_size(self, requested: int, small: bool, room: int) -> int:
        """A block allocated before recording whose size no snapshot records: its rounded
        request, plus what follows it when that was too small to split off."""
        size = round_size(requested, self.settings)
        rest = room - size
        if self.settings.expandable_segments or small:
            return size if rest >= 512 else room
        if size >= self.settings.split_limit or rest <= SMALL_SIZE:
            return room
        return size

    # The trace ----------------------------------------------------------------------------

    def run(self, cancel: CancelToken = NEVER) -> AllocatorReplay:
        model = self.model
        live = self._initial_state()
        recorder = _Recorder(model)
        recorder.step()  # step 0, `start`
        recorded: list[int] = []
        pending: list[tuple[int, int, int]] = []  # recorded segment_allocs since the last alloc
        matched = [0]  # segments made at the request a recorded one of that size was made for
        placements = allocs = frees = 0
        reserved = peak = self.initial_reserved

        def segment_address(size: int, stream: int) -> int | None:
            # The model needs a segment: a recorded cudaMalloc of that size gives its address.
            for k, (addr, got, on) in enumerate(pending):
                if got == size and on == stream:
                    del pending[k]
                    matched[0] += 1
                    return addr
            return None

        for k, event in enumerate(self.events):
            if k % REPORT_EVERY == 0:
                cancel.report("replaying the allocator", k / len(self.events))
            action, addr, size = event["action"], event["addr"], event["size"]
            if action == "alloc":
                if addr in live:
                    raise PlanError(f"allocates {addr:#x}, which is still live")
                block = model.malloc(size, event.get("stream", 0), segment_address)
                allocs += 1
                placements += block.addr == addr
                pending.clear()  # recorded segments the model did not need for this request
                live[addr] = block
            elif action == "free_completed":
                block = live.pop(addr, None)
                if block is not None:
                    model.free(block)
            elif action in SEGMENT_MADE:
                recorded.append(size)
                pending.append((addr, size, event.get("stream", 0)))
                reserved += size
                peak = max(peak, reserved)
            else:
                frees += 1
                reserved -= size
                if action == "segment_unmap":
                    model.unmap(addr, size)
                elif not model.release_segment(addr):
                    self._release_like(size, event.get("stream", 0))
            recorder.step()
        return recorder.result(
            initial_reserved_bytes=self.initial_reserved, recorded_segments=tuple(recorded),
            matched_in_order=matched[0], recorded_peak_reserved_bytes=peak,
            recorded_segment_frees=frees, placements_matched=placements, allocs=allocs)

    def _release_like(self, size: int, stream: int) -> None:
        """A recorded segment_free the model cannot apply at its address (it made that segment
        elsewhere): return one of its own wholly free segments of that size and stream."""
        for segment in list(self.model.segments.values()):
            if segment.size == size and segment.stream == stream and \
                    self.model.release_segment(segment.addr):
                return
