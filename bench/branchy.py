"""Branchy random DAGs with long skip connections, for the scheduling benchmark and tests.

Each node writes one buffer, read by the nodes it feeds: a few branches run side by side, nodes
read the latest node of their own branch and sometimes another branch's, and now and then a node
reads one from far back (a long skip, as in U-Nets and DenseNets), which keeps that buffer live.
"""

from __future__ import annotations

import random

from slabscope import planner

SIZES = (4 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20)


def branchy_graph_data(nodes: int, branches: int = 4, skip: float = 0.1, seed: int = 0) -> dict:
    """Graph-file data: `nodes` nodes over `branches` branches, a long skip with chance `skip`."""
    rng = random.Random(seed)
    names = [f"n{i}" for i in range(nodes)]
    latest: list[int | None] = [None] * branches
    readers: list[set[int]] = [set() for _ in range(nodes)]
    edges = []
    for i in range(nodes):
        lane = rng.randrange(branches)
        sources = {latest[lane]} if latest[lane] is not None else set()
        if rng.random() < 0.3:
            other = latest[rng.randrange(branches)]
            if other is not None:
                sources.add(other)
        if i > 8 and rng.random() < skip:
            sources.add(rng.randrange(0, i - 4))
        for s in sorted(sources):
            edges.append([names[s], names[i]])
            readers[s].add(i)
        latest[lane] = i
    bufs = [{"name": f"t{i}", "bytes": rng.choice(SIZES),
             "uses": [names[i]] + [names[r] for r in sorted(readers[i])]} for i in range(nodes)]
    return {"nodes": names, "edges": edges, "buffers": bufs}


def branchy_graph(nodes: int, branches: int = 4, skip: float = 0.1, seed: int = 0
                  ) -> planner.Graph:
    """The validated `Graph` of `branchy_graph_data`."""
    return planner.graph_from_dict(branchy_graph_data(nodes, branches, skip, seed),
                                   name=f"branchy_{nodes}_s{seed}")
