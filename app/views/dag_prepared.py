"""The DAG view's box widths and layered layout of a graph, computed once per graph by the
loading worker (`Session.prepare_graphs`): a 10,000-node graph takes seconds to lay out, which
must not freeze the window."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QFont, QFontMetricsF

from slabscope.app.views.dag_layout import DagLayout, layered_layout
from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.live_bytes_view import graph_is_time_chain
from slabscope.planner.graph import Graph
from slabscope.planner.reachability import topological_order

LABEL_POINTS = 9.0
OP_POINTS = 7.5
NODE_PADDING = 12.0
MIN_NODE_WIDTH = 60.0
MAX_LABEL_CHARS = 28          # longer names are elided in the box (the tooltip has them whole)
MAX_CHAIN_NODES = 2000        # longer chains of time steps are not drawn as a DAG


@dataclass(frozen=True)
class PreparedDag:
    """Each node's box width and the unwrapped layout of those boxes."""

    widths: tuple[float, ...]
    layout: DagLayout


def label_fonts() -> tuple[QFont, QFont]:
    """The fonts of a node's name and of its op line."""
    label = QFont()
    label.setPointSizeF(LABEL_POINTS)
    op = QFont(label)
    op.setPointSizeF(OP_POINTS)
    return label, op


def elide(text: str) -> str:
    """`text` cut to `MAX_LABEL_CHARS` with an ellipsis (tooltips show it whole)."""
    return text if len(text) <= MAX_LABEL_CHARS else text[:MAX_LABEL_CHARS - 1] + "…"


def skips_chain(graph: Graph) -> bool:
    """Whether `graph` is a chain of time steps too long to say anything drawn as a DAG."""
    return graph_is_time_chain(graph) and len(graph.nodes) > MAX_CHAIN_NODES


def _prepare(graph: Graph) -> PreparedDag | None:
    if skips_chain(graph):
        return None
    label, op = label_fonts()
    name_metrics, op_metrics = QFontMetricsF(label), QFontMetricsF(op)
    widths = tuple(max(MIN_NODE_WIDTH,
                       name_metrics.horizontalAdvance(elide(n.name)) + 2 * NODE_PADDING,
                       op_metrics.horizontalAdvance(elide(n.op or "")) + 2 * NODE_PADDING)
                   for n in graph.nodes)
    topo = topological_order([n.name for n in graph.nodes], graph.successors)  # no closure needed
    return PreparedDag(widths, layered_layout(graph.successors, topo, widths))


# None for a chain that is not drawn.
prepared_dag = IdentityCache(_prepare, size=2)
