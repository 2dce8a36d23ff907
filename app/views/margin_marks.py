"""Labels for horizontal reference lines in a plot's margin, merged only when they would touch on
screen: the decision is made in pixels, so a visible gap always gets two labels."""

from __future__ import annotations

from app.views.byte_axis import format_bytes


def merge_marks(marks: list[tuple[float, str]], pixels_per_byte: float,
                line_height: float) -> list[tuple[float, str]]:
    """`marks` (bytes, text) grouped where neighbours lie less than `line_height` pixels apart.

    A group is one label at its highest value, its texts joined highest first, so every number
    stays readable. Marks at exactly the same value read "a = b 1.2 MiB" when their texts are
    "a 1.2 MiB" and "b 1.2 MiB".
    """
    ordered = sorted(marks, key=lambda m: -m[0])
    groups: list[list[tuple[float, str]]] = []
    for mark in ordered:
        if groups and (groups[-1][-1][0] - mark[0]) * pixels_per_byte < line_height:
            groups[-1].append(mark)
        else:
            groups.append([mark])
    merged = []
    for group in groups:
        top = group[0][0]
        if len(group) > 1 and all(value == top for value, _ in group):
            names = " = ".join(text.rsplit(" ", 2)[0] for _, text in group)
            merged.append((top, f"{names} {format_bytes(top)}"))
        else:
            merged.append((top, " · ".join(text for _, text in group)))
    return merged
