"""A large DAG drawn as its structure: nodes folded into groups, by namespace where the names
have one ("block1/conv2", "l0.ffn1"), else into chains (runs of nodes each with one way in and
one way out), as model explorers collapse namespaces. No Qt here."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from types import MappingProxyType

from slabscope.planner.model.graph import Graph, Node

GROUP_LIMIT = 150          # a DAG of more nodes than this is drawn folded in pictures
NAMESPACE_LIMIT = 40       # namespaces fold at the deepest level with at most this many groups
NAME_SEPARATORS = re.compile(r"[/.:]")  # between the parts of a namespaced name


@dataclass(frozen=True)
class NodeGroups:
    """Which group each node is in, and each group's label, in order of first node."""

    group_of: tuple[int, ...]
    labels: tuple[str, ...]
    how: str  # "namespace" or "chain" (the window's folding adds "run": dag_folding)


def _namespace_groups(graph: Graph, limit: int) -> NodeGroups | None:
    """Groups by the leading parts of the names, the deepest that keeps at most `limit`."""
    parts = [NAME_SEPARATORS.split(node.name) for node in graph.nodes]
    if sum(len(p) > 1 for p in parts) < len(parts) / 2:
        return None  # most names have no namespace
    best = None
    for depth in range(1, max(len(p) for p in parts)):
        keys = ["/".join(p[:depth]) for p in parts]
        if len(set(keys)) > limit:
            break
        best = keys
    if best is None or len(set(best)) < 2:
        return None
    index: dict[str, int] = {}
    group_of = tuple(index.setdefault(key, len(index)) for key in best)
    return NodeGroups(group_of, tuple(index), "namespace")


def _chain_groups(graph: Graph) -> NodeGroups:
    """Maximal chains: a node joins its predecessor's group when it is that node's only
    successor and that node its only predecessor."""
    successors = graph.successors
    predecessors: list[list[int]] = [[] for _ in graph.nodes]
    for v, outs in enumerate(successors):
        for s in outs:
            predecessors[s].append(v)
    group_of = [-1] * len(graph.nodes)
    count = 0
    for v in graph.reachability.topo:
        preds = predecessors[v]
        if len(preds) == 1 and len(successors[preds[0]]) == 1:
            group_of[v] = group_of[preds[0]]
        else:
            group_of[v] = count
            count += 1
    members: list[list[int]] = [[] for _ in range(count)]
    for v in graph.reachability.topo:
        members[group_of[v]].append(v)
    labels = []
    for nodes in members:
        ops = [graph.nodes[v].op or graph.nodes[v].name for v in nodes]
        runs = _runs(ops)
        # A long chain reads by its ends: "BatchNormalization→…→Conv".
        labels.append("→".join(runs) if len(runs) <= 3 else f"{runs[0]}→…→{runs[-1]}")
    return NodeGroups(tuple(group_of), tuple(labels), "chain")


def _runs(ops: list[str]) -> list[str]:
    """Consecutive equal ops written once with a count: Conv, Relu, Relu -> Conv, Relu×2."""
    out: list[list] = []
    for op in ops:
        if out and out[-1][0] == op:
            out[-1][1] += 1
        else:
            out.append([op, 1])
    return [op if n == 1 else f"{op}×{n}" for op, n in out]


def node_groups(graph: Graph, limit: int = GROUP_LIMIT) -> NodeGroups:
    """`graph`'s nodes in groups: by namespace when the names allow it, else by chain."""
    return _namespace_groups(graph, min(limit, NAMESPACE_LIMIT)) or _chain_groups(graph)


def folded_graph(graph: Graph, limit: int = GROUP_LIMIT,
                 groups: NodeGroups | None = None) -> Graph:
    """A graph of one node per group of `graph` (`groups`, default `node_groups`), named by its
    label and size, its op the most common op in it, and the edges between groups; no buffers:
    it is only drawn."""
    groups = groups if groups is not None else node_groups(graph, limit)
    sizes = Counter(groups.group_of)
    ops: list[Counter] = [Counter() for _ in groups.labels]
    for node, g in zip(graph.nodes, groups.group_of):
        ops[g][node.op or "?"] += 1
    names, seen = [], Counter()
    for g, label in enumerate(groups.labels):
        name = label if sizes[g] == 1 else f"{label} ({sizes[g]})"
        seen[name] += 1
        names.append(name if seen[name] == 1 else f"{name} #{seen[name]}")
    nodes = tuple(Node(name, op=ops[g].most_common(1)[0][0],
                       attrs=MappingProxyType({"nodes": sizes[g]}))
                  for g, name in enumerate(names))
    edges = []
    for src, dst in graph.edges:
        a = groups.group_of[graph.node_index[src]]
        b = groups.group_of[graph.node_index[dst]]
        if a != b:
            edges.append((names[a], names[b]))
    return Graph(nodes=nodes, edges=tuple(dict.fromkeys(edges)), buffers=(),
                 name=f"{graph.name} ({len(graph.nodes):,} nodes in {len(nodes):,} "
                      f"{groups.how} groups)")
