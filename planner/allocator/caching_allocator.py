"""A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp).

Written from the C++ source's rules, not its code; docs/semantics.md ("The caching allocator
model") lists each rule with the function it comes from. One `CachingAllocator` is one device's
`DeviceCachingAllocator` without CUDA graphs' private pools: two pools (small, large) of cached
free blocks ordered by (stream, size, address); requests are rounded, served by best fit, split,
and freed blocks merge with free neighbours of the same segment. Segments are never returned
except by `release_segment` (a recorded `segment_free`) or `empty_cache`, or by the out-of-memory
retry when a `capacity` is given.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Callable, Mapping

from sortedcontainers import SortedList

from ..support.errors import PlanError

MIN_BLOCK = 512                 # kMinBlockSize: every size rounds up to a multiple of this
SMALL_SIZE = 1 << 20            # kSmallSize: the largest request of the small pool
SMALL_BUFFER = 2 << 20          # kSmallBuffer: small requests are packed into 2 MiB segments
MIN_LARGE_ALLOC = 10 << 20      # kMinLargeAlloc: below this a large request gets a 20 MiB segment
LARGE_BUFFER = 20 << 20         # kLargeBuffer
ROUND_LARGE = 2 << 20           # kRoundLarge: larger requests round their segment to 2 MiB
POWER2_INTERVALS = 16           # kRoundUpPowerOfTwoIntervals: 1 MiB .. 32 GiB, one per power of 2
NO_LIMIT = (1 << 64) - 1        # max_split_size when unset (SIZE_MAX)
# A synthetic address space for segments the model makes without a recorded address: far above
# any device pointer a snapshot holds, so they never overlap a real segment.
SYNTHETIC_BASE = 1 << 56
# The address range a synthetic expandable segment may grow into: past any device's memory.
EXPANDABLE_RANGE = 1 << 50
# Block keys, unique for the process's life.
_BLOCK_KEYS = itertools.count()


@dataclass(frozen=True)
class AllocatorSettings:
    """The allocator's configuration (PYTORCH_CUDA_ALLOC_CONF) that changes where blocks go.

    `max_split_size`: blocks at least this large are never split (None: no limit).
    `roundup_power2_divisions`: per power-of-2 interval from 1 MiB, how many divisions a request
    rounds up to (0 or 1: plain 512-byte rounding). `expandable_segments`: one growing segment per
    stream and pool instead of one cudaMalloc per segment.
    """

    max_split_size: int | None = None
    roundup_power2_divisions: tuple[int, ...] = (0,) * POWER2_INTERVALS
    expandable_segments: bool = False

    @classmethod
    def from_snapshot(cls, settings: Mapping | None) -> "AllocatorSettings":
        """The settings a snapshot's `allocator_settings` records (missing keys: the defaults)."""
        if not isinstance(settings, Mapping):
            return cls()
        split = settings.get("max_split_size", -1)
        split = split if isinstance(split, int) and 0 < split < NO_LIMIT else None
        divisions = [0] * POWER2_INTERVALS
        raw = settings.get("roundup_power2_divisions")
        if isinstance(raw, Mapping):  # keyed by the interval's start in MiB: "1", "2", ... "32768"
            for key, value in raw.items():
                try:
                    index = int(key).bit_length() - 1
                except (TypeError, ValueError):
                    continue
                if 0 <= index < POWER2_INTERVALS and isinstance(value, int):
                    divisions[index] = value
        elif isinstance(raw, int):
            divisions = [raw] * POWER2_INTERVALS
        return cls(split, tuple(divisions), bool(settings.get("expandable_segments", False)))

    def with_changes(self, expandable_segments: bool | None = None,
                     max_split_size: int | None = None) -> "AllocatorSettings":
        """These settings with a what-if applied (None keeps the setting)."""
        return AllocatorSettings(
            self.max_split_size if max_split_size is None else max_split_size,
            self.roundup_power2_divisions,
            self.expandable_segments if expandable_segments is None else expandable_segments)

    @property
    def split_limit(self) -> int:
        return NO_LIMIT if self.max_split_size is None else self.max_split_size


class AllocatorOutOfMemory(PlanError):
    """A request the model cannot serve within its `capacity`, even after freeing the cache."""


class Block:
    """A run of bytes in one segment, free (cached) or allocated; linked to its neighbours."""

    __slots__ = ("addr", "size", "stream", "small", "segment", "prev", "next", "allocated",
                 "requested", "key")

    def __init__(self, addr: int, size: int, stream: int, small: bool, segment: "Segment"):
        self.addr, self.size, self.stream = addr, size, stream
        # Unique for the model's life: a modelled segment may overlap a recorded one (or a
        # huge one its synthetic neighbour), so an address alone does not name a free block.
        self.key = next(_BLOCK_KEYS)
        self.small, self.segment = small, segment
        self.prev: Block | None = None
        self.next: Block | None = None
        self.allocated = False
        self.requested = 0

    def __repr__(self) -> str:
        state = "allocated" if self.allocated else "free"
        return f"Block({self.addr:#x}, {self.size}, stream {self.stream}, {state})"


class Segment:
    """One cudaMalloc (or, expandable, one growing mapping): its address, mapped size, pool."""

    __slots__ = ("addr", "size", "stream", "small", "expandable", "tail")

    def __init__(self, addr: int, size: int, stream: int, small: bool, expandable: bool = False):
        self.addr, self.size, self.stream, self.small = addr, size, stream, small
        self.expandable = expandable
        self.tail: Block | None = None  # the last block, where an expandable segment grows

    def blocks(self):
        """The segment's blocks in address order."""
        block = self.tail
        while block is not None and block.prev is not None:
            block = block.prev
        while block is not None:
            yield block
            block = block.next


@dataclass
class Creation:
    """A segment the model made (or, expandable, grew by): where, how large, for which request."""

    addr: int
    size: int
    stream: int
    small: bool
    request: int  # index of the malloc call that needed it


@dataclass
class FragmentationAtPeak:
    """The allocator's state when reserved bytes first reached their peak."""

    reserved_bytes: int
    allocated_bytes: int
    requested_bytes: int
    largest_free_block: int
    free_blocks: int


@dataclass
class AllocatorStats:
    """Running totals: reserved (segments), allocated (block sizes), requested (what was asked)."""

    reserved: int = 0
    allocated: int = 0
    requested: int = 0
    peak_reserved: int = 0
    peak_allocated: int = 0
    peak_requested: int = 0
    at_peak: FragmentationAtPeak | None = None
    creations: list[Creation] = field(default_factory=list)
    released: list[tuple[int, int]] = field(default_factory=list)  # (addr, size) returned


def round_size(size: int, settings: AllocatorSettings) -> int:
    """`round_size`: at least 512 B, a multiple of 512 B or the next power-of-2 division."""
    if size < MIN_BLOCK:
        return MIN_BLOCK
    index = max(size.bit_length() - 1 - 20, 0)  # the interval of size's power of 2, from 1 MiB
    divisions = settings.roundup_power2_divisions[min(index, POWER2_INTERVALS - 1)]
    if divisions > 1 and size > MIN_BLOCK * divisions:
        return _next_power2_division(size, divisions)
    return -(-size // MIN_BLOCK) * MIN_BLOCK


def _next_power2_division(size: int, divisions: int) -> int:
    """`roundup_power2_next_division`: the next of `divisions` steps between powers of 2."""
    if size & (size - 1) == 0:
        return size
    floor = 1 << (size.bit_length() - 1)
    step = floor >> (divisions.bit_length() - 1)
    if step == 0:
        return floor << 1
    rounded = size & ~(step - 1)
    return size if rounded == size else rounded + step


def allocation_size(size: int) -> int:
    """`get_allocation_size`: the segment a rounded request of `size` bytes makes."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-size // ROUND_LARGE) * ROUND_LARGE


class CachingAllocator:
    """One device's caching allocator: `malloc` and `free` as PyTorch does them.

    `capacity`, when given, is the device memory: a segment that would pass it first frees every
    wholly free cached segment (the out-of-memory retry's `release_cached_blocks`; its first,
    oversize-only step frees a subset of those) and raises `AllocatorOutOfMemory` if that is not
    enough.
    """

    def __init__(self, settings: AllocatorSettings | None = None, capacity: int | None = None):
        self.settings = settings or AllocatorSettings()
        self.capacity = capacity
        self.stats = AllocatorStats()
        self.segments: dict[int, Segment] = {}
        # Cached free blocks per pool (True: small), sorted by (stream, size, address, key).
        # Sorted lists that insert and remove in O(log n): a fragmented pool caches hundreds of
        # thousands of free blocks, and a plain list moves them all at each change.
        self._free: dict[bool, SortedList] = {True: SortedList(), False: SortedList()}
        self._free_at: dict[int, Block] = {}  # block key -> cached free block
        # Every cached free block by (size, address, key), whatever its pool and stream: the
        # largest are its end, so the state at each peak costs no walk over thousands of streams.
        self._by_size = SortedList()
        self._next_synthetic = SYNTHETIC_BASE
        self._requests = 0
        self._split_limit = self.settings.split_limit
        # An expandable segment per (small, stream).
        self._expandable: dict[tuple[bool, int], Segment] = {}

    # --- the free-block index -------------------------------------------------------------

    def _cache(self, block: Block) -> None:
        self._free[block.small].add((block.stream, block.size, block.addr, block.key))
        self._by_size.add((block.size, block.addr, block.key))
        self._free_at[block.key] = block

    def _uncache(self, block: Block) -> None:
        self._free[block.small].remove((block.stream, block.size, block.addr, block.key))
        self._by_size.remove((block.size, block.addr, block.key))
        del self._free_at[block.key]

    # --- malloc ---------------------------------------------------------------------------

    def malloc(self, requested: int, stream: int = 0,
               segment_address: Callable[[int, int], int | None] | None = None) -> Block:
        """Serve a request of `requested` bytes on `stream`; returns the allocated block.

        `segment_address(size, stream)`, when given, names the address of a segment the
        request needs (a recorded cudaMalloc's result); None or no callback: a synthetic one.
        """
        settings = self.settings
        size = round_size(requested, settings)
        small = size <= SMALL_SIZE
        request = self._requests
        self._requests += 1
        block = self._best_fit(small, stream, size)
        if block is None:
            block = self._new_block(small, stream, size, request, segment_address)
        else:
            self._uncache(block)
        remaining = block.size - size
        if small or settings.expandable_segments:
            split = remaining >= MIN_BLOCK
        else:
            split = size < self._split_limit and remaining > SMALL_SIZE
        if split:
            self._split(block, size)
        block.allocated = True
        block.requested = requested
        stats = self.stats
        stats.allocated += block.size
        stats.requested += requested
        if stats.allocated > stats.peak_allocated:
            stats.peak_allocated = stats.allocated
        if stats.requested > stats.peak_requested:
            stats.peak_requested = stats.requested
        if stats.reserved == stats.peak_reserved and (
                stats.at_peak is None or stats.at_peak.reserved_bytes < stats.reserved
                or stats.at_peak.requested_bytes < stats.requested):
            self.note_peak()
        return block

    def _best_fit(self, small: bool, stream: int, size: int) -> Block | None:
        """`get_free_block`: the smallest cached block of the stream that fits, within limits."""
        keys = self._free[small]
        i = keys.bisect_left((stream, size, -1))
        if i == len(keys) or keys[i][0] != stream:
            return None
        block = self._free_at[keys[i][3]]
        if block.segment.expandable and block.next is None:
            # An expandable segment's free tail can grow, so for best fit it counts as larger
            # than any other block that fits: take the smallest of those if there is one.
            for j in range(i + 1, len(keys)):
                if keys[j][0] != stream:
                    break
                other = self._free_at[keys[j][3]]
                if not (other.segment.expandable and other.next is None):
                    block = other
                    break
        limit = self._split_limit
        if size < limit <= block.size:
            return None  # an oversize block is never handed to a smaller request
        if size >= limit and block.size >= size + LARGE_BUFFER:
            return None  # an oversize request takes an oversize block at most 20 MiB larger
        return block

    def _new_block(self, small: bool, stream: int, size: int, request: int,
                   segment_address) -> Block:
        """`alloc_block`: a new segment (or more of an expandable one) holding `size` bytes."""
        if self.settings.expandable_segments:
            return self._grow_expandable(small, stream, size, request, segment_address)
        alloc = allocation_size(size)
        self._make_room(alloc, small, stream)
        addr = segment_address(alloc, stream) if segment_address is not None else None
        if addr is None or addr in self.segments:
            addr = self._synthetic(alloc)
        segment = Segment(addr, alloc, stream, small)
        block = Block(addr, alloc, stream, small, segment)
        segment.tail = block
        self.segments[addr] = segment
        self._reserve(alloc)
        self.stats.creations.append(Creation(addr, alloc, stream, small, request))
        return block

    def _grow_expandable(self, small: bool, stream: int, size: int, request: int,
                         segment_address=None) -> Block:
        """`try_allocate_expandable_block`: map pages (2 MiB small, 20 MiB large) at the end of
        the stream's segment, joined with its free tail."""
        page = SMALL_BUFFER if small else LARGE_BUFFER
        segment = self._expandable.get((small, stream))
        tail = segment.tail if segment is not None else None
        free_tail = tail if tail is not None and not tail.allocated else None
        have = free_tail.size if free_tail is not None else 0
        mapped = -(-(size - have) // page) * page
        self._make_room(mapped, small, stream)
        # A recorded segment_map gives the address of a new segment (its first pages); for a
        # segment that grows it only confirms the size.
        given = segment_address(mapped, stream) if segment_address is not None else None
        if segment is None:
            addr = given if given is not None and given not in self.segments else \
                self._synthetic(EXPANDABLE_RANGE)
            segment = Segment(addr, 0, stream, small, expandable=True)
            self._expandable[(small, stream)] = segment
            self.segments[addr] = segment
        if free_tail is not None:
            self._uncache(free_tail)
            free_tail.size += mapped
            block = free_tail
        else:
            block = Block(segment.addr + segment.size, mapped, stream, small, segment)
            block.prev = tail
            if tail is not None:
                tail.next = block
            segment.tail = block
        self.stats.creations.append(Creation(segment.addr + segment.size, mapped, stream, small,
                                             request))
        segment.size += mapped
        self._reserve(mapped)
        return block

    def unmap(self, addr: int, size: int) -> bool:
        """`unmap_block` on the free end of an expandable segment: its last `size` bytes from
        `addr` go back to the device. False (nothing changes) for any other range."""
        for segment in self._expandable.values():
            tail = segment.tail
            end = segment.addr + segment.size
            if tail is not None and not tail.allocated and addr + size == end and \
                    tail.addr <= addr:
                self._uncache(tail)
                tail.size -= size
                if tail.size:
                    self._cache(tail)
                else:
                    segment.tail = tail.prev
                    if tail.prev is not None:
                        tail.prev.next = None
                segment.size -= size
                self.stats.reserved -= size
                self.stats.released.append((addr, size))
                return True
        return False

    def _make_room(self, size: int, small: bool, stream: int) -> None:
        """The out-of-memory retry: release cached segments until `size` more bytes fit."""
        if self.capacity is None or self.stats.reserved + size <= self.capacity:
            return
        self.empty_cache()
        if self.stats.reserved + size > self.capacity:
            raise AllocatorOutOfMemory(
                f"out of memory: {size:,} more bytes for the {'small' if small else 'large'} "
                f"pool (stream {stream}) pass the capacity {self.capacity:,} with "
                f"{self.stats.reserved:,} reserved")

    def _synthetic(self, size: int) -> int:
        addr = self._next_synthetic
        self._next_synthetic += -(-max(size, 1) // ROUND_LARGE) * ROUND_LARGE
        return addr

    def _reserve(self, size: int) -> None:
        stats = self.stats
        stats.reserved += size
        if stats.reserved > stats.peak_reserved:
            stats.peak_reserved = stats.reserved

    def note_peak(self) -> None:
        """Keep the state now as the state at the peak (reserved at its highest, live the highest
        then); `malloc` calls it, and a replay that never mallocs calls it once at the end."""
        stats = self.stats
        stats.at_peak = FragmentationAtPeak(stats.reserved, stats.allocated, stats.requested,
                                            self.largest_free_block(), len(self._free_at))

    def _split(self, block: Block, size: int) -> None:
        """Cut `block` to `size` bytes; the rest becomes a cached free block after it."""
        rest = Block(block.addr + size, block.size - size, block.stream, block.small,
                     block.segment)
        rest.prev, rest.next = block, block.next
        if block.next is not None:
            block.next.prev = rest
        block.next = rest
        block.size = size
        if block.segment.tail is block:
            block.segment.tail = rest
        self._cache(rest)

    # --- free -----------------------------------------------------------------------------

    def free(self, block: Block) -> None:
        """`free_block`: return `block` to its pool, merged with free neighbours of its segment."""
        if not block.allocated:
            raise PlanError(f"frees {block.addr:#x}, which is not allocated")
        stats = self.stats
        stats.allocated -= block.size
        stats.requested -= block.requested
        block.allocated = False
        block.requested = 0
        prev, nxt = block.prev, block.next
        if prev is not None and not prev.allocated:
            self._uncache(prev)
            block.addr = prev.addr
            block.size += prev.size
            block.prev = prev.prev
            if prev.prev is not None:
                prev.prev.next = block
        if nxt is not None and not nxt.allocated:
            self._uncache(nxt)
            block.size += nxt.size
            block.next = nxt.next
            if nxt.next is not None:
                nxt.next.prev = block
            if block.segment.tail is nxt:
                block.segment.tail = block
        self._cache(block)

    # --- returning segments ---------------------------------------------------------------

    def release_segment(self, addr: int) -> bool:
        """`release_block`: return the wholly free segment at `addr` to the device.

        False (and nothing changes) when the model has no such segment or part of it is in use.
        """
        segment = self.segments.get(addr)
        block = segment.tail if segment is not None else None
        if block is None or block.allocated or block.prev is not None or block.next is not None:
            return False
        self._uncache(block)
        del self.segments[addr]
        if segment.expandable:
            del self._expandable[(segment.small, segment.stream)]
        self.stats.reserved -= segment.size
        self.stats.released.append((addr, segment.size))
        return True

    def empty_cache(self) -> None:
        """`release_cached_blocks`: return every segment that is wholly free."""
        for addr in [b.segment.addr for b in self._free_at.values()
                     if b.prev is None and b.next is None]:
            self.release_segment(addr)

    # --- building state that predates a trace ---------------------------------------------

    def add_segment(self, addr: int, size: int, stream: int, small: bool,
                    live: list[tuple[int, int, int]] = (), expandable: bool = False
                    ) -> list[Block]:
        """Put a segment that already exists (made before a trace began) into the model.

        `live`: its allocated blocks as (address, size, requested), in any order; the gaps
        between them become cached free blocks. Returns the allocated blocks, in address order.
        An `expandable` segment becomes the one its stream and pool grow (the highest given).
        """
        if addr in self.segments:
            raise PlanError(f"segment {addr:#x} is given twice")
        segment = Segment(addr, size, stream, small, expandable)
        self.segments[addr] = segment
        current = self._expandable.get((small, stream))
        if expandable and (current is None or current.addr < addr):
            self._expandable[(small, stream)] = segment
        pieces, cursor, out = [], addr, []
        for start, length, requested in sorted(live):
            if start < cursor or start + length > addr + size:
                raise PlanError(f"block {start:#x} ({length} bytes) does not fit segment "
                                f"{addr:#x} ({size} bytes) beside its other blocks")
            if start > cursor:
                pieces.append((cursor, start - cursor, None))
            pieces.append((start, length, requested))
            cursor = start + length
        if cursor < addr + size:
            pieces.append((cursor, addr + size - cursor, None))
        prev = None
        for start, length, requested in pieces:
            block = Block(start, length, stream, small, segment)
            block.prev = prev
            if prev is not None:
                prev.next = block
            prev = block
            if requested is None:
                self._cache(block)
            else:
                block.allocated, block.requested = True, requested
                self.stats.allocated += length
                self.stats.requested += requested
                out.append(block)
        segment.tail = prev
        self.stats.reserved += size
        stats = self.stats
        stats.peak_reserved = max(stats.peak_reserved, stats.reserved)
        stats.peak_allocated = max(stats.peak_allocated, stats.allocated)
        stats.peak_requested = max(stats.peak_requested, stats.requested)
        return out

    # --- looking at the state -------------------------------------------------------------

    def free_blocks(self, count: int | None = None) -> list[Block]:
        """The cached free blocks, largest first, equal sizes by descending address (the `count`
        largest when given)."""
        # A slice of the last few is a copy of the end of one of the index's lists (an
        # allocator at a new peak at every malloc asks this each time).
        largest = self._by_size.islice(reverse=True) if count is None else \
            reversed(self._by_size[-count:]) if count > 0 else []
        return [self._free_at[key] for _, _, key in largest]

    def largest_free_block(self) -> int:
        """The size of the largest cached free block (0 when none)."""
        return self._by_size[-1][0] if self._by_size else 0
