"""A pyqtgraph axis for byte offsets: ticks at round numbers of B, KiB, MiB or GiB."""

from __future__ import annotations

import pyqtgraph as pg

BYTE_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))


def byte_unit(span: float) -> tuple[str, int]:
    """The largest unit of which `span` bytes is at least one whole unit (B for tiny spans)."""
    for name, size in BYTE_UNITS:
        if span >= size:
            return name, size
    return "B", 1


def format_bytes(count: float) -> str:
    """`count` bytes in the largest fitting unit with three significant digits: '1.14 MiB'."""
    name, size = byte_unit(abs(count))
    value = count / size
    if size == 1:
        return f"{int(count):,} B"
    return f"{value:.3g} {name}" if abs(value) < 1000 else f"{value:,.0f} {name}"


LABEL_OVERHANG = 3  # pixels a vertical axis's tick label may reach past the axis's ends


class ByteAxis(pg.AxisItem):
    """Ticks spaced at round multiples of one binary unit and labelled in it ('256 KiB')."""

    def __init__(self, orientation: str = "bottom", **kwargs):
        super().__init__(orientation, **kwargs)
        self.enableAutoSIPrefix(False)
        self._unit = ("B", 1)
        if orientation in ("left", "right"):
            # A label may reach a few pixels past the axis's ends (the bottom tick's often
            # does), but not so far that the plot's edge cuts it, as "500 GiB" was at the top.
            self.setStyle(hideOverlappingLabels=LABEL_OVERHANG)

    def tickSpacing(self, minVal, maxVal, size):
        """Decimal spacing in the unit that suits the visible span, so ticks land on whole KiB/MiB."""
        self._unit = byte_unit(abs(maxVal - minVal) / 2)
        unit = self._unit[1]
        levels = super().tickSpacing(minVal / unit, maxVal / unit, size)
        # Below one byte a tick means nothing.
        return [(max(spacing * unit, 1.0), offset * unit) for spacing, offset in levels]

    def tickValues(self, minVal, maxVal, size):
        """The default ticks without negative ones: no byte lives below offset 0."""
        return [(spacing, [v for v in values if v >= 0])
                for spacing, values in super().tickValues(minVal, maxVal, size)]

    def tickStrings(self, values, scale, spacing):
        """Each tick as a number in the current unit, with as few decimals as the spacing needs."""
        name, unit = self._unit
        step = spacing / unit
        decimals = 0 if step >= 1 else min(3, len(f"{step:.3g}".split(".")[-1]))
        return [f"{v / unit:,.{decimals}f} {name}" for v in values]


class StepAxis(pg.AxisItem):
    """Whole-number ticks at the middle of each step (a step k spans [k, k+1) on the axis);
    none below step 0."""

    def tickValues(self, minVal, maxVal, size):
        """Ticks of the default spacing, never finer than one step, shifted to step centres."""
        levels = [(spacing, [v + 0.5 for v in values if float(v).is_integer() and v >= 0])
                  for spacing, values in super().tickValues(minVal - 0.5, maxVal - 0.5, size)
                  if spacing >= 1]
        if not levels:
            first, last = max(0, int(minVal)), int(maxVal)
            levels = [(1.0, [k + 0.5 for k in range(first, last + 1)])]
        return levels

    def tickStrings(self, values, scale, spacing):
        """Each tick as its step number."""
        return [str(int(round(v - 0.5))) for v in values]
