"""What the user points at and has picked, shared by every panel: plain Python, evented.

One hovered node or buffer, the selected buffers (the inspector compares the first two) and the
selected node. `reveal` selects a node or buffer and asks every panel to bring it into view
(Find, and clicks that should scroll the other panels). Nothing here draws.
"""

from __future__ import annotations

from psygnal import Signal


class Selection:
    """Hover and selection state with psygnal signals (`connect`/`emit`, as Qt's).

    `sigHoverNode(name|None)`, `sigHoverBuffer(name|None)`, `sigSelectionChanged(buffers)`,
    `sigNodeSelected(name|None)`, `sigReveal(kind, name)` with kind "node" or "buffer".
    """

    sigHoverNode = Signal(object)
    sigHoverBuffer = Signal(object)
    sigSelectionChanged = Signal(object)
    sigNodeSelected = Signal(object)
    sigReveal = Signal(str, str)

    def __init__(self):
        self.hovered_node: str | None = None
        self.hovered_buffer: str | None = None
        self.buffers: tuple[str, ...] = ()
        self.node: str | None = None

    def hover_node(self, name: str | None) -> None:
        """Announce the node under the pointer (None when it leaves)."""
        if name != self.hovered_node:
            self.hovered_node = name
            self.sigHoverNode.emit(name)

    def hover_buffer(self, name: str | None) -> None:
        """Announce the buffer under the pointer (None when it leaves)."""
        if name != self.hovered_buffer:
            self.hovered_buffer = name
            self.sigHoverBuffer.emit(name)

    def select_buffers(self, names) -> None:
        """Set the selected buffers."""
        names = tuple(names)
        if names != self.buffers:
            self.buffers = names
            self.sigSelectionChanged.emit(names)

    def pick_buffer(self, name: str | None, toggle: bool = False) -> None:
        """A click on buffer `name` (None: on nothing): select it alone, or with `toggle` add it
        to the selection or take it out."""
        if name is None:
            self.select_buffers(())
        elif toggle:
            chosen = [n for n in self.buffers if n != name]
            if name not in self.buffers:
                chosen.append(name)
            self.select_buffers(chosen)
        else:
            self.select_buffers((name,))

    def select_node(self, name: str | None) -> None:
        """Set the selected node (None: none)."""
        if name != self.node:
            self.node = name
            self.sigNodeSelected.emit(name)

    def reveal(self, kind: str, name: str) -> None:
        """Select node or buffer `name` (`kind` "node" or "buffer") and ask every panel to
        scroll it into view."""
        if kind == "node":
            self.select_node(name)
        elif kind == "buffer":
            self.select_buffers((name,))
        else:
            raise ValueError(f"kind must be 'node' or 'buffer', got {kind!r}")
        self.sigReveal.emit(kind, name)

    def clear(self) -> None:
        """Forget every hover and selection (a new graph), announcing each change."""
        self.hover_node(None)
        self.hover_buffer(None)
        self.select_buffers(())
        self.select_node(None)
