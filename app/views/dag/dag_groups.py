"""A large DAG drawn as its structure: nodes folded into groups, by module where the nodes carry
one (`nn_module_stack` of a `.pt2`, as node attr "module"), else by namespace where the names
have one (ONNX name scopes "/block1/conv2", "l0.ffn1"), else into chains (runs of nodes each
with one way in and one way out), as model explorers collapse namespaces. No Qt here."""

from __future__ import annotations

import re
from dataclasses import dataclass

from slabscope.planner.model.graph import Graph

GROUP_LIMIT = 150          # at most this many groups of any kind
NAMESPACE_LIMIT = 40       # namespaces fold at the deepest level with at most this many groups
NAME_SEPARATORS = re.compile(r"[/.:]")  # between the parts of a namespaced name


@dataclass(frozen=True)
class NodeGroups:
    """Which group each node is in, and each group's label, in order of first node."""

    group_of: tuple[int, ...]
    labels: tuple[str, ...]
    how: str  # "module", "namespace" or "chain" (the window's folding adds "run": dag_folding)


def _module_groups(graph: Graph, limit: int, accept) -> NodeGroups | None:
    """Groups by the leading parts of each node's module path (see `_prefix_groups`); None
    unless most nodes carry a module. A node without one (an input, a parameter, the output)
    joins the module of the first node it feeds, else of the first that feeds it."""
    # "layers.0.attn (Attention)": the path, without the class name.
    paths = [str(node.attrs.get("module") or "").split(" (", 1)[0] for node in graph.nodes]
    if sum(bool(p) for p in paths) < len(paths) / 2:
        return None
    predecessors: list[list[int]] = [[] for _ in graph.nodes]
    for v, outs in enumerate(graph.successors):
        for s in outs:
            predecessors[s].append(v)
    for v, path in enumerate(paths):
        if not path:
            paths[v] = next((paths[u] for u in (*graph.successors[v], *predecessors[v])
                             if paths[u]), "(root)")
    return _prefix_groups(graph, [p.split(".") for p in paths], limit, "module", ".", True, accept)


def _namespace_groups(graph: Graph, limit: int, accept) -> NodeGroups | None:
    """Groups by the leading parts of the names (see `_prefix_groups`)."""
    parts = [NAME_SEPARATORS.split(node.name) for node in graph.nodes]
    if sum(len(p) > 1 for p in parts) < len(parts) / 2:
        return None  # most names have no namespace
    return _prefix_groups(graph, parts, limit, "namespace", "/", False, accept)


def _prefix_groups(graph: Graph, parts: list[list[str]], limit: int, how: str, joiner: str,
                   whole: bool, accept) -> NodeGroups | None:
    """Groups by the first parts of each node's `parts` (joined by `joiner`): the deepest level
    with at most `limit` groups that `accept` (None: any) takes, the whole of the longest only
    if `whole` (a name's last part is the node's own); a node with fewer parts keeps all of
    them. A level `accept` refuses as it is may still serve cut into runs along a topological
    order (a parent module's residual add between two of its children splits it in two). None
    when no level of two groups or more qualifies."""
    levels = []
    for depth in range(1, max(len(p) for p in parts) + (1 if whole else 0)):
        keys = [joiner.join(p[:depth]) for p in parts]
        if len(set(keys)) > limit:
            break
        levels.append(keys)
    for keys in reversed(levels):
        for groups in (_keyed(keys, how), _keyed_runs(graph, keys, how)):
            if 1 < len(groups.labels) <= limit and (accept is None or accept(groups)):
                return groups
    return None


def _keyed(keys: list[str], how: str) -> NodeGroups:
    """One group per distinct key, labelled by it."""
    index: dict[str, int] = {}
    group_of = tuple(index.setdefault(key, len(index)) for key in keys)
    return NodeGroups(group_of, tuple(index), how)


def _keyed_runs(graph: Graph, keys: list[str], how: str) -> NodeGroups:
    """One group per run of equal keys along a topological order: each group is an interval
    of that order, so the groups depend on each other one way only."""
    group_of = [0] * len(keys)
    labels: list[str] = []
    previous = None
    for v in graph.topo:
        if keys[v] != previous:
            labels.append(keys[v])
            previous = keys[v]
        group_of[v] = len(labels) - 1
    return NodeGroups(tuple(group_of), tuple(labels), how)


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
    for v in graph.topo:
        preds = predecessors[v]
        if len(preds) == 1 and len(successors[preds[0]]) == 1:
            group_of[v] = group_of[preds[0]]
        else:
            group_of[v] = count
            count += 1
    members: list[list[int]] = [[] for _ in range(count)]
    for v in graph.topo:
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


def node_groups(graph: Graph, limit: int = GROUP_LIMIT, accept=None) -> NodeGroups:
    """`graph`'s nodes in groups: by module when nodes carry one, else by namespace when the
    names allow it, at the deepest level `accept(groups)` takes (None: any), else by chain."""
    limit = min(limit, NAMESPACE_LIMIT)
    return (_module_groups(graph, limit, accept) or _namespace_groups(graph, limit, accept)
            or _chain_groups(graph))
