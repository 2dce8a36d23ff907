"""The node panel: the selected (or hovered) node's op, its inputs and outputs with shapes and
dtypes, its workspace and its attributes. A buffer's name is a link that reveals it everywhere."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QUrl
from PySide6.QtWidgets import QTextBrowser, QVBoxLayout, QWidget

from slabscope.app.views.common.buffer_emphasis import node_roles
from slabscope.app.views.common.byte_axis import format_bytes

EMPTY = "Click a node in the DAG (or find one with Ctrl+F) to see its op, operands and attributes."
# Buffers listed per role: a trace step can use thousands, and Qt lays a rich-text table out
# at about 0.3 ms a row, so 200 rows made each hover of such a step stall the window 70 ms.
MAX_ROWS = 40


def index_nodes(graph) -> dict[str, int]:
    """The graph's node index, built by the loading worker: a trace's 70,583 steps took 13 ms
    of the GUI thread on the first hover."""
    return graph.node_index


class NodePanel(QWidget):
    """What one node does, from the session's graph: the selected node, else the hovered one."""

    def __init__(self, session, parent: QWidget | None = None):
        super().__init__(parent)
        self.session = session
        self.text = QTextBrowser()
        self.text.setOpenLinks(False)
        self.text.anchorClicked.connect(self._link)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.text)
        for prepare in (node_roles, index_nodes):  # made by the loading worker, not on hover
            if prepare not in session.prepare_graphs:
                session.prepare_graphs.append(prepare)
        model = session.selection_model
        model.sigNodeSelected.connect(self.refresh)
        model.sigHoverNode.connect(self.refresh)
        session.sigGraphChanged.connect(self.refresh)
        self.refresh()

    def shown_node(self) -> str | None:
        """The node on show: the selected one, else the hovered one, else None."""
        graph = self.session.graph
        model = self.session.selection_model
        for name in (model.node, model.hovered_node):
            if graph is not None and name is not None and name in graph.node_index:
                return name
        return None

    def refresh(self, *_) -> None:
        """Show the node of `shown_node`."""
        name = self.shown_node()
        self.text.setHtml(EMPTY if name is None else self.node_html(name))

    def node_html(self, name: str) -> str:
        """The panel's text for node `name`."""
        graph = self.session.graph
        node = graph.nodes[graph.node_index[name]]
        parts = [f"<h3 style='margin:0'>{escape(node.name)}</h3>",
                 f"<p>op <b>{escape(node.op or 'none')}</b></p>"]
        listed = set()
        for title, names in (("inputs", node.inputs), ("outputs", node.outputs),
                             ("workspace", node.workspace)):
            if names:
                parts.append(self._buffer_table(title, names))
                listed.update(names)
        # The node's buffers in file order, from the map every panel shares (no pass over all).
        used = [b for b in node_roles(graph).get(name, {}) if b not in listed]
        if used:
            parts.append(self._buffer_table("other buffers it uses", used))
        if node.attrs:
            rows = "".join(f"<tr><td>{escape(str(k))}</td><td>{escape(str(v))}</td></tr>"
                           for k, v in sorted(node.attrs.items()))
            parts.append(f"<p><b>attributes</b></p><table cellpadding='2'>{rows}</table>")
        else:
            parts.append("<p style='color:#666'>no attributes</p>")
        return "".join(parts)

    def _buffer_table(self, title: str, names) -> str:
        graph = self.session.graph
        rows = []
        for buffer_name in list(names)[:MAX_ROWS]:
            buffer = graph.buffer(buffer_name)
            shape = "×".join(map(str, buffer.shape)) if buffer.shape is not None else "-"
            rows.append(f"<tr><td><a href='buffer:{escape(buffer_name)}'>{escape(buffer_name)}"
                        f"</a></td><td>{shape}</td><td>{escape(buffer.dtype or '-')}</td>"
                        f"<td align='right'>{format_bytes(buffer.bytes)}</td>"
                        f"<td>{escape(buffer.kind)}</td></tr>")
        more = (f"<tr><td colspan='5'>and {len(names) - MAX_ROWS:,} more</td></tr>"
                if len(names) > MAX_ROWS else "")
        head = ("<tr style='color:#555'><td>buffer</td><td>shape</td><td>dtype</td>"
                "<td align='right'>bytes</td><td>kind</td></tr>")
        return (f"<p><b>{title}</b> ({len(names)})</p>"
                f"<table cellpadding='2'>{head}{''.join(rows)}{more}</table>")

    def _link(self, url: QUrl) -> None:
        text = url.toString()
        if text.startswith("buffer:"):
            self.session.selection_model.reveal("buffer", text[len("buffer:"):])
