"""The least slab any plan can have: the heaviest set of buffers that may all be live at once.

Two exact algorithms, chosen by the conflict model (`ConflictModel.lower_bound`; the public
function is `planner.lower_bound`, in `api`). Interval lifetimes: the peak of live bytes.
A DAG: `precedes` is a strict partial order, so the conflict graph is its incomparability graph
and the heaviest clique is the heaviest antichain (docs/semantics.md §5), found by a max flow
on a network with O(edges) arcs (`heaviest_antichain`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..support.cancel import NEVER, CancelToken

# scipy's maximum flow works in 32-bit capacities; totals past this go to the exact fallback.
_INT32_FLOW = 2**31 - 1
SOURCE, SINK = 0, 1  # the flow network's first two vertices


@dataclass(frozen=True)
class LowerBound:
    """`bytes` no plan can go below, and the `witness` buffers that are all live together."""

    bytes: int
    witness: tuple[str, ...]
    conflicts: str


def bound_of(graph, chosen, conflicts: str) -> LowerBound:
    """The `LowerBound` whose witness is the buffer indices `chosen` (sorted by index)."""
    chosen = sorted(int(i) for i in chosen)
    return LowerBound(sum(graph.reserved[i] for i in chosen),
                      tuple(graph.buffer_names[i] for i in chosen), conflicts)


def peak_live(first: np.ndarray, last: np.ndarray, reserved) -> list[int]:
    """The buffers live at the step where live reserved bytes peak (the earliest such step);
    buffer i lives over [first[i], last[i]]."""
    if not len(first):
        return []
    steps = int(last.max()) + 2
    # 64-bit sums are exact unless sizes add up past 2**63; then Python integers.
    dtype = np.int64 if sum(reserved) < 2**63 else object
    weight = np.array(reserved, dtype=dtype)
    delta = np.zeros(steps, dtype=dtype)
    np.add.at(delta, first, weight)
    np.add.at(delta, last + 1, -weight)
    peak = int(np.argmax(np.cumsum(delta)))
    return np.flatnonzero((first <= peak) & (last >= peak)).tolist()


@dataclass(frozen=True)
class ChainNetwork:
    """The order of n weighted elements as paths through relay nodes (all arcs unbounded).

    Element a precedes element b exactly when some path leads from a's exit to b's entry:
    `exits` (element, relay) enter the relays, `relay_arcs` (relay, relay) lead on, `entries`
    (relay, element) leave them, and `direct` (element, element) pairs skip them. Paths through
    other elements are allowed too (they only ever join comparable pairs, as the order is
    transitive). Each field is a pair of equal-length int64 arrays.
    """

    weights: list[int]
    relays: int
    relay_arcs: tuple[np.ndarray, np.ndarray]
    exits: tuple[np.ndarray, np.ndarray]
    entries: tuple[np.ndarray, np.ndarray]
    direct: tuple[np.ndarray, np.ndarray]


def heaviest_antichain(network: ChainNetwork, cancel: CancelToken = NEVER) -> list[int]:
    """A maximum-weight antichain of the order `network` describes (weighted Dilworth).

    Flow network: source -> out_a (weight a), in_a -> sink (weight a), in_a -> out_a unbounded
    (a chain may pass through a), and out_a ~> in_b unbounded along the network's paths. The max
    flow is the weight chains can share; the heaviest antichain weighs the total minus it and is
    read off a min cut: elements whose out side the source reaches but whose in side it does not.
    Weights are divided by their gcd; scipy's compiled max flow solves totals that fit 32 bits,
    networkx larger ones (exact for any integers, slower).
    """
    n = len(network.weights)
    if n == 0:
        return []
    divisor = math.gcd(*network.weights) or 1
    units = [w // divisor for w in network.weights]
    out, into, relay = 2, 2 + n, 2 + 2 * n  # vertices after the source and the sink
    elements = np.arange(n, dtype=np.int64)
    weighted = (np.concatenate([np.full(n, SOURCE, np.int64), into + elements]),
                np.concatenate([out + elements, np.full(n, SINK, np.int64)]))
    unbounded = _unique_pairs([
        (into + elements, out + elements),
        (relay + network.relay_arcs[0], relay + network.relay_arcs[1]),
        (out + network.exits[0], relay + network.exits[1]),
        (relay + network.entries[0], into + network.entries[1]),
        (out + network.direct[0], into + network.direct[1]),
    ])
    cancel.report("lower bound", None)
    vertices = relay + network.relays
    total = sum(units)
    if total < _INT32_FLOW:
        side = _source_side_scipy(vertices, weighted, units, unbounded, total)
    else:
        side = _source_side_networkx(vertices, weighted, units, unbounded)
    cancel.check()
    return [a for a in range(n) if side[out + a] and not side[into + a]]


def _unique_pairs(pairs) -> tuple[np.ndarray, np.ndarray]:
    """The concatenated (src, dst) pairs without repeats (a repeated arc would add capacities)."""
    src = np.concatenate([np.asarray(s, np.int64) for s, _ in pairs])
    dst = np.concatenate([np.asarray(d, np.int64) for _, d in pairs])
    key = np.unique(src * (int(max(src.max(initial=0), dst.max(initial=0))) + 1) + dst,
                    return_index=True)[1]
    return src[key], dst[key]


def _source_side_scipy(vertices: int, weighted, units, unbounded, total: int) -> np.ndarray:
    """Per vertex, whether the source reaches it in the residual network of a max flow."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import breadth_first_order, maximum_flow

    src = np.concatenate([weighted[0], unbounded[0]])
    dst = np.concatenate([weighted[1], unbounded[1]])
    # An unbounded arc never carries more than everything the source can send.
    capacity = np.concatenate([np.asarray(units + units, np.int32),
                               np.full(len(unbounded[0]), total + 1, np.int32)])
    graph = csr_array((capacity, (src, dst)), shape=(vertices, vertices))
    flow = maximum_flow(graph, SOURCE, SINK, method="dinic").flow
    residual = (graph - flow).tocsr()
    residual.data = (residual.data > 0).astype(np.int8)
    residual.eliminate_zeros()
    side = np.zeros(vertices, dtype=bool)
    side[breadth_first_order(residual, 0, directed=True, return_predecessors=False)] = True
    return side


def _source_side_networkx(vertices: int, weighted, units, unbounded) -> np.ndarray:
    """The same cut as `_source_side_scipy`, by networkx on Python integers (any size)."""
    import networkx as nx

    network = nx.DiGraph()
    network.add_nodes_from(range(vertices))
    for s, d, c in zip(weighted[0].tolist(), weighted[1].tolist(), units + units):
        network.add_edge(s, d, capacity=c)
    # Arcs without a capacity are unbounded in networkx.
    network.add_edges_from(zip(unbounded[0].tolist(), unbounded[1].tolist()))
    _, (reached, _) = nx.minimum_cut(network, SOURCE, SINK)
    side = np.zeros(vertices, dtype=bool)
    side[list(reached)] = True
    return side
