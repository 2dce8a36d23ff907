"""How the buffer views emphasise what the session points at: the hovered node's buffers, the
hovered buffer and the selection. Shared by the slab bar and the lifetime map."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QColor

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.common.palette import ANCESTOR, DESCENDANT, DIMMED_ALPHA, HOVERED, buffer_color

SELECTED = QColor("#202020")
HOVER_WIDTH = 3.0
NODE_USE_WIDTH = 2.5


def buffers_by_node(graph) -> dict[str, dict[str, str]]:
    """Per node, its buffers and the role each plays there: 'read', 'written' or 'used'."""
    roles: dict[str, dict[str, str]] = {node.name: {} for node in graph.nodes}
    for buffer in graph.buffers:
        for use in buffer.uses:
            roles[use][buffer.name] = "used"
    for node in graph.nodes:
        for name in node.inputs:
            roles[node.name][name] = "read"
        for name in node.outputs:
            roles[node.name][name] = "written"
    return roles


# Once per graph for all the panels, by the loading worker (the node panel asks for it).
node_roles = IdentityCache(buffers_by_node, size=2)

# Colours depend only on kind and buffer index, so every plan of a graph reuses them.
buffer_fills = IdentityCache(
    lambda graph: [buffer_color(b.kind, i) for i, b in enumerate(graph.buffers)], size=2)


# Inputs come from the node's ancestors and outputs go to its descendants, as in the DAG view.
ROLE_COLORS = {"read": ANCESTOR, "written": DESCENDANT, "used": HOVERED}


def pointer_emphasis(session, names, position=None) -> tuple[np.ndarray, dict]:
    """Opacity per buffer of `names` and outlines {name: (colour, pixels)} for what the session
    points at: the hovered node, else the selected node (its buffers outlined by role, the rest
    dimmed), the selection and the hovered buffer. `position` (name -> index into `names`),
    when given, spares a pass over every name: a node touches only a few buffers."""
    alpha = np.full(len(names), 255.0)
    outlines: dict[str, tuple[QColor, float]] = {}
    node = session.hovered_node or session.selection_model.node
    graph = session.graph
    if node is not None and graph is not None and node in node_roles(graph):
        roles = node_roles(graph)[node]
        alpha[:] = DIMMED_ALPHA
        if position is not None:
            lit = [position[name] for name in roles if name in position]
            alpha[lit] = 255.0
        else:
            for i, name in enumerate(names):
                if name in roles:
                    alpha[i] = 255.0
        for name, role in roles.items():
            outlines[name] = (ROLE_COLORS[role], NODE_USE_WIDTH)
    for name in session.selection:
        outlines[name] = (SELECTED, HOVER_WIDTH)
    if session.hovered_buffer is not None:
        outlines[session.hovered_buffer] = (HOVERED, HOVER_WIDTH)
    return alpha, outlines


class PointerOutlines:
    """The outline colour each buffer gets from what the session points at, for list and table
    panels: `outline_of(name)`. Calls `on_change()` whenever it may have changed."""

    def __init__(self, session, on_change):
        self.session = session
        self._on_change = on_change
        self._outlines: dict[str, QColor] = {}
        for signal in (session.sigHoverNode, session.sigHoverBuffer, session.sigSelectionChanged,
                       session.selection_model.sigNodeSelected, session.sigGraphChanged):
            signal.connect(self.refresh)

    def outline_of(self, name: str) -> QColor | None:
        """The colour buffer `name` is outlined in now, or None."""
        return self._outlines.get(name)

    def refresh(self, *_) -> None:
        """Recompute the outlines from the session and announce the change."""
        _alpha, outlines = pointer_emphasis(self.session, ())
        self._outlines = {name: colour for name, (colour, _width) in outlines.items()}
        self._on_change()
