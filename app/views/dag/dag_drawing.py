"""What the DAG view draws for one layout, made off the GUI thread: node centres, each edge's
path, the edges merged per band of layers, the scene's bounds and the overview's thumbnail.

Everything here is plain data, QPainterPath and QImage, which a worker thread may build (no
widget, no scene); the view then only adds node items, in slices, and hands the rest to Qt.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np
from PySide6.QtCore import QPointF, QRectF, QSize
from PySide6.QtGui import QColor, QImage, QPainter, QPainterPath, QPen

from slabscope.app.views.dag.dag_layout import MIN_ROOM, NODE_HEIGHT, DagLayout
from slabscope.app.views.dag.dag_minimap import BACKGROUND as THUMBNAIL_BACKGROUND, MAX_SIZE, MIN_SIDE

ARROW_LENGTH = 7.0
ARROW_SPREAD = math.radians(28)
BAND_LAYERS = 12              # layers per edge item: the unit the scene culls when painting
NODE_BAND_LAYERS = 24         # layers per item of boxes drawn together (far fewer calls)
SCENE_MARGIN = 40.0           # scene units around the drawing

# Mid greys, lighter than any text: they show the drawing's shape without taking a reader's
# (or OCR's) eye off the labels they pass.
NODE_BORDER = QColor("#CBD1DB")
EDGE_COLOR = QColor("#AAB2C0")


@dataclass(frozen=True)
class DrawnDag:
    """A layout ready to draw: node centres `x`, `y`; per edge
    `(source, destination, band, path)`; per band the union of its edges' paths and its nodes
    with their boxes; the scene's `bounds`; the overview's `thumbnail`; how many edges each
    band has (`band_edges`), the bounds of each band's boxes (`box_bounds`), and the edges'
    sources, destinations and bands as rows of an array (`edge_ends`), for a hover's lookups."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    edges: tuple[tuple[int, int, int, QPainterPath], ...]
    bands: dict[int, QPainterPath]
    boxes: dict[int, tuple[tuple[int, ...], list[QRectF]]]
    bounds: QRectF
    thumbnail: QImage
    band_edges: dict[int, int] = field(default_factory=dict)
    box_bounds: dict[int, QRectF] = field(default_factory=dict)
    edge_ends: np.ndarray = field(default_factory=lambda: np.zeros((3, 0), np.int64))


def draw_dag(successors, widths, layout: DagLayout) -> DrawnDag:
    """`layout` (of nodes with direct `successors` and box `widths`) turned into paths, bounds
    and a thumbnail: one flow, layers top to bottom, never layout."""
    edges = []
    bands: dict[int, QPainterPath] = {}
    pairs = [(v, s) for v in range(len(successors)) for s in successors[v]]
    for k, ((src, dst), points) in enumerate(zip(pairs, layout.edge_points)):
        path = stub_path(points) if k in layout.stubs else edge_path(points)
        band = layout.layer[src] // BAND_LAYERS
        edges.append((src, dst, band, path))
        bands.setdefault(band, QPainterPath()).addPath(path)
    boxes: dict[int, tuple[list[int], list[QRectF]]] = {}
    for i, (x, y, w) in enumerate(zip(layout.x, layout.y, widths)):
        indices, rects = boxes.setdefault(layout.layer[i] // NODE_BAND_LAYERS, ([], []))
        indices.append(i)
        rects.append(QRectF(x - w / 2, y - NODE_HEIGHT / 2, w, NODE_HEIGHT))
    boxes = {band: (tuple(indices), rects) for band, (indices, rects) in boxes.items()}
    box_bounds = {}
    for band, (_indices, rects) in boxes.items():
        box_bounds[band] = QRectF()
        for rect in rects:
            box_bounds[band] = box_bounds[band].united(rect)
    bounds = QRectF()
    if layout.x:  # the node items' bounding boxes (2 units round each box)
        bounds = QRectF(QPointF(min(x - w / 2 for x, w in zip(layout.x, widths)) - 2,
                                min(layout.y) - NODE_HEIGHT / 2 - 2),
                        QPointF(max(x + w / 2 for x, w in zip(layout.x, widths)) + 2,
                                max(layout.y) + NODE_HEIGHT / 2 + 2))
    for path in bands.values():
        bounds = bounds.united(path.controlPointRect())
    bounds = bounds.adjusted(-SCENE_MARGIN, -SCENE_MARGIN, SCENE_MARGIN, SCENE_MARGIN)
    drawn = DrawnDag(layout.x, layout.y, tuple(edges), bands, boxes, bounds, QImage(),
                     Counter(band for _src, _dst, band, _path in edges), box_bounds,
                     np.array([e[:3] for e in edges], dtype=np.int64).reshape(-1, 3).T)
    return replace(drawn, thumbnail=thumbnail(drawn))


def thumbnail(drawn: DrawnDag) -> QImage:
    """The whole drawing shrunk into the overview's box (aspect kept): edges as hairlines, nodes
    as plain boxes in their border's colour, as the view draws them when they are that small."""
    rect = drawn.bounds
    if rect.isEmpty():
        return QImage()
    scale = min(MAX_SIZE.width() / rect.width(), MAX_SIZE.height() / rect.height())
    size = QSize(max(MIN_SIDE, round(rect.width() * scale)),
                 max(MIN_SIDE, round(rect.height() * scale)))
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(THUMBNAIL_BACKGROUND)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    # Centred like the minimap's target rectangle.
    painter.translate((size.width() - rect.width() * scale) / 2,
                      (size.height() - rect.height() * scale) / 2)
    painter.scale(scale, scale)
    painter.translate(-rect.left(), -rect.top())
    pen = QPen(EDGE_COLOR, 0.6)
    pen.setCosmetic(True)
    painter.setPen(pen)
    for path in drawn.bands.values():
        painter.drawPath(path)
    painter.setPen(QPen(NODE_BORDER, 0))
    painter.setBrush(NODE_BORDER)
    for _, rects in drawn.boxes.values():
        painter.drawRects(rects)
    painter.end()
    return image


def edge_path(points) -> QPainterPath:
    """From the bottom of the source box through the waypoints to the top of the destination,
    as S-curves between rows and straight down through each row it crosses (in the lane beside
    the boxes the layout kept for it, so it never runs over a label), with an arrowhead."""
    (x0, y0), (x1, y1) = points[0], points[-1]
    half = NODE_HEIGHT / 2
    path = QPainterPath(QPointF(x0, y0 + half))
    for bx, by in [*points[1:-1], (x1, y1)]:
        ax, ay = path.currentPosition().x(), path.currentPosition().y()
        bend = (by - half - ay) / 2
        path.cubicTo(ax, ay + bend, bx, by - half - bend, bx, by - half)
        if (bx, by) != (x1, y1):
            path.lineTo(bx, by + half)
    _arrowhead(path, x1, y1 - half)
    return path


def stub_path(points) -> QPainterPath:
    """An edge too long to route, drawn as its two ends: a short line out of the source and an
    arrow into the destination (hovering either node still highlights the whole relation)."""
    (x0, y0), (x1, y1) = points[0], points[-1]
    reach = MIN_ROOM * 0.7
    path = QPainterPath(QPointF(x0, y0 + NODE_HEIGHT / 2))
    path.lineTo(x0, y0 + NODE_HEIGHT / 2 + reach)
    end_y = y1 - NODE_HEIGHT / 2
    path.moveTo(x1, end_y - reach)
    path.lineTo(x1, end_y)
    _arrowhead(path, x1, end_y)
    return path


def _arrowhead(path: QPainterPath, x: float, y: float) -> None:
    # Curves enter vertically, so the head points straight down: two strokes either side.
    for side in (-1, 1):
        path.moveTo(x + side * ARROW_LENGTH * math.sin(ARROW_SPREAD),
                    y - ARROW_LENGTH * math.cos(ARROW_SPREAD))
        path.lineTo(x, y)
