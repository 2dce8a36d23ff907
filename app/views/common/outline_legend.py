"""A key to the outline colours the buffer views draw: what a hovered node reads, writes and
uses, the hovered and selected buffers, and (in the replay) the conflicts and the landing box."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QWidget

from slabscope.app.views.common.buffer_emphasis import ROLE_COLORS, SELECTED
from slabscope.app.views.common.palette import CONFLICT_OUTLINE, HOVERED

POINTER_OUTLINES = (("read by the hovered node", ROLE_COLORS["read"]),
                    ("written", ROLE_COLORS["written"]), ("used", ROLE_COLORS["used"]),
                    ("hovered", HOVERED), ("selected", SELECTED))
REPLAY_OUTLINES = (("must avoid", CONFLICT_OUTLINE), ("being placed", QColor("#111111")))


class OutlineLegend(QLabel):
    """One hollow swatch and name per outline colour in `entries` ((text, colour) pairs), as
    one wrapping line so that it never widens the view."""

    def __init__(self, entries=POINTER_OUTLINES, parent: QWidget | None = None):
        super().__init__(parent)
        self.entries = tuple(entries)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        swatches = " &nbsp; ".join(
            f"<span style='color:{colour.name()}; font-weight:bold'>&#9634;</span>&nbsp;{text}"
            for text, colour in self.entries)
        self.setText(f"<span style='color:#555555'>outlines:</span> {swatches}")
