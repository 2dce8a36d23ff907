"""The DAG view's box widths, layered layout and drawing of a graph, computed once per graph by
the loading worker (`Session.prepare_graphs`): a 10,000-node graph takes seconds to lay out and
a second more to turn into paths, which must not freeze the window."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

from PySide6.QtGui import QFont, QFontMetricsF

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.dag.dag_drawing import DrawnDag, draw_dag
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.dag.dag_folding import FOLD_ABOVE, Folding, fold
from slabscope.app.views.dag.dag_layout import DagLayout, layered_layout
from slabscope.app.views.dag.dag_memory import NodeMemory, node_memory
from slabscope.app.views.timeline.live_bytes_view import graph_is_time_chain
from slabscope.planner.model.graph import Graph
from slabscope.planner.model.reachability import topological_order

LABEL_PIXELS = 14             # the name, after the op on a box's one line
OP_PIXELS = 14                # the op, first: as large as the name
NODE_PADDING = 10.0
LINE_GAP = 9.0                # between the op and the name on a box's line
LETTER_SPACING = 0.8          # pixels between letters: OCR (and a tired eye) splits glyphs apart
MIN_NODE_WIDTH = 60.0
MAX_LABEL_CHARS = 28          # longer names are elided in the box (the tooltip has them whole)
MAX_CHAIN_NODES = 2000        # longer chains of time steps are not drawn as a DAG


@dataclass(frozen=True)
class PreparedDag:
    """Each node's box width, the layout of those boxes, the names of the buffers each node
    uses, per edge the label it shows zoomed in (a tensor's shape or bytes; "" for none), each
    node's memory (None without buffers) and the drawing made of it once asked for."""

    successors: tuple
    widths: tuple[float, ...]
    layout: DagLayout
    uses: tuple[tuple[str, ...], ...]
    edge_labels: tuple[str, ...] = ()
    memory: NodeMemory | None = None
    _drawn: list = field(default_factory=list, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    def drawing(self) -> DrawnDag:
        """The layout as paths and a thumbnail (made once)."""
        with self._lock:  # the worker may be drawing it while the window asks
            if not self._drawn:
                self._drawn.append(draw_dag(self.successors, self.widths, self.layout))
            return self._drawn[0]


def label_fonts() -> tuple[QFont, QFont]:
    """The fonts of a node's name and of its op (in pixels: the opening zoom is worked out
    from them, and points would make it depend on the screen's dots per inch)."""
    label = QFont()
    label.setPixelSize(LABEL_PIXELS)
    label.setLetterSpacing(QFont.SpacingType.AbsoluteSpacing, LETTER_SPACING)
    op = QFont(label)
    op.setPixelSize(OP_PIXELS)
    return label, op


def _last_part(name: str) -> str:
    """The last part of a scope path (ONNX exporters name nodes `/layer1/layer1.0/conv1/Conv`;
    the groups and the tooltip show the scopes, and the whole path made boxes too wide for a
    row to fit in view); a name without one whole."""
    return name.rsplit("/", 1)[-1] or name


def _without_op(name: str, op: str | None) -> str:
    """`name` without the op its last ` · ` part starts with, which the box's op line says
    (recorded steps name nodes `qkv · sum (backward) #2`: the box reads `sum  qkv (backward)
    #2`, and rows of a training step fit twice the boxes in view); else `name`."""
    head, dot, tail = name.rpartition(" · ")
    if not (dot and op) or not (tail == op or tail.startswith(op + " ")):
        return name
    rest = tail[len(op):].strip()
    return f"{head} {rest}" if rest else head


def box_name(name: str, op: str | None = None) -> str:
    """What a box shows of node `name`: its last part (`_last_part`) without the op that the
    box shows before it (`_without_op`), elided."""
    return elide(_without_op(_last_part(name), op))


def op_line(name: str, op: str | None) -> str:
    """The op a box shows before its name: none when the name, as the box shows it, already
    says it."""
    return elide(op) if op and op != _last_part(name) else ""


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
    widths = []
    for n in graph.nodes:
        op_text = op_line(n.name, n.op)
        line = name_metrics.horizontalAdvance(box_name(n.name, n.op)) + (
            op_metrics.horizontalAdvance(op_text) + LINE_GAP if op_text else 0.0)
        widths.append(max(MIN_NODE_WIDTH, math.ceil(line) + 2 * NODE_PADDING))
    widths = tuple(widths)
    topo = topological_order([n.name for n in graph.nodes], graph.successors)  # no closure needed
    uses: list[list[str]] = [[] for _ in graph.nodes]
    for buf, used in zip(graph.buffers, graph.use_indices):
        for u in used:
            uses[u].append(buf.name)
    return PreparedDag(tuple(graph.successors), widths,
                       layered_layout(graph.successors, topo, widths), tuple(map(tuple, uses)),
                       edge_labels(graph), node_memory(graph))


def edge_labels(graph: Graph) -> tuple[str, ...]:
    """Per edge in `(src, dst)` order of `graph.successors`, the shape (else the bytes) of the
    largest buffer both ends use, as Netron writes tensors on its edges; "" when they share none
    or another edge out of the same node already says it."""
    if not graph.buffers:
        return ()
    of_node: list[set[int]] = [set() for _ in graph.nodes]
    for b, used in enumerate(graph.use_indices):
        for u in used:
            of_node[u].add(b)
    labels = []
    for v, after in enumerate(graph.successors):
        said: set[int] = set()  # a tensor read by several nodes is labelled on one edge only
        for s in after:
            shared = of_node[v] & of_node[s]  # a weight upload uses thousands: no scan of them
            if not shared:
                labels.append("")
                continue
            b = max(shared, key=lambda b: (graph.buffers[b].bytes, -b))
            buffer = graph.buffers[b]
            labels.append("" if b in said else "×".join(map(str, buffer.shape)) if buffer.shape
                          else format_bytes(buffer.bytes))
            said.add(b)
    return tuple(labels)


# None for a chain that is not drawn; a graph and its opening folding, this one's and the last.
prepared_dag = IdentityCache(prepare_dag, size=4)


def _opening_folding(graph: Graph) -> Folding | None:
    """How `graph` opens: past `FOLD_ABOVE` nodes folded, every group closed; else None."""
    if len(graph.nodes) <= FOLD_ABOVE or graph_is_time_chain(graph):
        return None
    memory = prepared_dag(graph).memory
    return fold(graph, written=memory.written if memory is not None else ())


opening_folding = IdentityCache(_opening_folding, size=2)


class DrawingPreparer:
    """The loading worker's step for a session's DAG views: lay the graph out and draw it."""

    def __call__(self, graph: Graph) -> PreparedDag | None:
        prepared = prepared_dag(graph)
        if prepared is None:
            return None
        prepared.drawing()  # drawn even when it opens folded: unfolding must not draw it now
        folding = opening_folding(graph)
        if folding is not None:
            prepared_dag(folding.graph).drawing()
        return prepared
