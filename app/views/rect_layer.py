"""Thousands of labelled rectangles drawn by one graphics item, so big graphs stay fast."""

from __future__ import annotations

import operator

from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QImage, QPen

LABEL_MIN_WIDTH = 28.0    # pixels a box needs before it shows its name
LABEL_MIN_HEIGHT = 11.0
RASTER_BOXES = 3000       # past this many boxes in view, they are filled into one cached image
MAX_LABELS = 400          # more labelled boxes than this would be unreadable clutter: none drawn
EDGE_COLOR = QColor(255, 255, 255, 160)
HALO = QColor(255, 255, 255, 230)


class RectLayer(pg.GraphicsObject):
    """Filled rectangles in data coordinates, each with a name, fill, opacity and optional outline.

    Painting maps every rectangle to device pixels once and draws it there, so boxes narrower than a
    pixel still show and labels stay crisp at any zoom. `on_hover(name|None)` and
    `on_click(name|None, modifiers)` report the rectangle under the pointer.
    """

    def __init__(self):
        super().__init__()
        self.names: list[str] = []
        self._index_of: dict[str, int] | None = None  # name -> rectangle, built when first asked
        self._geometry = np.zeros((4, 0))
        self._fills: list[QColor] = []
        self._fill_cache: dict[tuple[int, int], QColor] = {}
        self._alpha = np.zeros(0)
        self._shown = np.zeros(0, dtype=bool)
        self._outlines: dict[int, tuple[QColor, float]] = {}
        self._bands: list[tuple[float, float, QColor, str]] = []
        self._bounds = QRectF()
        self.drawn_band_labels: list[str] = []  # as the last paint drew them (whole, never cut)
        self._version = 0           # bumped whenever what the raster image shows changes
        self._raster_key = None
        self._raster_image = None
        self._rgb: np.ndarray | None = None
        self.on_hover: Callable[[str | None], None] | None = None
        self.on_click: Callable[[str | None, object], None] | None = None
        self.setAcceptHoverEvents(True)

    # --- content -------------------------------------------------------------------------

    def set_rects(self, names, x, width, y, height, fills, index: dict | None = None,
                  rgb: np.ndarray | None = None) -> None:
        """Replace every rectangle; all shown, opaque and without outline. `index` (name ->
        position in `names`) and `rgb` (0xRRGGBB per fill), when the caller has them, spare
        working them out on the first hover and paint."""
        self.names = list(names)
        self._index_of = index
        self._fills = list(fills)
        self._fill_cache: dict[tuple[int, int], QColor] = {}
        self._rgb = None if rgb is None else np.asarray(rgb, dtype=np.uint32)
        self._alpha = np.full(len(self.names), 255.0)
        self._shown = np.ones(len(self.names), dtype=bool)
        self._outlines = {}
        self.set_geometry(x, width, y, height)

    def set_geometry(self, x, width, y, height) -> None:
        """Move and resize the rectangles (arrays in the order of `names`)."""
        self.prepareGeometryChange()
        self._geometry = np.array([x, width, y, height], dtype=float).reshape(4, len(self.names))
        self._version += 1
        self._update_bounds()
        self.update()

    def set_emphasis(self, shown=None, alpha=None, outlines=None) -> None:
        """Which rectangles show, their opacity (0-255) and outlines {name: (colour, pixels)}."""
        if shown is not None:
            shown = np.asarray(shown, dtype=bool)
            if not np.array_equal(shown, self._shown):
                self._shown = shown
                self._version += 1
        if alpha is not None:
            alpha = np.asarray(alpha, dtype=float)
            if not np.array_equal(alpha, self._alpha):
                self._alpha = alpha
                self._version += 1
        if outlines is not None:
            index = self._index  # a node of a trace outlines thousands: look the map up once
            self._outlines = {index[n]: style for n, style in outlines.items() if n in index}
        self.update()

    def set_bands(self, bands) -> None:
        """Vertical bands (x0, x1, colour, label) drawn behind the rectangles across their height."""
        self._bands = list(bands)
        self.update()

    def geometry(self) -> dict[str, tuple[float, float, float, float]]:
        """Each rectangle's (x, width, y, height) as drawn now, by name."""
        return {n: tuple(self._geometry[:, i]) for i, n in enumerate(self.names)}

    def outlined(self) -> dict[str, QColor]:
        """The outlined rectangles and their outline colours, by name."""
        return {self.names[i]: color for i, (color, _width) in self._outlines.items()}

    def shown_names(self) -> list[str]:
        """Names of the rectangles on show, in drawing order."""
        return [n for n, shown in zip(self.names, self._shown) if shown]

    def opacity_of(self, name: str) -> int:
        """The fill opacity (0-255) of rectangle `name`."""
        return int(self._alpha[self._index[name]])

    def rect_of(self, name: str) -> QRectF:
        """The data rectangle of `name`."""
        x, w, y, h = self._geometry[:, self._index[name]]
        return QRectF(x, y, w, h)

    def name_at(self, x: float, y: float) -> str | None:
        """The shown rectangle containing data point (x, y), the top-drawn one if several."""
        if not self.names:
            return None
        gx, gw, gy, gh = self._geometry
        hit = self._shown & (gx <= x) & (x < gx + gw) & (gy <= y) & (y < gy + gh)
        found = np.flatnonzero(hit)
        return self.names[found[-1]] if found.size else None

    def _update_bounds(self) -> None:
        if not self.names:
            self._bounds = QRectF()
        else:
            gx, gw, gy, gh = self._geometry
            left, top = gx.min(), gy.min()
            self._bounds = QRectF(left, top, (gx + gw).max() - left, (gy + gh).max() - top)
        self.informViewBoundsChanged()

    @property
    def _index(self) -> dict[str, int]:
        # Most plans are shown without a name looked up: 60,000 names are indexed only on demand.
        if self._index_of is None:
            self._index_of = {n: i for i, n in enumerate(self.names)}
        return self._index_of

    # --- QGraphicsItem -------------------------------------------------------------------

    def boundingRect(self) -> QRectF:
        """The union of all rectangles, in data coordinates."""
        return QRectF(self._bounds)

    def paint(self, painter, option, widget=None):
        """Bands, fills, edges, outlines and labels, drawn in device pixels."""
        if not self.names:
            return
        t = painter.transform()
        gx, gw, gy, gh = self._geometry
        xa, xb = gx * t.m11() + t.dx(), (gx + gw) * t.m11() + t.dx()
        ya, yb = gy * t.m22() + t.dy(), (gy + gh) * t.m22() + t.dy()
        left, right = np.minimum(xa, xb), np.maximum(xa, xb)
        top, bottom = np.minimum(ya, yb), np.maximum(ya, yb)
        # Sub-pixel boxes still get one pixel each way so that no buffer vanishes when zoomed out.
        right = np.maximum(right, left + 1.0)
        bottom = np.maximum(bottom, top + 1.0)
        device = painter.device()
        ratio = device.devicePixelRatioF() or 1.0
        vis_w, vis_h = device.width() / ratio, device.height() / ratio
        visible = self._shown & (right >= 0) & (left <= vis_w) & (bottom >= 0) & (top <= vis_h)
        indices = np.flatnonzero(visible)
        width, height = (right - left)[indices], (bottom - top)[indices]
        painter.save()
        painter.resetTransform()
        band_labels = self._paint_bands(painter, t, top[self._shown], bottom[self._shown])
        if indices.size > RASTER_BOXES:
            self._paint_raster(painter, t, indices, left, top, right, bottom, vis_w, vis_h, ratio)
        else:
            # Plain floats build QRectF far faster than NumPy scalars do.
            boxes = list(map(QRectF, left[indices].tolist(), top[indices].tolist(),
                             width.tolist(), height.tolist()))
            alpha = self._alpha[indices].astype(int).tolist()
            for i, box, a in zip(indices.tolist(), boxes, alpha):
                painter.fillRect(box, self._fill_with_alpha(i, a))
            roomy = (width >= 4) & (height >= 4) & (self._alpha[indices] > 200)
            self._paint_edges(painter, [boxes[k] for k in np.flatnonzero(roomy).tolist()])
        self._paint_outlines(painter, left, top, right, bottom)
        labelled = np.flatnonzero((width >= LABEL_MIN_WIDTH) & (height >= LABEL_MIN_HEIGHT))
        if labelled.size <= MAX_LABELS:
            self._paint_labels(painter, [(int(indices[k]), QRectF(left[indices[k]], top[indices[k]],
                                                                  width[k], height[k]))
                                         for k in labelled.tolist()])
        self._paint_band_labels(painter, band_labels)
        painter.restore()

    def _paint_raster(self, painter, t, indices, left, top, right, bottom, vis_w, vis_h,
                      ratio) -> None:
        """Many boxes: fill them into one image at device resolution, cached until the geometry,
        the view's transform or the emphasis changes (a hovered box only moves an outline)."""
        key = (t.m11(), t.m22(), t.dx(), t.dy(), vis_w, vis_h, ratio, self._version)
        if self._raster_key != key:
            w, h = max(1, int(np.ceil(vis_w * ratio))), max(1, int(np.ceil(vis_h * ratio)))
            pixels = np.zeros((h, w), dtype=np.uint32)
            x0 = np.clip(np.floor(left[indices] * ratio), 0, w).astype(np.int64)
            x1 = np.clip(np.maximum(np.ceil(right[indices] * ratio), x0 + 1), 0, w).astype(np.int64)
            y0 = np.clip(np.floor(top[indices] * ratio), 0, h).astype(np.int64)
            y1 = np.clip(np.maximum(np.ceil(bottom[indices] * ratio), y0 + 1), 0, h).astype(np.int64)
            colours = self._argb(indices)
            for a, b, c, d, colour in zip(y0.tolist(), y1.tolist(), x0.tolist(), x1.tolist(),
                                          colours.tolist()):
                pixels[a:b, c:d] = colour
            image = QImage(pixels.data, w, h, 4 * w, QImage.Format.Format_ARGB32)
            image.setDevicePixelRatio(ratio)
            self._raster_key, self._raster_image = key, (image, pixels)  # pixels back the image
        painter.drawImage(QPointF(0, 0), self._raster_image[0])

    def _argb(self, indices) -> np.ndarray:
        """0xAARRGGBB per rectangle of `indices`: its fill at its current opacity."""
        if self._rgb is None:
            self._rgb = np.array([c.rgba() & 0xFFFFFF for c in self._fills], dtype=np.uint32)
        alpha = np.clip(self._alpha[indices], 0, 255).astype(np.uint32)
        return (alpha << 24) | self._rgb[indices]

    def _fill_with_alpha(self, i: int, alpha: int) -> QColor:
        """Rectangle i's fill at `alpha`, cached since only a few opacities are ever used."""
        key = (i, alpha)
        color = self._fill_cache.get(key)
        if color is None:
            color = QColor(self._fills[i])
            color.setAlpha(alpha)
            self._fill_cache[key] = color
        return color

    def _paint_bands(self, painter, t, tops, bottoms) -> list[tuple[QRectF, QColor, str]]:
        """Hatched bands behind the boxes; returns where their labels go (drawn over the boxes)."""
        if not self._bands or tops.size == 0:
            return []
        y0, y1 = tops.min() - 4, bottoms.max() + 4
        labels = []
        for x0, x1, color, label in self._bands:
            a, b = sorted((x0 * t.m11() + t.dx(), x1 * t.m11() + t.dx()))
            band = QRectF(a, y0, max(b - a, 2.0), y1 - y0)
            painter.fillRect(band, QBrush(color, Qt.BrushStyle.BDiagPattern))
            painter.fillRect(band, QColor(color.red(), color.green(), color.blue(), 30))
            if label:
                labels.append((band, color, label))
        return labels

    def _paint_band_labels(self, painter, labels) -> None:
        """Each band's label whole, centred above it; one that would overlap a label already
        drawn (or leave the view) is left out rather than cut short."""
        metrics = QFontMetricsF(painter.font())
        view_width = painter.device().width() / (painter.device().devicePixelRatioF() or 1.0)
        drawn: list[QRectF] = []
        self.drawn_band_labels = []
        for band, color, label in labels:
            box = QRectF(0, 0, metrics.horizontalAdvance(label) + 6, metrics.height() + 2)
            box.moveCenter(band.center())
            box.moveTop(band.top() - box.height() - 1)
            if box.left() < 0:
                box.moveLeft(0)
            if box.right() > view_width:
                box.moveRight(view_width)
            if any(box.intersects(other) for other in drawn):
                continue
            drawn.append(box)
            self.drawn_band_labels.append(label)
            painter.fillRect(box, QColor(255, 255, 255, 220))
            painter.setPen(color.darker(130))
            painter.drawText(box, Qt.AlignmentFlag.AlignCenter, label)

    def _paint_edges(self, painter, boxes) -> None:
        """A thin light edge between neighbouring boxes of similar colour."""
        if not boxes:
            return
        pen = QPen(EDGE_COLOR, 1)
        pen.setCosmetic(True)
        painter.setPen(pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRects([box.adjusted(0.5, 0.5, -0.5, -0.5) for box in boxes])

    def _paint_outlines(self, painter, left, top, right, bottom) -> None:
        """Each outline over a white halo, so that it shows on a fill of its own hue too."""
        painter.setBrush(Qt.BrushStyle.NoBrush)
        # A hovered node may outline thousands of boxes: one drawRects per style, not per box.
        by_style: dict[tuple[int, float], tuple[QColor, list[int]]] = {}
        for i, (color, width) in self._outlines.items():
            if self._shown[i]:
                by_style.setdefault((color.rgba(), width), (color, []))[1].append(i)
        for (_rgba, width), (color, indices) in by_style.items():
            half = width / 2
            left_i, top_i = left[indices] + half, top[indices] + half
            width_i = np.maximum(right[indices] - left[indices] - width, 1.0)
            height_i = np.maximum(bottom[indices] - top[indices] - width, 1.0)
            boxes = list(map(QRectF, left_i.tolist(), top_i.tolist(), width_i.tolist(),
                             height_i.tolist()))
            for pen in (QPen(HALO, width + 2.0), QPen(color, width)):
                pen.setJoinStyle(Qt.PenJoinStyle.MiterJoin)
                painter.setPen(pen)
                painter.drawRects(boxes)

    def _paint_labels(self, painter, room) -> None:
        """Each (index, box) in `room` gets its name, elided to the box, dark or light on its fill."""
        metrics = QFontMetricsF(painter.font())
        if metrics.height() > 0:
            for i, box in room:
                fill = self._fills[i]
                dark = self._alpha[i] > 140 and fill.lightnessF() < 0.55
                painter.setPen(QColor("white") if dark else QColor(20, 20, 20))
                text = metrics.elidedText(self.names[i], Qt.TextElideMode.ElideRight,
                                          box.width() - 4)
                painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)

    # --- pointer (pyqtgraph delivers these in item = data coordinates) --------------------

    def hoverEvent(self, event):
        """Report the rectangle under the pointer, or None when it leaves."""
        if self.on_hover is None:
            return
        if event.isExit():
            self.on_hover(None)
            return
        pos = event.pos()
        self.on_hover(self.name_at(pos.x(), pos.y()))

    def mouseClickEvent(self, event):
        """Report a left click with the rectangle under it (None on empty space)."""
        if self.on_click is None or event.button() != Qt.MouseButton.LeftButton:
            return
        pos: QPointF = event.pos()
        name = self.name_at(pos.x(), pos.y())
        if name is not None:
            event.accept()
        self.on_click(name, event.modifiers())


def pick_fills(fills: list, rows) -> list:
    """`fills[i]` for each i in `rows` (an array of indices), taken in C: a comprehension over
    62,000 rows took 10 ms of the GUI thread."""
    if len(rows) == 0:
        return []
    picked = operator.itemgetter(*np.asarray(rows).tolist())(fills)
    return list(picked) if len(rows) > 1 else [picked]
