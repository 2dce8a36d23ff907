"""Strict reachability of a DAG as bitsets: a node never reaches itself."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import PlanError


def topological_order(names: list[str], successors) -> list[int]:
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


@dataclass(frozen=True)
class Reachability:
    """`after[i]`: the nodes node i strictly reaches; `before[i]`: the nodes that strictly reach i."""

    topo: tuple[int, ...]
    after: tuple[int, ...]
    before: tuple[int, ...]

    @classmethod
    def of(cls, graph) -> "Reachability":
        """The closure of `graph`'s edges, by dynamic programming over a topological order."""
        succ = graph.successors
        topo = topological_order([n.name for n in graph.nodes], succ)
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
