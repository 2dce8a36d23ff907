"""The DAG as the window draws it when folded: groups of nodes drawn as one node each, except
the groups the user opened, whose own nodes are drawn. The groups are those of `dag_groups` (by
module, namespace or chain) when they are few, else runs of them in topological order, so that a
10,000-node graph folds into a few dozen boxes. No widgets here (it runs on worker threads).

`Folding` maps both ways between the drawn graph and the session's: which real nodes a drawn
node stands for, and which drawn node shows a real one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from types import MappingProxyType

from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.dag.dag_groups import NAME_SEPARATORS, NodeGroups, node_groups
from slabscope.planner.model.graph import Graph, Node
from slabscope.planner.model.reachability import topological_order
from slabscope.planner.support.errors import PlanError


@dataclass(frozen=True)
class Folding:
    """`graph` drawn with the groups not in `opened` folded: `members[i]` are the real node
    indices drawn node `i` stands for, `drawn_of[v]` the drawn node showing real node `v`, and
    `group_of_drawn[i]` the group drawn node `i` belongs to (or is); `written`, per real node,
    the bytes it writes (empty without buffers), which a group's box adds up."""

    source: Graph
    groups: NodeGroups
    opened: frozenset[int]
    graph: Graph
    members: tuple[tuple[int, ...], ...]
    drawn_of: tuple[int, ...]
    group_of_drawn: tuple[int, ...]
    written: tuple[int, ...] = ()

    def is_group(self, drawn: int) -> bool:
        """Whether drawn node `drawn` is a folded group (not one real node)."""
        return bool(self.graph.nodes[drawn].attrs.get("folded"))


FOLD_GROUPS = 40  # at most this many groups are drawn when everything is folded
FOLD_ABOVE = 2000  # a DAG of more nodes opens folded, in the window and in pictures alike


def fold_groups(graph: Graph) -> NodeGroups:
    """The groups the window folds `graph` into: its modules or namespaces (else chains) when
    they are few and depend on each other one way only; otherwise runs of consecutive nodes in topological
    order, cut where those groups change, named by their first and last group."""
    def acyclic(groups: NodeGroups) -> bool:
        return _acyclic(_quotient(graph, groups.group_of), len(groups.labels))

    # The deepest modules or namespaces that depend on each other one way only.
    groups = node_groups(graph, accept=acyclic)
    if len(groups.labels) <= FOLD_GROUPS and acyclic(groups):
        return groups
    topo = graph.topo
    size = -(-len(topo) // FOLD_GROUPS)
    runs: list[list[int]] = [[]]
    for v in topo:
        run = runs[-1]
        # A run ends where the next node starts another group, or at twice its share.
        if len(run) >= size and (groups.group_of[v] != groups.group_of[run[-1]]
                                 or len(run) >= 2 * size):
            runs.append([])
        runs[-1].append(v)
    group_of = [0] * len(graph.nodes)
    labels = []
    for g, run in enumerate(runs):
        for v in run:
            group_of[v] = g
        first, last = (groups.labels[groups.group_of[v]] if groups.how in ("namespace", "module")
                       else graph.nodes[v].name for v in (run[0], run[-1]))
        labels.append(span_label(first, last))
    return NodeGroups(tuple(group_of), tuple(labels), "run")


def span_label(first: str, last: str) -> str:
    """A run's label from its first and last group: each name cut after the first part where
    they differ ("l11.ln1", "l21.ln2" -> "l11 … l21"), so a picture's small box still reads."""
    if first == last:
        return first
    a, b = NAME_SEPARATORS.split(first), NAME_SEPARATORS.split(last)
    depth = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    if depth is None:  # one name is the other's leading part
        return f"{first} … {last}"
    return f"{_leading(first, depth + 1)} … {_leading(last, depth + 1)}"


def _leading(name: str, parts: int) -> str:
    """The first `parts` parts of `name`, with the separators between them."""
    cuts = [m.start() for m in NAME_SEPARATORS.finditer(name)]
    return name if len(cuts) < parts else name[:cuts[parts - 1]]


def _quotient(graph: Graph, part) -> dict[tuple[int, int], None]:
    """The edges between the parts of `graph` (`part[v]`: node v's), each once, in order."""
    edges: dict[tuple[int, int], None] = {}
    for v, outs in enumerate(graph.successors):
        for s in outs:
            if part[v] != part[s]:
                edges[(part[v], part[s])] = None
    return edges


def _acyclic(edges, count: int) -> bool:
    """Whether `edges` among `count` parts close no cycle (namespaces may depend both ways)."""
    successors: list[list[int]] = [[] for _ in range(count)]
    for a, b in edges:
        successors[a].append(b)
    try:
        topological_order([str(i) for i in range(count)], successors)
    except PlanError:
        return False
    return True


def fold(graph: Graph, opened=frozenset(), groups: NodeGroups | None = None,
         written=()) -> Folding:
    """`graph` with every group of `groups` (default: `fold_groups`) folded but those in
    `opened`, and one-node groups; a group's second line says its node count and the bytes its
    nodes write (`written`, per node; the ops it mostly runs when not given)."""
    groups = groups if groups is not None else fold_groups(graph)
    opened = frozenset(opened)
    sizes = Counter(groups.group_of)
    ops: list[Counter] = [Counter() for _ in groups.labels]
    group_bytes = [0] * len(groups.labels)
    for v, (node, g) in enumerate(zip(graph.nodes, groups.group_of)):
        ops[g][node.op or "?"] += 1
        if written:
            group_bytes[g] += written[v]
    taken = Counter(node.name for node in graph.nodes)  # a group's name never takes a node's
    nodes: list[Node] = []
    members: list[list[int]] = []
    group_of_drawn: list[int] = []
    drawn_of = [0] * len(graph.nodes)
    drawn_group: dict[int, int] = {}
    for v, (node, g) in enumerate(zip(graph.nodes, groups.group_of)):
        if g in opened or sizes[g] == 1:
            drawn_of[v] = len(nodes)
            nodes.append(node)
            members.append([v])
            group_of_drawn.append(g)
            continue
        if g not in drawn_group:
            name = f"{groups.labels[g]} ({sizes[g]})"
            taken[name] += 1
            if taken[name] > 1:
                name = f"{name} #{taken[name]}"
            drawn_group[g] = len(nodes)
            # Drawn only: the second line says how big the group is.
            what = format_bytes(group_bytes[g]) if written else \
                f"mostly {ops[g].most_common(1)[0][0]}"
            op = f"{sizes[g]:,} nodes · {what}"
            nodes.append(Node(name, op=op,
                              attrs=MappingProxyType({"nodes": sizes[g], "folded": True})))
            members.append([])
            group_of_drawn.append(g)
        drawn_of[v] = drawn_group[g]
        members[drawn_group[g]].append(v)
    edges = _quotient(graph, drawn_of)
    drawn = Graph(nodes=tuple(nodes), buffers=(), name=f"{graph.name} (folded)",
                  edges=tuple((nodes[a].name, nodes[b].name) for a, b in edges))
    return Folding(graph, groups, opened, drawn, tuple(map(tuple, members)), tuple(drawn_of),
                   tuple(group_of_drawn), tuple(written))


def toggled(folding: Folding, drawn: int) -> Folding:
    """`folding` with the group of drawn node `drawn` opened (a folded group) or folded again
    (a node of an opened group)."""
    group = folding.group_of_drawn[drawn]
    opened = folding.opened - {group} if group in folding.opened else folding.opened | {group}
    return fold(folding.source, opened, folding.groups, folding.written)
