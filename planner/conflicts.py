"""Conflict model A, the DAG (Luminal's `plan_slab`): buffers may share bytes only when ordered."""

from __future__ import annotations

from functools import cached_property

from .graph import Graph


class DagConflicts:
    """`precedes` and `conflicts` over a graph's strict reachability.

    `precedes(a, b)` holds when every use of `a` strictly reaches every use of `b`; two buffers
    conflict unless one precedes the other. An invented execution order never decides aliasing.
    """

    name = "dag"

    def __init__(self, graph: Graph):
        self.graph = graph
        self.reach = graph.reachability
        self.use_bits = [sum(1 << u for u in uses) for uses in graph.use_indices]

    def precedes(self, a: int, b: int) -> bool:
        """Whether every use of buffer `a` strictly reaches every use of buffer `b`."""
        after = self.reach.after
        return all(self.use_bits[b] & ~after[u] == 0 for u in self.graph.use_indices[a])

    def conflicts(self, a: int, b: int) -> bool:
        """Whether buffers `a` and `b` may be live together (so must not share bytes)."""
        return a != b and not self.precedes(a, b) and not self.precedes(b, a)

    def conflict_mask(self, b: int) -> int:
        """The set of buffers that conflict with buffer `b`, as a bitset over buffer indices."""
        earlier = -1
        for v in self._first_uses[b]:
            earlier &= self._done_before[v]
        later = -1
        for u in self._last_uses[b]:
            later &= self._started_after[u]
        return self._all & ~earlier & ~later & ~(1 << b)

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
        """A use of `a` and a use of `b` such that the first does not strictly reach the second."""
        for u in self.graph.use_indices[a]:
            for v in self.graph.use_indices[b]:
                if not self.reach.reaches(u, v):
                    return u, v
        raise ValueError("buffers are ordered")

    @cached_property
    def _all(self) -> int:
        return (1 << len(self.graph.buffers)) - 1

    @cached_property
    def _first_uses(self) -> list[list[int]]:
        """Per buffer, its uses that no other use of it reaches."""
        before = self.reach.before
        return [[u for u in uses if before[u] & bits == 0]
                for uses, bits in zip(self.graph.use_indices, self.use_bits)]

    @cached_property
    def _last_uses(self) -> list[list[int]]:
        """Per buffer, its uses that reach no other use of it."""
        after = self.reach.after
        return [[u for u in uses if after[u] & bits == 0]
                for uses, bits in zip(self.graph.use_indices, self.use_bits)]

    @cached_property
    def _done_before(self) -> list[int]:
        """Per node v, the buffers all of whose uses strictly reach v."""
        preds = _predecessors(self.graph.successors)
        return _propagate(self.reach.topo, preds, self._last_uses)

    @cached_property
    def _started_after(self) -> list[int]:
        """Per node u, the buffers all of whose uses u strictly reaches."""
        return _propagate(self.reach.topo[::-1], self.graph.successors, self._first_uses)


def _predecessors(successors) -> list[list[int]]:
    preds: list[list[int]] = [[] for _ in successors]
    for i, ss in enumerate(successors):
        for s in ss:
            preds[s].append(i)
    return preds


def _propagate(order, inbound, extremes: list[list[int]]) -> list[int]:
    """Per node v, the buffers whose every extreme use strictly precedes v along `inbound` edges.

    A buffer with one extreme use enters the sets just past that use and flows on; one with k
    extreme uses is tracked in k rounds (round j follows its j-th extreme use) and kept only
    where every round has it. Each round costs one bitset OR per edge.
    """
    n = len(inbound)
    rounds = max((len(e) for e in extremes), default=1)
    result: list[int] | None = None
    for j in range(rounds):
        entering = [0] * n
        tracked = 0
        for b, ext in enumerate(extremes):
            if len(ext) > j:
                entering[ext[j]] |= 1 << b
                tracked |= 1 << b
        reached = [0] * n
        for v in order:
            bits = 0
            for p in inbound[v]:
                bits |= reached[p] | entering[p]
            reached[v] = bits
        if result is None:
            result = reached
        else:
            untracked = ~tracked
            result = [r & (bits | untracked) for r, bits in zip(result, reached)]
    return result
