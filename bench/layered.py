"""A generated layered DAG with several branches and several uses per buffer, for benchmarks."""

from __future__ import annotations

import random

from slabscope import planner


def layered_graph_data(nodes: int, buffers: int, branches: int = 8, seed: int = 0) -> dict:
    """Graph-file data: `nodes` nodes in layers of `branches`, each node feeding 1-2 nodes of the next layer
    (sometimes a neighbouring branch, so branches fork and merge); `buffers` buffers, each
    written by one node and read by 1-3 nodes within the next few layers."""
    rng = random.Random(seed)
    layers = -(-nodes // branches)
    names = [f"n{i}" for i in range(nodes)]
    edges = []
    for i in range(nodes - branches):
        layer, lane = divmod(i, branches)
        targets = {lane, (lane + rng.choice((-1, 1))) % branches} if rng.random() < 0.3 else {lane}
        for t in targets:
            j = (layer + 1) * branches + t
            if j < nodes:
                edges.append([names[i], names[j]])
    bufs = []
    for b in range(buffers):
        writer = rng.randrange(nodes - branches) if nodes > branches else 0
        layer, lane = divmod(writer, branches)
        uses = {names[writer]}
        for _ in range(rng.randint(1, 3)):
            reader = (min(layer + rng.randint(1, 3), layers - 1)) * branches + lane
            if reader < nodes:
                uses.add(names[reader])
        bufs.append({"name": f"b{b}", "bytes": rng.choice((256, 1024, 4096, 65536, 1 << 20)),
                     "uses": sorted(uses)})
    return {"nodes": names, "edges": edges, "buffers": bufs}


def layered_graph(nodes: int, buffers: int, branches: int = 8, seed: int = 0) -> planner.Graph:
    """The validated `Graph` of `layered_graph_data`."""
    return planner.graph_from_dict(layered_graph_data(nodes, buffers, branches, seed),
                                   name=f"layered_{nodes}x{buffers}")
