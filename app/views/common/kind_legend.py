"""A row of colour swatches naming the buffer kinds a graph uses (the views' legend)."""

from __future__ import annotations

from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.common.palette import KIND_COLORS

# The kinds a graph's buffers have, found by the loading worker (a pass over 62,000 buffers
# per legend took 10 ms of the GUI thread when a large graph arrived).
graph_kinds = IdentityCache(lambda graph: frozenset(b.kind for b in graph.buffers), size=2)


class KindLegend(QWidget):
    """One swatch and name per buffer kind present, in `KIND_COLORS` order."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(4, 0, 4, 0)
        self._layout.setSpacing(10)
        self.kinds: tuple[str, ...] = ()

    def set_kinds(self, kinds) -> None:
        """Show the kinds in `kinds` (others of KIND_COLORS are left out)."""
        present = set(kinds)
        self.kinds = tuple(k for k in KIND_COLORS if k in present)
        while self._layout.count():
            item = self._layout.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        for kind in self.kinds:
            swatch = QLabel()
            swatch.setFixedSize(12, 12)
            swatch.setStyleSheet(f"background: {KIND_COLORS[kind].name()}; border-radius: 2px;")
            self._layout.addWidget(swatch)
            self._layout.addWidget(QLabel(kind))
        self._layout.addStretch(1)
