"""What PyTorch's caching allocator did over a recorded trace: the graph model's record of a
snapshot, kept beside the graph it was read into (`Graph.allocator`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping


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
    # The stacks with full paths (`stacks` keeps file names only), and each block's category.
    full_stacks: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
