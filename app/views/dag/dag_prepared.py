"""The DAG view's box widths, layered layout and drawing of a graph, computed once per graph by
the loading worker (`Session.prepare_graphs`): a 10,000-node graph takes seconds to lay out and
a second more to turn into paths, which must not freeze the window."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from PySide6.QtGui import QFont, QFontMetricsF

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.dag.dag_drawing import DrawnDag, draw_dag
from slabscope.app.views.dag.dag_layout import DagLayout, columns_to_fit, layered_layout
from slabscope.app.views.timeline.live_bytes_view import graph_is_time_chain
from slabscope.planner.model.graph import Graph
from slabscope.planner.model.reachability import topological_order

LABEL_POINTS = 9.0
OP_POINTS = 7.5
NODE_PADDING = 12.0
MIN_NODE_WIDTH = 60.0
MAX_LABEL_CHARS = 28          # longer names are elided in the box (the tooltip has them whole)
MAX_CHAIN_NODES = 2000        # longer chains of time steps are not drawn as a DAG
DEFAULT_ASPECT = 1.4          # view shape assumed before the view has a size


@dataclass(frozen=True)
class PreparedDag:
    """Each node's box width, the unwrapped layout of those boxes, the names of the buffers
    each node uses, and the drawings made of it so far (by column count)."""

    successors: tuple
    widths: tuple[float, ...]
    layout: DagLayout
    uses: tuple[tuple[str, ...], ...]
    _drawings: dict = field(default_factory=dict, compare=False, repr=False)
    _columns: dict = field(default_factory=dict, compare=False, repr=False)  # by aspect
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def columns_for(self, aspect: float) -> int:
        """How many columns fit a view of `aspect` (width / height); kept, since the worker
        asks first for the view's shape and the view then asks again."""
        columns = self._columns.get(aspect)
        if columns is None:
            if len(self._columns) >= 8:  # a window resized again and again
                self._columns.clear()
            columns = self._columns[aspect] = columns_to_fit(self.layout, aspect)
        return columns

    def drawing(self, columns: int) -> DrawnDag:
        """The layout wrapped into `columns`, as paths and a thumbnail (made once per count)."""
        with self._lock:  # the worker may be drawing it while the window asks
            drawn = self._drawings.get(columns)
            if drawn is None:
                drawn = draw_dag(self.successors, self.widths, self.layout, columns)
                if len(self._drawings) >= 2:  # the worker's shape and the view's, at most
                    self._drawings.pop(next(iter(self._drawings)))
                self._drawings[columns] = drawn
            return drawn


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


def prepare_dag(graph: Graph) -> PreparedDag | None:
    """`graph`'s box widths, layout and buffer names per node, computed now (uncached); None
    for a chain that is not drawn."""
    if skips_chain(graph):
        return None
    label, op = label_fonts()
    name_metrics, op_metrics = QFontMetricsF(label), QFontMetricsF(op)
    widths = tuple(max(MIN_NODE_WIDTH,
                       name_metrics.horizontalAdvance(elide(n.name)) + 2 * NODE_PADDING,
                       op_metrics.horizontalAdvance(elide(n.op or "")) + 2 * NODE_PADDING)
                   for n in graph.nodes)
    topo = topological_order([n.name for n in graph.nodes], graph.successors)  # no closure needed
    uses: list[list[str]] = [[] for _ in graph.nodes]
    for buf, used in zip(graph.buffers, graph.use_indices):
        for u in used:
            uses[u].append(buf.name)
    return PreparedDag(tuple(graph.successors), widths,
                       layered_layout(graph.successors, topo, widths), tuple(map(tuple, uses)))


# None for a chain that is not drawn.
prepared_dag = IdentityCache(prepare_dag, size=2)


class DrawingPreparer:
    """The loading worker's step for a session's DAG views: lay the graph out and draw it for
    the shape the view last had (`aspect`, set on the GUI thread as the view resizes)."""

    def __init__(self):
        self.aspect = DEFAULT_ASPECT

    def __call__(self, graph: Graph) -> PreparedDag | None:
        prepared = prepared_dag(graph)
        if prepared is not None:
            prepared.drawing(prepared.columns_for(self.aspect))
        return prepared
