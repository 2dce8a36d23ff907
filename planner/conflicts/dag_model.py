"""Conflict model "dag" (Luminal's `plan_slab`): buffers share bytes only when the DAG orders them.

When the DAG admits a single topological order (a chain), "every use of a strictly reaches every
use of b" is "a's last step comes before b's first step": the model then works on intervals and
never builds the closure. Otherwise it keeps strict reachability as bitsets over topological
positions (O(nodes²) bits). See docs/semantics.md §2.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from ..model.bitset import members
from ..model.graph import Graph
from ..model.intervals import first_last, overlap_mask, overlap_pairs
from ..model.reachability import closure
from ..support.cancel import NEVER, CancelToken
from ..support.errors import PlanError
from .antichain import ChainNetwork, LowerBound, bound_of, heaviest_antichain, peak_live


# The bitsets of the closure and of the conflict masks: two per node over the nodes, two per node
# over the buffers. Past this many bytes of them (before Python's own overhead) a graph is
# refused up front: 74,000 nodes and 120,000 buffers would need 3.6 GB, then tens as lists.
CLOSURE_BYTES_LIMIT = 1 << 30


def closure_bytes(graph: Graph) -> int:
    """The bytes the dag model's reachability and conflict bitsets of `graph` take."""
    n = len(graph.nodes)
    return 2 * n * (n + len(graph.buffers)) // 8


def check_closure_size(graph: Graph) -> None:
    """A PlanError naming the limit when `graph` is too large for the dag model's bitsets."""
    need = closure_bytes(graph)
    if need > CLOSURE_BYTES_LIMIT:
        raise PlanError(f"the dag model of {len(graph.nodes):,} nodes and {len(graph.buffers):,} "
                        f"buffers needs {need:,} bytes of reachability sets, over the "
                        f"{CLOSURE_BYTES_LIMIT:,}-byte limit; plan it in its schedule's order "
                        f"with --conflicts serial")


class DagConflicts:
    """`precedes` and `conflicts` over a graph's strict reachability.

    `precedes(a, b)` holds when every use of `a` strictly reaches every use of `b`; two buffers
    conflict unless one precedes the other. An invented execution order never decides aliasing.
    """

    name = "dag"

    def __init__(self, graph: Graph):
        self.graph = graph
        self._reach: tuple[list[int], list[int]] | None = None
        self._mask_parts: tuple[list[int], list[int]] | None = None
        self._extremes: tuple[list[list[int]], list[list[int]]] | None = None

    # -- steps and intervals ----------------------------------------------------------------

    @cached_property
    def _position(self) -> np.ndarray:
        """Per node index, its place in the graph's topological order."""
        position = np.empty(len(self.graph.nodes), dtype=np.int64)
        position[np.asarray(self.graph.topo, dtype=np.int64)] = np.arange(len(self.graph.nodes))
        return position

    def use_steps(self) -> tuple[np.ndarray, np.ndarray]:
        """Each buffer's first and last use as positions in one topological order."""
        return self._steps

    @cached_property
    def _steps(self) -> tuple[np.ndarray, np.ndarray]:
        return first_last(self._position, *self.graph.use_arrays)

    @cached_property
    def intervals(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(first, last) topological positions when the order is unique (the nodes form a chain),
        so that conflicts are exactly overlaps; else None."""
        topo, successors = self.graph.topo, self.graph.successors
        if all(topo[p + 1] in successors[topo[p]] for p in range(len(topo) - 1)):
            return self._steps
        return None

    @cached_property
    def conflict_pairs(self) -> int | None:
        """How many pairs conflict, when the model is one of intervals; else None (unknown)."""
        return None if self.intervals is None else overlap_pairs(*self.intervals)

    # -- the relation -------------------------------------------------------------------------

    def precedes(self, a: int, b: int) -> bool:
        """Whether every use of buffer `a` strictly reaches every use of buffer `b`."""
        if self.intervals is not None:
            first, last = self.intervals
            return bool(last[a] < first[b])
        after = self._closure()[0]
        bits = self._use_bits[b]
        return all(bits & ~after[u] == 0 for u in self._last_uses[a])

    def conflicts(self, a: int, b: int) -> bool:
        """Whether buffers `a` and `b` may be live together (so must not share bytes)."""
        return a != b and not self.precedes(a, b) and not self.precedes(b, a)

    def prepare(self, cancel: CancelToken = NEVER) -> None:
        """Do the one-time work `conflict_mask` needs now, stopping if `cancel` is set."""
        if self.intervals is None:
            self._closure(cancel)
            self._masks(cancel)

    def conflict_mask(self, b: int) -> int:
        """The set of buffers that conflict with buffer `b`, as a bitset over buffer indices."""
        if self.intervals is not None:
            return overlap_mask(*self.intervals, b)
        done_before, started_after = self._masks()
        earlier = -1
        for v in self._first_uses[b]:
            earlier &= done_before[v]
        later = -1
        for u in self._last_uses[b]:
            later &= started_after[u]
        return (1 << len(self.graph.buffers)) - 1 & ~earlier & ~later & ~(1 << b)

    def lower_bound(self, cancel: CancelToken = NEVER) -> LowerBound:
        """The heaviest antichain of `precedes`: the peak of live bytes on a chain, else a max
        flow over the DAG itself (see `_chain_network`)."""
        if self.intervals is not None:
            chosen = peak_live(*self.intervals, self.graph.reserved)
        else:
            chosen = heaviest_antichain(self._chain_network(cancel), cancel)
        return bound_of(self.graph, chosen, self.name)

    def explain(self, a: int, b: int) -> str:
        """Why buffers `a` and `b` may or may not share bytes, naming the uses that decide it."""
        names = self.graph.buffers
        node = self.graph.nodes
        if a == b:
            return f"{names[a].name} is the same buffer"
        for first, second in ((a, b), (b, a)):
            if self.precedes(first, second):
                return (f"{names[first].name} and {names[second].name} may share bytes: "
                        f"{names[first].name} precedes {names[second].name} (every use of "
                        f"{names[first].name} reaches every use of {names[second].name})")
        reasons = []
        for first, second in ((a, b), (b, a)):
            u, v = self._unreached_pair(first, second)
            why = f"{node[u].name} cannot reach itself" if u == v else \
                f"{node[u].name} cannot reach {node[v].name}"
            reasons.append(f"{names[first].name} does not precede {names[second].name} ({why})")
        return (f"{names[a].name} and {names[b].name} conflict, so they may not share bytes: "
                + "; ".join(reasons))

    def _unreached_pair(self, a: int, b: int) -> tuple[int, int]:
        """A use of `a` and a use of `b` (node indices) such that the first does not strictly
        reach the second."""
        position = self._position
        for u in self.graph.use_indices[a]:
            for v in self.graph.use_indices[b]:
                p, q = int(position[u]), int(position[v])
                reached = p < q if self.intervals is not None else self._closure()[0][p] >> q & 1
                if not reached:
                    return u, v
        raise ValueError("buffers are ordered")

    # -- the closure and what is derived from it (not needed on a chain) ---------------------

    def _closure(self, cancel: CancelToken = NEVER) -> tuple[list[int], list[int]]:
        """(after, before): strict reachability as bitsets over topological positions."""
        if self._reach is None:
            check_closure_size(self.graph)
            self._reach = closure(self.graph.successors, self.graph.topo, cancel)
        return self._reach

    @cached_property
    def _use_bits(self) -> list[int]:
        """Per buffer, its uses as a bitset over topological positions."""
        position = self._position
        bits = []
        for uses in self.graph.use_indices:
            b = 0
            for u in uses:
                b |= 1 << int(position[u])
            bits.append(b)
        return bits

    @property
    def _first_uses(self) -> list[list[int]]:
        """Per buffer, the positions of its uses that no other use of it reaches."""
        return self._extreme_uses()[0]

    @property
    def _last_uses(self) -> list[list[int]]:
        """Per buffer, the positions of its uses that reach no other use of it."""
        return self._extreme_uses()[1]

    def _extreme_uses(self, cancel: CancelToken = NEVER) -> tuple[list[list[int]], list[list[int]]]:
        if self._extremes is None:
            after, before = self._closure(cancel)
            firsts, lasts = [], []
            for b, bits in enumerate(self._use_bits):
                if not b & 1023:
                    cancel.check()
                uses = members(bits)
                firsts.append([p for p in uses if before[p] & bits == 0])
                lasts.append([p for p in uses if after[p] & bits == 0])
            self._extremes = (firsts, lasts)
        return self._extremes

    @cached_property
    def _successor_positions(self) -> list[list[int]]:
        """Per topological position, the positions of its direct successors."""
        position = self._position.tolist()
        successors = self.graph.successors
        return [[position[s] for s in successors[v]] for v in self.graph.topo]

    def _masks(self, cancel: CancelToken = NEVER) -> tuple[list[int], list[int]]:
        """Per position v: the buffers all of whose uses strictly reach v (done before), and the
        buffers all of whose uses v strictly reaches (started after)."""
        if self._mask_parts is None:
            succ = self._successor_positions
            preds: list[list[int]] = [[] for _ in succ]
            for p, ss in enumerate(succ):
                for q in ss:
                    preds[q].append(p)
            self._extreme_uses(cancel)
            after, before = self._closure(cancel)
            done = _propagate(range(len(succ)), preds, self._last_uses, after, cancel)
            started = _propagate(range(len(succ) - 1, -1, -1), succ, self._first_uses, before,
                                 cancel)
            self._mask_parts = (done, started)
        return self._mask_parts

    def _chain_network(self, cancel: CancelToken) -> ChainNetwork:
        """`precedes` as paths through two copies of the DAG: O(edges + buffers) arcs, plus a
        few direct ones for buffers with several last and several first uses.

        Layer Z ("strictly after"): buffer a with one last use u exits to Z at u's successors; one
        with several exits at the earliest nodes all of them strictly reach. Buffer b with one
        first use v is entered from Z at v. Layer Y ("at or before"), only when some buffer has
        several first uses: a with one last use u exits to Y at u, and such a b is entered from
        the latest nodes that strictly reach all its first uses. A buffer a with several last uses
        is joined directly to each b with several first uses that is a minimal buffer above a
        (every other buffer above a is reached through those minimal ones).
        """
        after, before = self._closure(cancel)
        succ = self._successor_positions
        nodes = len(succ)
        first_uses, last_uses = self._extreme_uses(cancel)
        several_first = [len(f) > 1 for f in first_uses]
        exits, entries, direct = [], [], []
        above = self._buffers_above(cancel) if any(several_first) else None
        for a, lasts in enumerate(last_uses):
            if not a & 255:
                cancel.report("lower bound", 0.5 * a / max(len(last_uses), 1))
            if len(lasts) == 1:
                exits.extend((a, q) for q in succ[lasts[0]])
                if above is not None:
                    exits.append((a, nodes + lasts[0]))
                continue
            exits.extend((a, p) for p in _lowest_generators(_meet(after, lasts), after))
            if above is not None:
                direct.extend((a, b) for b in above.minimal(a) if several_first[b])
        for b, firsts in enumerate(first_uses):
            if not b & 1023:
                cancel.report("lower bound", 0.5 + 0.5 * b / max(len(first_uses), 1))
            if not several_first[b]:
                entries.append((firsts[0], b))
            else:
                meet = _meet(before, firsts)  # the nodes strictly before all its first uses
                entries.extend((nodes + p, b) for p in _highest_generators(meet, before))
        cancel.check()
        degree = np.fromiter(map(len, succ), dtype=np.int64, count=nodes)
        relay_arcs = (np.repeat(np.arange(nodes), degree),
                      np.fromiter((q for ss in succ for q in ss), np.int64, int(degree.sum())))
        if above is not None:  # the same arcs again in layer Y
            relay_arcs = tuple(np.concatenate([ends, nodes + ends]) for ends in relay_arcs)
        cancel.check()
        network = ChainNetwork(list(self.graph.reserved), nodes * (1 if above is None else 2),
                               relay_arcs, _pairs(exits), _pairs(entries), _pairs(direct))
        cancel.check()
        return network

    def _buffers_above(self, cancel: CancelToken) -> "_BuffersAbove":
        """Per node, the buffers all of whose uses it strictly reaches, as bitsets over buffers
        ranked by first use (a linear extension of `precedes`)."""
        rank = np.argsort(self._steps[0], kind="stable")
        rank_of = np.empty(len(rank), dtype=np.int64)
        rank_of[rank] = np.arange(len(rank))
        succ = self._successor_positions
        started = _propagate(range(len(succ) - 1, -1, -1), succ, self._first_uses,
                             self._closure(cancel)[1], cancel,
                             rank_of.tolist())
        return _BuffersAbove(started, self._last_uses, rank.tolist(), cancel)


class _BuffersAbove:
    """The buffers that a buffer precedes, and the minimal ones among them."""

    def __init__(self, started_after: list[int], last_uses: list[list[int]], by_rank: list[int],
                 cancel: CancelToken):
        self.started_after = started_after
        self.last_uses = last_uses
        self.by_rank = by_rank
        self.cancel = cancel

    def of(self, a: int) -> int:
        """The buffers `a` precedes (bits = ranks): all their uses follow all of a's last uses."""
        return _meet(self.started_after, self.last_uses[a])

    def minimal(self, a: int) -> list[int]:
        """The minimal buffers above `a`: the lowest-ranked one left is minimal (ranks extend the
        order); drop it and everything above it, repeat."""
        found = []
        left = self.of(a)
        while left > 0:
            self.cancel.check()
            r = (left & -left).bit_length() - 1
            c = self.by_rank[r]
            found.append(c)
            left &= ~(self.of(c) | 1 << r)
        return found


def _meet(reach: list[int], nodes: list[int]) -> int:
    """The positions every one of `nodes` reaches (by `reach`), as a bitset."""
    bits = -1
    for p in nodes:
        bits &= reach[p]
    return bits


def _lowest_generators(up_closed: int, after: list[int]) -> list[int]:
    """The minimal elements of a set closed upwards under reachability (bits = positions): the
    earliest member is minimal; drop it and all it reaches, repeat."""
    found = []
    while up_closed > 0:
        p = (up_closed & -up_closed).bit_length() - 1
        found.append(p)
        up_closed &= ~(after[p] | 1 << p)
    return found


def _highest_generators(down_closed: int, before: list[int]) -> list[int]:
    """The maximal elements of a set closed downwards under reachability (bits = positions)."""
    found = []
    while down_closed > 0:
        p = down_closed.bit_length() - 1
        found.append(p)
        down_closed &= ~(before[p] | 1 << p)
    return found


def _pairs(pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    array = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return array[:, 0].copy(), array[:, 1].copy()


# Buffers with more extreme uses than this are not tracked in rounds (one pass over the edges
# each) but placed directly from the meet of their uses' reach: linear in their uses.
_ROUNDS = 4


def _propagate(order, inbound, extremes: list[list[int]], reach: list[int],
               cancel: CancelToken, bit_of: list[int] | None = None) -> list[int]:
    """Per node v, the buffers whose every extreme use strictly precedes v along `inbound` edges
    (buffer b is bit `bit_of[b]`, default b); `reach[p]`: the positions p strictly precedes.

    A buffer with one extreme use enters the sets just past that use and flows on; one with k
    extreme uses (k up to `_ROUNDS`) is tracked in k rounds (round j follows its j-th extreme
    use) and kept only where every round has it. Each round costs one bitset OR per edge. A
    buffer with more is added where the reach of all its extreme uses meets.
    """
    n = len(inbound)
    bit_of = range(len(extremes)) if bit_of is None else bit_of
    many = [b for b, ext in enumerate(extremes) if len(ext) > _ROUNDS]
    rounds = max((len(e) for e in extremes if len(e) <= _ROUNDS), default=1)
    result: list[int] | None = None
    for j in range(rounds):
        entering: list[list[int]] = [[] for _ in range(n)]
        tracked = []
        for b, ext in enumerate(extremes):
            if j < len(ext) <= _ROUNDS:
                entering[ext[j]].append(bit_of[b])
                tracked.append(bit_of[b])
        entering_bits = [0] * n
        for v, members_ in enumerate(entering):
            if not v & 1023:
                cancel.check()
            if members_:
                entering_bits[v] = _bits(members_)
        reached = [0] * n
        for count, v in enumerate(order):
            if not count & 1023:
                cancel.report("conflict sets", (j + count / n) / rounds)
            bits = 0
            for p in inbound[v]:
                bits |= reached[p] | entering_bits[p]
            reached[v] = bits
        if result is None:
            result = reached
        else:
            untracked = ~_bits(tracked)
            cancel.check()
            result = [r & (bits | untracked) for r, bits in zip(result, reached)]
    for b in many:
        cancel.check()
        bit = 1 << bit_of[b]
        for v in members(_meet(reach, extremes[b])):
            result[v] |= bit
    return result


def _bits(indices: list[int]) -> int:
    """The bitset of `indices`: shifts for a few, else one pass over its width (not one
    shift-and-or of a growing integer per member)."""
    if len(indices) <= 32:
        bits = 0
        for i in indices:
            bits |= 1 << i
        return bits
    flags = np.zeros(max(indices) + 1, dtype=bool)
    flags[indices] = True
    return int.from_bytes(np.packbits(flags, bitorder="little").tobytes(), "little")
