"""How the slab bar and the lifetime map colour buffers: by kind (a snapshot's kinds are its
categories: parameter, optimizer state, activation, other), or, for a PyTorch snapshot, by the
first user frame of the stack that allocated each block, with a legend.

The frames holding the most bytes get a colour each; the rest, and blocks without a user frame,
share the grey of "other". The choice lives in the session's view settings (`colours`).
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import numpy as np
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QComboBox, QLabel

from slabscope.app.state.identity_cache import IdentityCache
from slabscope.app.views.common.buffer_emphasis import buffer_fills
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.common.palette import KIND_COLORS, shade
from slabscope.planner.formats.snapshot_names import user_site

BY_CATEGORY, BY_FRAME = "colour by category", "colour by frame"
FRAME_HUES = tuple(QColor(c) for c in (  # Tableau 10 without its grey, which means "other"
    "#4E79A7", "#F28E2B", "#E15759", "#76B7B2", "#59A14F",
    "#EDC948", "#B07AA1", "#FF9DA7", "#9C755F", "#2F4B7C"))
OTHER_FRAMES = "other"
OTHER_HUE = KIND_COLORS["other"]


@dataclass(frozen=True)
class FrameColours:
    """Per buffer index its fill, and the legend: (hue, frame, bytes, blocks), the most bytes
    first, "other" last."""

    fills: list[QColor]
    legend: tuple[tuple[QColor, str, int, int], ...]


def _frame_colours(graph) -> FrameColours:
    trace = graph.allocator
    sites = [user_site(trace.full_stacks.get(b.name, ())) if trace is not None else None
             for b in graph.buffers]
    held, blocks = Counter(), Counter()
    for site, buf in zip(sites, graph.buffers):
        if site is not None:
            held[site] += buf.bytes
            blocks[site] += 1
    top = [site for site, _ in held.most_common(len(FRAME_HUES))]
    hue = {site: FRAME_HUES[k] for k, site in enumerate(top)}
    fills = [shade(hue.get(site, OTHER_HUE), i) for i, site in enumerate(sites)]
    legend = [(hue[site], site, held[site], blocks[site]) for site in top]
    rest = [(buf.bytes, site) for site, buf in zip(sites, graph.buffers) if site not in hue]
    if rest:
        legend.append((OTHER_HUE, OTHER_FRAMES, sum(b for b, _ in rest), len(rest)))
    return FrameColours(fills, tuple(legend))


# Per graph; the loading worker computes it for snapshots (see `prepare_frame_colours`).
frame_colours = IdentityCache(_frame_colours, size=2)


def prepare_frame_colours(graph) -> None:
    """The loading worker's step: a snapshot's frame colours, ready before it is shown."""
    if graph.allocator is not None:
        frame_colours(graph)


def by_frame(session) -> bool:
    """Whether the session's graph is drawn coloured by frame (only a snapshot can be)."""
    graph = session.graph
    return session.view.colours == "frame" and graph is not None and graph.allocator is not None


def fills_for(session) -> list[QColor]:
    """Per buffer index of the session's graph, its fill under the chosen colouring."""
    graph = session.graph
    return frame_colours(graph).fills if by_frame(session) else buffer_fills(graph)


def _rgb(fills: list[QColor]) -> np.ndarray:
    return np.array([c.rgba() & 0xFFFFFF for c in fills], dtype=np.uint32)


# 0xRRGGBB per buffer index for the boxes' raster, per graph (by kind) or frame colouring.
_kind_rgb = IdentityCache(lambda graph: _rgb(buffer_fills(graph)), size=2)
_frame_rgb = IdentityCache(lambda colours: _rgb(colours.fills), size=2)


def rgb_for(session) -> np.ndarray:
    """`fills_for(session)` as 0xRRGGBB numbers, per buffer index."""
    graph = session.graph
    return _frame_rgb(frame_colours(graph)) if by_frame(session) else _kind_rgb(graph)


def prepare_fill_rgb(graph) -> np.ndarray:
    """The loading worker's step: the numbers of the default colouring (by kind), which a new
    graph is drawn in (a pass over 62,000 colours took 20 ms of the GUI thread)."""
    return _kind_rgb(graph)


class ColourChoice:
    """A view's "colour by" choice (shown for snapshots only) and the frame legend beside its
    kind legend; `on_change` redraws the view after the user or the session changed it."""

    def __init__(self, session, kind_legend, on_change: Callable[[], None]):
        self.session, self.kind_legend, self.on_change = session, kind_legend, on_change
        self.combo = QComboBox()
        self.combo.addItems([BY_CATEGORY, BY_FRAME])
        self.combo.setToolTip("Colour a snapshot's blocks by what they hold, or by the first "
                              "frame of your code in the stack that allocated them")
        self.combo.currentIndexChanged.connect(self._chosen)
        self.frame_legend = QLabel()
        self.frame_legend.setWordWrap(True)  # a dozen frame names take more than one line
        self.frame_legend.hide()
        self.exporting = False
        for prepare in (prepare_frame_colours, prepare_fill_rgb):
            if prepare not in session.prepare_graphs:
                session.prepare_graphs.append(prepare)

    def sync(self) -> bool:
        """Show the session's choice and legend; whether the choice shown changed."""
        graph = self.session.graph
        snapshot = graph is not None and graph.allocator is not None
        wanted = BY_FRAME if self.session.view.colours == "frame" else BY_CATEGORY
        changed = self.combo.currentText() != wanted
        self.combo.blockSignals(True)
        self.combo.setCurrentText(wanted)
        self.combo.blockSignals(False)
        self.combo.setVisible(snapshot and not self.exporting)
        framed = by_frame(self.session)
        self.kind_legend.setVisible(not framed)
        self.frame_legend.setVisible(framed)
        if framed:
            self.frame_legend.setText(legend_html(frame_colours(graph)))
            self.frame_legend.setToolTip(legend_tooltip(frame_colours(graph)))
        return changed

    def _chosen(self, *_) -> None:
        self.session.view.colours = "frame" if self.combo.currentText() == BY_FRAME else "kind"
        self.sync()
        self.on_change()


def legend_html(colours: FrameColours) -> str:
    """The frame legend: a swatch, the frame and how many blocks it allocated, per colour."""
    entries = [f"<span style='color:{hue.name()}'>&#9632;</span>&nbsp;{html.escape(frame)}"
               f"&nbsp;<span style='color:#666'>&times;{blocks:,}</span>"
               for hue, frame, _held, blocks in colours.legend]
    return "&nbsp;&nbsp; ".join(entries)


def legend_tooltip(colours: FrameColours) -> str:
    """What the legend's ranking means, with the bytes each frame's blocks allocate in all."""
    lines = [f"{frame}: {blocks:,} blocks, {format_bytes(held)} allocated in all"
             for _hue, frame, held, blocks in colours.legend]
    return ("The first frame of your code in each block's stack; the frames whose blocks "
            "allocate the most bytes get a colour, the rest are grey.\n" + "\n".join(lines))
