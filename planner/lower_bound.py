"""The least slab any plan can have: the heaviest set of buffers that may all be live at once.

dag model: `precedes` is a strict partial order, so the conflict graph is an incomparability
graph and its maximum-weight clique is the maximum-weight antichain (SPEC.md §5), found here by a
maximum flow (weighted Dilworth). serial model: the peak of live bytes over the schedule.
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import numpy as np

from .bitset import members
from .graph import Graph


@dataclass(frozen=True)
class LowerBound:
    """`bytes` no plan can go below, and the `witness` buffers that are all live together."""

    bytes: int
    witness: tuple[str, ...]
    conflicts: str


def lower_bound(graph: Graph, conflicts: str = "dag") -> LowerBound:
    """The lower bound on the slab of `graph` under conflict model `conflicts` ("dag", "serial").

    Reserved (aligned) bytes count. The witness is a set of pairwise conflicting buffers whose
    reserved bytes sum to the bound.
    """
    from .planning import conflict_model

    model = conflict_model(graph, conflicts)
    if model.name == "serial":
        chosen = _peak_live(model.first, model.last, graph.reserved)
    else:
        chosen = _heaviest_antichain(graph, model)
    chosen = sorted(chosen)
    return LowerBound(sum(graph.reserved[i] for i in chosen),
                      tuple(graph.buffers[i].name for i in chosen), model.name)


def _peak_live(first: np.ndarray, last: np.ndarray, reserved) -> list[int]:
    """The buffers live at the step where the live reserved bytes peak (earliest such step)."""
    if not len(first):
        return []
    steps = int(last.max()) + 2
    weight = np.array(reserved, dtype=object)  # sizes may exceed int64 sums
    delta = np.zeros(steps, dtype=object)
    np.add.at(delta, first, weight)
    np.add.at(delta, last + 1, -weight)
    live = np.cumsum(delta)
    peak = int(np.argmax(live))
    return np.flatnonzero((first <= peak) & (last >= peak)).tolist()


def _heaviest_antichain(graph: Graph, model) -> list[int]:
    """A maximum-weight antichain of `model.precedes` by max flow on its cover relation.

    Network: source -> out_v (weight v), out_v -> in_u for each cover v < u (unbounded),
    in_u -> out_u (unbounded, so chains pass through u), in_u -> sink (weight u). The max flow
    is the weight chains can share; the heaviest antichain weighs the total minus it and is read
    off the min cut: buffers whose out side the source reaches but whose in side it does not.
    """
    n = len(graph.buffers)
    later = _successor_sets(graph, model)
    # Relabel so that a buffer's successors all get higher ranks: more successors, lower rank.
    rank = sorted(range(n), key=lambda i: -later[i].bit_count())
    position = {b: r for r, b in enumerate(rank)}
    succ_by_rank = [_relabel(later[b], position) for b in rank]
    network = nx.DiGraph()
    weight = graph.reserved
    for r, b in enumerate(rank):
        network.add_edge("source", ("out", r), capacity=weight[b])
        network.add_edge(("in", r), "sink", capacity=weight[b])
        network.add_edge(("in", r), ("out", r))
        covered = 0
        for s in members(succ_by_rank[r]):
            if not covered >> s & 1:  # not reachable through an earlier cover: s covers r
                network.add_edge(("out", r), ("in", s))
                covered |= succ_by_rank[s]
    if n == 0:
        return []
    _, (source_side, _) = nx.minimum_cut(network, "source", "sink")
    return [b for r, b in enumerate(rank)
            if ("out", r) in source_side and ("in", r) not in source_side]


def _successor_sets(graph: Graph, model) -> list[int]:
    """Per buffer i, the bitset of buffers that i precedes.

    Of two comparable buffers, i precedes j exactly when one use of i reaches one use of j (the
    other way round, j's uses would reach i's and the DAG would have a cycle), so one
    representative use each decides it.
    """
    n = len(graph.buffers)
    nodes = len(graph.nodes)
    everything = (1 << n) - 1
    after = graph.reachability.after
    representative = np.fromiter((uses[0] for uses in graph.use_indices), dtype=np.int64, count=n)
    sets = []
    for i in range(n):
        comparable = everything & ~model.conflict_mask(i) & ~(1 << i)
        reached = _bits_to_bools(after[representative[i]], nodes)[representative]
        sets.append(comparable & _bools_to_bits(reached))
    return sets


def _bits_to_bools(bits: int, size: int) -> np.ndarray:
    raw = np.frombuffer(bits.to_bytes((size + 7) // 8, "little"), dtype=np.uint8)
    return np.unpackbits(raw, bitorder="little")[:size].astype(bool)


def _bools_to_bits(flags: np.ndarray) -> int:
    return int.from_bytes(np.packbits(flags, bitorder="little").tobytes(), "little")


def _relabel(bits: int, position: dict[int, int]) -> int:
    out = 0
    for j in members(bits):
        out |= 1 << position[j]
    return out
