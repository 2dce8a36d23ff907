"""Rich-text summaries that wrap between their items, never inside one: a label and its value
stay on the same line however narrow the panel."""

from __future__ import annotations

ITEM_GAP = " &nbsp; "  # between items: the spaces either side are where a line may break


def unbroken(text: str) -> str:
    """`text` (rich text) in a span that a wrapping label never breaks."""
    return f"<span style='white-space:nowrap'>{text}</span>"


def summary_line(items, gap: str = ITEM_GAP) -> str:
    """The non-empty `items` (rich text each), kept whole, `gap` between them (where a line
    may break; a plain space for the parts of one sentence)."""
    return gap.join(unbroken(item) for item in items if item)
