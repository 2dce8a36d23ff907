"""Plans as plain data: where each buffer lives, and the trace of how it got there."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from json.encoder import encode_basestring_ascii

from ..support.gc_pause import paused_collection
from ..support.text import listed
from .lazy_sequence import Lazy


@dataclass(frozen=True, slots=True)
class Placement:
    """One buffer's place in the slab: `reserved` bytes (aligned) from `offset`."""

    name: str
    offset: int
    bytes: int
    reserved: int

    @property
    def end(self) -> int:
        """One past the last reserved byte."""
        return self.offset + self.reserved


class Placements(Lazy):
    """A plan's placements, in request order, held as four lists (names, offsets, bytes,
    reserved bytes): each `Placement` is built on first use, and `rows` gives the JSON rows
    without them (a million frozen objects cost more than a second to make)."""

    def __init__(self, names: list[str], offsets: list[int], sizes: list[int],
                 reserved: list[int]):
        super().__init__(len(names), lambda: map(Placement, names, offsets, sizes, reserved))
        self.columns = (names, offsets, sizes, reserved)

    def rows(self) -> list[dict]:
        """Each placement as `{"name", "offset", "bytes", "reserved"}`."""
        return [{"name": n, "offset": o, "bytes": b, "reserved": r}
                for n, o, b, r in zip(*self.columns)]

    def json_array(self) -> str:
        """`json.dumps(self.rows())`, written from the columns without building the rows
        (half the time at a million placements)."""
        names, offsets, sizes, reserved = self.columns
        row = '{{"name": {}, "offset": {}, "bytes": {}, "reserved": {}}}'.format
        return "[" + ", ".join(map(row, map(encode_basestring_ascii, names), offsets, sizes,
                                   reserved)) + "]"


@dataclass(frozen=True, slots=True)
class PlacementStep:
    """What the placer did for one request, so a view can replay it instead of re-deriving it.

    `conflicts`: the already-placed buffers it had to avoid; `skipped_gaps`: free (start, end)
    ranges between them that it passed over; `reuses`: the buffers that last held the bytes it
    lands on.
    """

    request: int
    name: str
    reserved: int
    conflicts: tuple[str, ...]
    skipped_gaps: tuple[tuple[int, int], ...]
    offset: int
    reuses: tuple[str, ...]

    def narration(self) -> str:
        """One line saying what happened, in the lesson's words."""
        if self.conflicts:
            shown = _name_list(self.conflicts)
            head = f"{self.name} conflicts with {shown}"
        else:
            head = f"{self.name} conflicts with nothing placed"
        where = f"lands at {self.offset:,}"
        if self.reuses:
            where += f", in {_name_list(self.reuses)}'s bytes"
        return f"{head}; {where}"


def _name_list(names: tuple[str, ...], limit: int = 4) -> str:
    if len(names) > limit:
        return listed([*names[:limit], f"{len(names) - limit} more"])
    return listed(names)


@dataclass(frozen=True)
class Plan:
    """Every buffer's offset in one slab, in request order, with the placement trace."""

    placements: Sequence[Placement]  # a tuple, or `Placements` built on first use
    # A tuple, or a `lazy_trace.PlacementTrace` that derives each step when indexed.
    steps: Sequence[PlacementStep]
    slab_bytes: int
    no_reuse_bytes: int
    algorithm: str
    conflict_model: str
    alignment: int
    # Set by search: the seed and the steps it spent (replaying both gives this plan again),
    # and "optimal" or how far the plan is from the best bound known.
    seed: int | None = None
    iterations: int | None = None
    proof: str | None = None

    @property
    def order(self) -> tuple[str, ...]:
        """The request order the plan was placed in."""
        return tuple(p.name for p in self.placements)

    @cached_property
    def by_name(self) -> dict[str, Placement]:
        """Buffer name to its placement."""
        return {p.name: p for p in self.placements}

    @property
    def saved_bytes(self) -> int:
        """Bytes reuse saves against giving every buffer its own range."""
        return self.no_reuse_bytes - self.slab_bytes

    def to_dict(self, placements: bool = True) -> dict:
        """The plan as JSON-ready data (placements in request order, or None where not asked
        for; a search plan also has `seed`, `iterations` and `proof`)."""
        with paused_collection():  # a million small dicts: see gc_pause
            data = {
                "slab_bytes": self.slab_bytes,
                "no_reuse_bytes": self.no_reuse_bytes,
                "algorithm": self.algorithm,
                "conflicts": self.conflict_model,
                "placements": self.placement_rows() if placements else None,
            }
        for key in ("seed", "iterations", "proof"):
            if getattr(self, key) is not None:
                data[key] = getattr(self, key)
        return data

    def placement_rows(self) -> list[dict]:
        """Each placement as `{"name", "offset", "bytes", "reserved"}`, in request order."""
        if isinstance(self.placements, Placements):
            return self.placements.rows()
        return [{"name": p.name, "offset": p.offset, "bytes": p.bytes, "reserved": p.reserved}
                for p in self.placements]

    def placements_json(self) -> str:
        """`json.dumps(self.placement_rows())`, written from the columns where the plan keeps
        them."""
        if isinstance(self.placements, Placements):
            return self.placements.json_array()
        return json.dumps(self.placement_rows())
