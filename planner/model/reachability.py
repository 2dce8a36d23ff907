"""Strict reachability of a DAG as bitsets: a node never reaches itself."""

from __future__ import annotations

from dataclasses import dataclass

from ..support.cancel import NEVER, CancelToken
from ..support.errors import PlanError


def topological_order(names: list[str], successors, cancel: CancelToken = NEVER) -> list[int]:
    """Node indices in a topological order (Kahn, ties by index); a cycle is a `PlanError`."""
    n = len(successors)
    indegree = [0] * n
    for succ in successors:
        for s in succ:
            indegree[s] += 1
    ready = [i for i in range(n) if indegree[i] == 0]
    ready.reverse()
    order = []
    while ready:
        i = ready.pop()
        if not len(order) & 8191:
            cancel.report("topological order", len(order) / n)
        order.append(i)
        for s in reversed(successors[i]):
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(s)
    if len(order) < n:
        cycle = _find_cycle([i for i in range(n) if indegree[i] > 0], successors)
        raise PlanError("graph has a cycle: " + " -> ".join(names[i] for i in cycle))
    return order


def _find_cycle(stuck: list[int], successors) -> list[int]:
    """One cycle among the nodes Kahn's algorithm could not order, first node repeated at the end."""
    inside = set(stuck)
    preds: dict[int, int] = {}
    for i in stuck:
        for s in successors[i]:
            if s in inside:
                preds.setdefault(s, i)
    # Every stuck node has a stuck predecessor, so walking backwards must revisit a node.
    position: dict[int, int] = {}
    path = []
    node = stuck[0]
    while node not in position:
        position[node] = len(path)
        path.append(node)
        node = preds[node]
    cycle = path[position[node]:][::-1]
    first = cycle.index(min(cycle))  # start at the earliest-declared node, for a stable message
    cycle = cycle[first:] + cycle[:first]
    return cycle + [cycle[0]]


def closure(successors, topo, cancel: CancelToken = NEVER) -> tuple[list[int], list[int]]:
    """Strict reachability as bitsets over topological positions: (after, before).

    With `position[v]` the place of node v in `topo`, bit q of `after[p]` says the node at
    position p strictly reaches the node at position q; `before[q]` is the converse. Positions
    make the lowest bit of a set its earliest node, which the lower bound uses. O(edges) bitset
    ORs of nodes/64 words each.
    """
    n = len(topo)
    position = [0] * n
    for p, v in enumerate(topo):
        position[v] = p
    succ = [[position[s] for s in successors[v]] for v in topo]
    after = [0] * n
    for p in range(n - 1, -1, -1):
        if not p & 1023:
            cancel.report("closure", 0.5 * (n - p) / n)
        bits = 0
        for q in succ[p]:
            bits |= after[q] | (1 << q)
        after[p] = bits
    preds: list[list[int]] = [[] for _ in range(n)]
    for p, ss in enumerate(succ):
        for q in ss:
            preds[q].append(p)
    before = [0] * n
    for q in range(n):
        if not q & 1023:
            cancel.report("closure", 0.5 + 0.5 * q / n)
        bits = 0
        for p in preds[q]:
            bits |= before[p] | (1 << p)
        before[q] = bits
    return after, before


@dataclass(frozen=True)
class Reachability:
    """`after[i]`: the nodes node i strictly reaches; `before[i]`: the nodes that strictly reach i
    (bitsets over node indices, for views that colour ancestors and descendants)."""

    topo: tuple[int, ...]
    after: tuple[int, ...]
    before: tuple[int, ...]

    @classmethod
    def of(cls, graph) -> "Reachability":
        """The closure of `graph`'s edges, by dynamic programming over a topological order."""
        succ = graph.successors
        topo = graph.topo
        after = [0] * len(succ)
        for i in reversed(topo):
            bits = 0
            for s in succ[i]:
                bits |= after[s] | (1 << s)
            after[i] = bits
        preds: list[list[int]] = [[] for _ in succ]
        for i, ss in enumerate(succ):
            for s in ss:
                preds[s].append(i)
        before = [0] * len(succ)
        for i in topo:
            bits = 0
            for p in preds[i]:
                bits |= before[p] | (1 << p)
            before[i] = bits
        return cls(tuple(topo), tuple(after), tuple(before))

    def reaches(self, a: int, b: int) -> bool:
        """Whether node `a` strictly reaches node `b`."""
        return bool(self.after[a] >> b & 1)
