"""Names that tell what a buffer is: its own name and the op of its first user ("r82 · Concat"),
shortened at the end, never in the middle (the whole name is on hover)."""

from __future__ import annotations

from PySide6.QtCore import Qt

from slabscope import planner
from slabscope.app.state.identity_cache import IdentityCache
from slabscope.planner.analysis.peak import first_users

SEPARATOR = " · "


def _first_ops(graph: planner.Graph) -> tuple[str, ...]:
    """Per buffer, the op of its first user ("" where unknown)."""
    if not any(node.op for node in graph.nodes):
        return ("",) * len(graph.buffers)
    return tuple(graph.nodes[int(n)].op or "" for n in buffer_users(graph))


# Found by the loading worker (`use_buffer_ops`), never on the GUI thread: each buffer's first
# user (the node `analysis.peak` attributes it to, which the DAG centres), and its op.
buffer_users = IdentityCache(first_users, size=2)
buffer_ops = IdentityCache(_first_ops, size=2)


def use_buffer_ops(session) -> None:
    """Have the loading worker find each graph's buffer users and ops as it loads."""
    for prepare in (buffer_users, buffer_ops):
        if prepare not in session.prepare_graphs:
            session.prepare_graphs.append(prepare)


def readable_name(graph: planner.Graph, name: str) -> str:
    """`name`, with the op that makes it where the graph knows one: "r82 · Concat"."""
    index = graph.buffer_index.get(name)
    op = buffer_ops(graph)[index] if index is not None else ""
    return f"{name}{SEPARATOR}{op}" if op and op not in name else name


def shortened(metrics, text: str, width: int) -> str:
    """`text` cut at its end to fit `width` pixels."""
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
