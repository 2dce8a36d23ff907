"""A key to the outline colours the buffer views draw: what a hovered node reads, writes and
uses, the hovered and selected buffers, and (in the replay) the conflicts and the landing box."""

from __future__ import annotations

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from app.views.buffer_emphasis import ROLE_COLORS, SELECTED
from app.views.palette import CONFLICT_OUTLINE, HOVERED

POINTER_OUTLINES = (("read by the hovered node", ROLE_COLORS["read"]),
                    ("written", ROLE_COLORS["written"]), ("used", ROLE_COLORS["used"]),
                    ("hovered", HOVERED), ("selected", SELECTED))
REPLAY_OUTLINES = (("must avoid", CONFLICT_OUTLINE), ("being placed", QColor("#111111")))


class OutlineLegend(QWidget):
    """One hollow swatch and name per outline colour in `entries` ((text, colour) pairs)."""

    def __init__(self, entries=POINTER_OUTLINES, parent: QWidget | None = None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.setSpacing(6)
        layout.addWidget(QLabel("outlines:"))
        self.entries = tuple(entries)
        for text, colour in self.entries:
            swatch = QLabel()
            swatch.setFixedSize(12, 12)
            swatch.setStyleSheet(f"border: 2px solid {colour.name()}; background: white;")
            layout.addWidget(swatch)
            layout.addWidget(QLabel(text))
        layout.addStretch(1)
