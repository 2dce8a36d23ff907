"""Colours every panel shares: buffers by kind (with a legend), and the hover highlights."""

from __future__ import annotations

from PySide6.QtGui import QColor

# Colour-blind-safe hues (Tableau 10) per buffer kind; the legend lists them in this order.
KIND_COLORS = {
    "input": QColor("#4C78A8"),
    "weight": QColor("#9D755D"),
    "workspace": QColor("#B279A2"),
    "intermediate": QColor("#54A24B"),
    "output": QColor("#F58518"),
    # A recorded training step's kinds (planner.recording.step_recorder).
    "gradient": QColor("#E45756"),
    "optimizer_state": QColor("#B279A2"),
    "temporary": QColor("#EECA3B"),
    # A PyTorch snapshot's blocks, by what they hold (planner.formats.snapshot_names.category).
    "parameter": QColor("#9D755D"),
    "optimizer state": QColor("#B279A2"),
    "activation": QColor("#54A24B"),
    "other": QColor("#9AA0A6"),
}

ANCESTOR = QColor("#1F77B4")      # what the hovered node depends on
DESCENDANT = QColor("#D62728")    # what depends on the hovered node
HOVERED = QColor("#FFB000")       # the hovered item itself
CONFLICT_OUTLINE = QColor("#E41A1C")
DIMMED_ALPHA = 50


def buffer_color(kind: str, index: int) -> QColor:
    """The fill for buffer number `index` of `kind`: the kind's hue, lightness varied by index
    so that neighbours in the slab stay distinguishable."""
    return shade(KIND_COLORS.get(kind, KIND_COLORS["intermediate"]), index)


def shade(base: QColor, index: int) -> QColor:
    """`base` a little lighter or darker by buffer number `index`, so neighbours differ."""
    return base.lighter(100 + (index * 37) % 45) if index % 2 else base.darker(100 + (index * 23) % 25)
