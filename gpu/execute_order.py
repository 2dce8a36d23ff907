"""Which legal topological order the runner launches nodes in."""

from __future__ import annotations

import heapq

from slabscope.planner import Graph, PlanError


def execute_order(graph: Graph, names=None) -> tuple[int, ...]:
    """Node indices in a legal topological order.

    Without `names`: the graph's `schedule` when it has one, else its topological order. With
    `names`: the listed nodes run in the listed order, the unlisted ones as early as their
    predecessors allow (ties by file order); a listing that breaks an edge is a `PlanError`
    naming the edge.
    """
    if names is None:
        if graph.schedule is not None:
            names = graph.schedule
        else:
            return tuple(graph.reachability.topo)
    names = list(names)
    rank = {}
    for position, name in enumerate(names):
        if name not in graph.node_index:
            raise PlanError(f"execute order names unknown node {name!r}")
        if name in rank:
            raise PlanError(f"execute order lists node {name!r} twice")
        rank[name] = position
    nodes = graph.nodes
    reach = graph.reachability
    for earlier in names:
        for later in names[rank[earlier] + 1:]:
            if reach.reaches(graph.node_index[later], graph.node_index[earlier]):
                raise PlanError(f"execute order is not legal: {later!r} must run before "
                                f"{earlier!r}")
    # Kahn's algorithm; a listed node waits until every listed node before it has run.
    indegree = [0] * len(nodes)
    for succ in graph.successors:
        for s in succ:
            indegree[s] += 1
    unlisted = len(names)
    key = [rank.get(n.name, unlisted) for n in nodes]
    ready = [(key[i], i) for i in range(len(nodes)) if indegree[i] == 0]
    heapq.heapify(ready)
    next_listed = 0
    held: list[tuple[int, int]] = []
    order = []
    while ready or held:
        if not ready:
            raise PlanError("execute order is not legal: listed nodes wait on each other")
        k, i = heapq.heappop(ready)
        if k < unlisted and k != next_listed:
            held.append((k, i))
            continue
        order.append(i)
        if k < unlisted:
            next_listed += 1
        for s in graph.successors[i]:
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(ready, (key[s], s))
        for item in held:
            heapq.heappush(ready, item)
        held.clear()
    return tuple(order)
