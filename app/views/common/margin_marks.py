"""Labels for horizontal reference lines in a plot's margin, laid out in pixels: lines at the same
value share one label; labels that would touch are stacked apart, in the lines' order, so every
number stays readable however close the lines are."""

from __future__ import annotations

from slabscope.app.views.common.byte_axis import format_bytes


def place_marks(marks: list[tuple[float, str]], pixels_per_byte: float,
                line_height: float) -> list[tuple[float, str]]:
    """(position in bytes, text) for each label of `marks` (bytes, text "name N unit").

    Marks of equal value merge into "a = b N unit". Highest first, each label sits at its line
    unless that is closer than `line_height` pixels below the label above it; then it moves down
    just far enough.
    """
    groups: list[list[tuple[float, str]]] = []
    for mark in sorted(marks, key=lambda m: -m[0]):
        if groups and groups[-1][0][0] == mark[0]:
            groups[-1].append(mark)
        else:
            groups.append([mark])
    step = line_height / max(pixels_per_byte, 1e-300)  # one text line, in bytes
    placed: list[tuple[float, str]] = []
    for group in groups:
        value = group[0][0]
        if len(group) > 1:
            names = " = ".join(text.rsplit(" ", 2)[0] for _, text in group)
            text = f"{names} {format_bytes(value)}"
        else:
            text = group[0][1]
        at = value if not placed else min(value, placed[-1][0] - step)
        placed.append((at, text))
    return placed
