"""The DAG panel: a layered drawing of the graph's nodes, with hover highlights.

Hovering a node colours its ancestors and descendants, dims the rest and tells the session, so
the other panels highlight the buffers that node uses; hovering or selecting a buffer elsewhere
colours that buffer's uses here.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontInfo, QFontMetrics, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsPathItem, QGraphicsRectItem, QGraphicsScene,
                               QGraphicsSimpleTextItem, QGraphicsView, QMenu, QStackedWidget)

from slabscope.app.state.heap import freeze_large
from slabscope.app.views.common import palette
from slabscope.app.views.dag.dag_drawing import EDGE_COLOR, NODE_BORDER, NODE_HEIGHT, DrawnDag
from slabscope.app.views.dag.dag_fold_layout import FoldLayouts
from slabscope.app.views.dag.dag_folding import Folding, fold, toggled
from slabscope.app.views.dag.dag_layout import MIN_ROOM
from slabscope.app.views.common.buffer_names import buffer_users
from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.dag.dag_legend import PEAK_COLOUR, DagLegend, ramp_colour
from slabscope.app.views.dag.dag_memory import (BY_KIND, BY_LIVE, COLOURING_NAMES, COLOURINGS,
                                                NodeMemory,
                                                live_at_node)
from slabscope.app.views.dag.dag_minimap import DagMinimap
from slabscope.app.views.dag.dag_prepared import (LINE_GAP, DrawingPreparer, box_name, label_fonts,
                                                  op_line, opening_folding, prepared_dag)
from slabscope.app.views.timeline.live_bytes_view import graph_is_time_chain

TEXT_MIN_SCALE = 0.6          # below this zoom a 14 px label is under 9 px tall: draw plain boxes
SHAPE_MIN_PIXELS = 9.0        # boxes shorter than this on screen lose their border and corners
NO_TEXT, NAME_ONLY, OP_AND_NAME = "none", "name", "op and name"  # what a box shows (`_text_at`)
NO_PEN = QPen(Qt.PenStyle.NoPen)  # one pen for every node item (made from the enum per item)
ZOOM_STEP = 1.25
MAX_FIT_SCALE = 1.5           # small graphs are enlarged this far at most, so boxes stay modest
READABLE_PIXELS = 14          # the text height labels open at (OCR misreads many at 12)
TOP_ROOM = 6.0                # scene units over the top row of boxes in a graph's first view
EDGE_LABEL_SCALE = 1.2        # zoomed in this far, edges show their tensor's shape or bytes
MEMORY_BINS = 8               # steps of the memory colour scale (boxes drawn a colour at a time)
BAR_HEIGHT = 3.0              # scene units of a box's memory bar, along its bottom
BAR_INSET = 1.5               # ... above the box's bottom edge: as far from the text as it goes
FIRST_NODES = 200             # node items added at once (~6 ms); a larger graph's come in slices
SLICE_NODES = 50              # node items added between two looks at the clock
SLICE_SECONDS = 0.02          # GUI time one slice of node items may take
EDGE_MARGIN = 12.0            # scene units round an edge band's control points: its arrowheads, pen
HIGHLIGHT_WIDTH = 2.2         # pixels of an ancestor or descendant edge
THIN_EDGES = 300              # past this many edges, zoomed-out edges are drawn faint and thin
THIN_SCALE = 0.3              # ... below this zoom

NODE_FILL = QColor("#ECEFF4")
TEXT_COLOR = QColor("#1D2330")
NAME_COLOR = QColor("#4A5365")  # a box's name after its op: softer, still dark on the pale fill
SELECTED_BORDER = QColor("#111111")
BRACKET_GAP = 5.0             # scene units between a selected or live-peak box and its brackets
BRACKET_WIDTH = 3.5
CLICK_SLOP = 4                # pixels the pointer may move between press and release of a click
BACKGROUND = QColor("#FFFFFF")
EDGE_LABEL_COLOR = QColor("#5B6475")


def _best_shift(shifts: np.ndarray, whole: np.ndarray) -> float:
    """Of the view's candidate `shifts`, the one that shows the most boxes whole (`whole`: a
    row per shift, a column per box), the least far of those."""
    counts = whole.sum(axis=1)
    return float(shifts[max(range(len(shifts)), key=lambda k: (counts[k], -abs(shifts[k])))])


class NodeItem(QGraphicsRectItem):
    """One node's box and label; its colour comes from the view's current highlight.

    A rectangle item only for its bounds and shape, which Qt then answers without calling
    Python (the scene asks for them tens of thousands of times on a large graph)."""

    def __init__(self, view: "DagView", index: int, name: str, op: str | None, width: float):
        reach = BRACKET_GAP + BRACKET_WIDTH  # a selected or live-peak box's brackets reach out
        super().__init__(-width / 2 - reach, -NODE_HEIGHT / 2 - 2, width + 2 * reach,
                         NODE_HEIGHT + 4)
        self.setPen(NO_PEN)
        self.view, self.index, self.name = view, index, name
        self.box = QRectF(-width / 2, -NODE_HEIGHT / 2, width, NODE_HEIGHT)
        self.label = box_name(name, op)
        self.label_room = 0.0  # scene width an exported label may take, centred on the box
        self.op_label = op_line(name, op)  # before the name, unless the name says it
        self.setAcceptHoverEvents(True)
        self.setZValue(1)
        # While boxes are too small for a label, their band draws them all (`NodeBand`).
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, view.boxes_banded)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        fill, border, text = self.view.node_colours(self.index)
        detail = option.levelOfDetailFromTransform(painter.worldTransform())
        if detail * NODE_HEIGHT < SHAPE_MIN_PIXELS:
            # Too small for corners or a border to show: a plain box in the border's colour.
            painter.fillRect(self.box, self.view.plain_colour(self.index))
            return
        painter.setPen(QPen(border, 1.2))
        painter.setBrush(fill)
        painter.drawRoundedRect(self.box, 6, 6)
        mark = SELECTED_BORDER if self.index == self.view.selected_index else \
            PEAK_COLOUR if self.index == self.view.peak_index else None
        if mark is not None:
            # Brackets beside the box, not a heavy frame round it: a frame this close to the
            # text hides it from OCR.
            painter.setPen(QPen(mark, BRACKET_WIDTH, Qt.PenStyle.SolidLine,
                                Qt.PenCapStyle.FlatCap))
            top, bottom = self.box.top() - 1, self.box.bottom() + 1
            for x in (self.box.left() - BRACKET_GAP, self.box.right() + BRACKET_GAP):
                painter.drawLine(QPointF(x, top), QPointF(x, bottom))
        bar = self.view.bar_fraction(self.index)
        if bar > 0:  # the node's bytes as a length, readable without the colour scale
            painter.fillRect(QRectF(self.box.left() + 5, self.box.bottom() - BAR_HEIGHT - BAR_INSET,
                                    max(1.0, (self.box.width() - 10) * bar), BAR_HEIGHT),
                             BAR_COLOUR)
        drawn = self._text_at(detail)
        if drawn == NAME_ONLY:
            # A picture has no zoom to read labels by: draw the name at the least legible size,
            # cut to the room it has.
            font = QFont(self.view.label_font)
            font.setPixelSize(max(1, round(font.pixelSize() * TEXT_MIN_SCALE / detail)))
            painter.setFont(font)
            # The label may pass its box into the room beside it (`_give_labels_room`).
            room = max(self.box.width() - 4, self.label_room)
            label = QFontMetrics(font).elidedText(self.name, Qt.TextElideMode.ElideRight,
                                                  int(room))
            wide = QFontMetrics(font).horizontalAdvance(label) + 4
            if wide > self.box.width():  # the box grows round its label
                area = QRectF(self.box.center().x() - wide / 2, self.box.top(), wide,
                              self.box.height())
                painter.drawRoundedRect(area, 6, 6)
            else:
                area = self.box
            painter.setPen(text)
            painter.drawText(area, Qt.AlignmentFlag.AlignCenter, label)
        elif drawn == OP_AND_NAME:
            self._draw_line(painter, text)

    def _text_at(self, detail: float) -> str:
        """What text the box shows at zoom `detail`: none (too small, or below the readable
        size on screen), the name alone (an export below that size) or the op and name."""
        if detail * NODE_HEIGHT < SHAPE_MIN_PIXELS:
            return NO_TEXT
        if detail >= TEXT_MIN_SCALE:
            return OP_AND_NAME
        return NAME_ONLY if self.view.exporting else NO_TEXT

    def _draw_line(self, painter: QPainter, text: QColor) -> None:
        """The op, then the name in a softer colour, on one line centred above the bar."""
        area = QRectF(self.box)
        area.setBottom(self.box.bottom() - BAR_HEIGHT - BAR_INSET)
        op_font, name_font = self.view.op_font, self.view.label_font
        op_width = QFontMetrics(op_font).horizontalAdvance(self.op_label) if self.op_label else 0
        name_width = QFontMetrics(name_font).horizontalAdvance(self.label)
        gap = LINE_GAP if self.op_label else 0.0
        left = self.box.center().x() - (op_width + gap + name_width) / 2
        flags = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
        if self.op_label:
            painter.setPen(text)
            painter.setFont(op_font)
            painter.drawText(QRectF(left, area.top(), op_width + 1, area.height()), flags,
                             self.op_label)
        name = QColor(NAME_COLOR)
        name.setAlphaF(text.alphaF())  # dimmed with the rest of the box
        painter.setPen(name if self.op_label else text)
        painter.setFont(name_font)
        painter.drawText(QRectF(left + op_width + gap, area.top(), name_width + 1, area.height()),
                         flags, self.label)

    def drawn_lines(self, detail: float) -> tuple[str, ...]:
        """The lines of text `paint` draws in the box at zoom `detail` (an export's small
        labels are cut to their room, so their ends may differ)."""
        drawn = self._text_at(detail)
        if drawn == NAME_ONLY:
            return (self.name,)
        if drawn == OP_AND_NAME:
            return tuple(line for line in (self.label, self.op_label) if line)
        return ()

    def hoverEnterEvent(self, event) -> None:
        if not self.toolTip():  # written when first needed: 10,000 of them cost a stall up front
            self.setToolTip(self.view.tooltip(self.index))
        self.view.hover_item(self, True)

    def hoverLeaveEvent(self, event) -> None:
        self.view.hover_item(self, False)


class NodeBand(QGraphicsItem):
    """The boxes of one band of layers, drawn together while the zoom leaves them too small
    for corners or labels: one call per colour instead of one item's paint per node."""

    def __init__(self, view: "DagView", indices: tuple[int, ...], boxes: list[QRectF],
                 bounds: QRectF):
        super().__init__()
        self.view, self.indices, self.boxes = view, indices, boxes
        self.bounds = bounds.adjusted(-2, -2, 2, 2)  # `bounds`: the boxes', from the worker
        self.setZValue(1)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)  # the node items take the pointer

    def boundingRect(self) -> QRectF:
        return self.bounds

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if not self.view.boxes_banded:
            return
        painter.setPen(Qt.PenStyle.NoPen)
        colours, keys = self.view.plain_colours()
        if not keys:
            painter.setBrush(colours[0])
            painter.drawRects(self.boxes)
            return
        groups: list[list[QRectF]] = [[] for _ in colours]
        for i, box in zip(self.indices, self.boxes):
            groups[keys.get(i, 0)].append(box)
        for colour, boxes in zip(colours, groups):
            if boxes:
                painter.setBrush(colour)
                painter.drawRects(boxes)


class EdgePathItem(QGraphicsPathItem):
    """A path item whose bounds are its path's control points plus a margin: a stock path item
    strokes the whole path to find its bounds, which for thousands of curves takes longer than
    drawing them."""

    def __init__(self):
        super().__init__()
        self._bounds = QRectF()

    def setPath(self, path: QPainterPath) -> None:
        self.prepareGeometryChange()
        self._bounds = path.controlPointRect().adjusted(-EDGE_MARGIN, -EDGE_MARGIN,
                                                        EDGE_MARGIN, EDGE_MARGIN)
        super().setPath(path)

    def boundingRect(self) -> QRectF:
        return self._bounds

    def shape(self) -> QPainterPath:
        shape = QPainterPath()
        shape.addRect(self._bounds)  # edges take no clicks: the nodes do
        return shape


class EdgeLayer:
    """Edges drawn in one colour, one path item per band of layers, so that the scene's index
    skips the bands out of view instead of stroking every edge of a large graph on each paint."""

    def __init__(self, scene: QGraphicsScene, colour: QColor, width: float, z: float,
                 cached: bool = True):
        self.scene, self.colour, self.width, self.z = scene, colour, width, z
        self.cached = cached
        self.items: dict[int, QGraphicsPathItem] = {}
        self.alpha, self.thinning = 255, 1.0

    def show(self, banded_paths) -> None:
        """Draw exactly these `(band, path)` edges."""
        merged: dict[int, QPainterPath] = {}
        for band, path in banded_paths:
            merged.setdefault(band, QPainterPath()).addPath(path)
        self.show_bands(merged)

    def show_bands(self, merged: dict[int, QPainterPath]) -> None:
        """Draw exactly these edges, already merged into one path per band."""
        for band in set(self.items) - set(merged):
            self.scene.removeItem(self.items.pop(band))
        for band, path in merged.items():
            if band not in self.items:
                item = EdgePathItem()
                pen = QPen(self.colour, self.width if self.thinning == 1.0 else 0.6)
                pen.setCosmetic(True)  # stays one line wide however far the user zooms out
                item.setPen(pen)
                item.setOpacity(self.alpha / 255 * self.thinning)
                item.setZValue(self.z)
                # Antialiased curves are costly to stroke; a cached pixmap survives hover repaints
                # (highlight layers change their paths on every hover, so caching them only costs).
                if self.cached:
                    item.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
                self.scene.addItem(item)
                self.items[band] = item
            self.items[band].setPath(path)

    def set_alpha(self, alpha: int) -> None:
        """Fade (or restore) every edge of this layer (by opacity, which keeps the cached pixmap)."""
        self.alpha = alpha
        for item in self.items.values():
            item.setOpacity(alpha / 255 * self.thinning)

    def set_width(self, width: float) -> None:
        """Stroke the edges `width` pixels wide from now on."""
        if width == self.width:
            return
        self.width = width
        for item in self.items.values():
            pen = item.pen()
            pen.setWidthF(width if self.thinning == 1.0 else 0.6)
            item.setPen(pen)

    def set_thin(self, thin: bool) -> None:
        """Draw the edges faint and hairline (many edges, zoomed out) or at their full weight."""
        thinning = 0.45 if thin else 1.0
        if thinning == self.thinning:
            return
        self.thinning = thinning
        for item in self.items.values():
            pen = item.pen()
            pen.setWidthF(0.6 if thin else self.width)
            item.setPen(pen)
        self.set_alpha(self.alpha)


class EdgeLabels(QGraphicsItem):
    """Each edge's tensor shape or bytes beside its start, drawn only zoomed in past
    `EDGE_LABEL_SCALE` and only for the edges in the painted area (one item for them all)."""

    def __init__(self, view: "DagView", anchors: np.ndarray, labels: tuple[str, ...],
                 bounds: QRectF):
        super().__init__()
        self.view, self.anchors, self.labels, self.bounds = view, anchors, labels, bounds
        self.setZValue(0.8)
        self.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
        self.setAcceptHoverEvents(False)

    def boundingRect(self) -> QRectF:
        return self.bounds

    def paint(self, painter: QPainter, option, widget=None) -> None:
        if option.levelOfDetailFromTransform(painter.worldTransform()) < EDGE_LABEL_SCALE:
            return
        area = option.exposedRect
        x, y = self.anchors
        shown = np.flatnonzero((x >= area.left() - 200) & (x <= area.right())
                               & (y >= area.top() - 20) & (y <= area.bottom() + 20))
        painter.setFont(self.view.edge_font)
        painter.setPen(EDGE_LABEL_COLOR)
        ascent = QFontMetrics(self.view.edge_font).ascent()
        for k in shown.tolist():
            if self.labels[k]:
                painter.drawText(QPointF(x[k] + 4, y[k] + ascent / 2), self.labels[k])


class DagView(QGraphicsView):
    """The session's graph as layered boxes and arrows, one flow top to bottom; wheel or +/-
    zooms, drag or arrows pan, Ctrl+0 fits the graph in view, M switches what colours the boxes,
    O hides or shows the overview."""

    sigOverviewChanged = Signal(bool)  # the overview switched on (True) or off

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.label_font, self.op_font = label_fonts()
        self.setScene(QGraphicsScene(self))
        self.setBackgroundBrush(BACKGROUND)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        # The overview replaces scroll bars (which would also end up in exported pictures).
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.minimap = DagMinimap(self)
        self.edge_font = QFont(self.label_font)
        self.edge_font.setPointSizeF(7.5)
        self._exporting = False
        self.legend = DagLegend(self)
        self.colouring = BY_LIVE
        self.memory: NodeMemory | None = None  # of the session's graph (None: no buffers)
        self.peak_index: int | None = None     # the drawn node showing the live-peak node
        self._values: list[int] = []           # per drawn node, the bytes its colour scales by
        self._fill_key: list[int] = []         # per drawn node, its index into `_fills`
        self._fills: list[QColor] = [NODE_FILL]
        self._kinds: list[tuple[str, QColor]] = []
        self._edge_labels: EdgeLabels | None = None
        self._peak_tag: QGraphicsItem | None = None
        self._opened_on_peak = False  # the view was opened on the live peak (a plan existed)
        self.setResizeAnchor(QGraphicsView.ViewportAnchor.AnchorViewCenter)
        self._place_legend()
        self._items: list[NodeItem] = []
        self._drawn: DrawnDag | None = None
        self._edge_paths: tuple[tuple[int, int, int, QPainterPath], ...] = ()  # src, dst, band, path
        self._node_buffers: tuple[tuple[str, ...], ...] = ()
        self._widths: tuple[float, ...] = ()
        self._pending = 0            # index of the next node item to add (all added: its count)
        self._build_timer = QTimer(self)
        self._build_timer.setInterval(1)  # not 0: a zero timer may run again before the window repaints
        self._build_timer.timeout.connect(self._add_slice)
        self._user_zoomed = False    # the user zoomed or went to a node since the view opened
        self._fitted = False         # the user asked for Fit: a resize fits again
        self._bands: list[NodeBand] = []
        self.boxes_banded = False    # boxes too small for labels: drawn by band, not by node
        self._plain: tuple[list[QColor], dict[int, int]] | None = None  # see plain_colours
        # Folded into groups (None: every node drawn); a hovered group is this view's alone,
        # since the session's hover names real nodes.
        self._folding: Folding | None = None
        self._graph_seen = None      # the session graph last drawn (a new one may open folded)
        self._keep_in_place = None   # (real node, viewport point): a toggled group stays put
        self._folded_prepared = None   # (folding, its PreparedDag)
        self._fold_layouts = FoldLayouts(self)  # an opened group is laid out off this thread
        self._fold_layouts.sigReady.connect(self._fold_laid_out)
        self._hovered_group: int | None = None
        self._ancestors: set[int] = set()
        self._descendants: set[int] = set()
        self._uses: set[int] = set()
        self._hovered: int | None = None
        self._base_edges = EdgeLayer(self.scene(), EDGE_COLOR, 1.2, -1)
        self._ancestor_edges = EdgeLayer(self.scene(), palette.ANCESTOR, HIGHLIGHT_WIDTH, 0.5,
                                         cached=False)
        self._descendant_edges = EdgeLayer(self.scene(), palette.DESCENDANT, HIGHLIGHT_WIDTH, 0.5,
                                           cached=False)
        # Laid out and drawn by the loading worker, for the shape this view last had.
        self._preparer = next((p for p in session.prepare_graphs if isinstance(p, DrawingPreparer)),
                              None)
        if self._preparer is None:
            self._preparer = DrawingPreparer()
            session.prepare_graphs.append(self._preparer)
        session.sigGraphChanged.connect(self.rebuild)
        session.sigHoverNode.connect(self._refresh_highlight)
        session.sigHoverBuffer.connect(self._refresh_highlight)
        session.sigSelectionChanged.connect(self._refresh_highlight)
        session.selection_model.sigNodeSelected.connect(self._node_selected)
        session.selection_model.sigReveal.connect(self.reveal)
        session.sigPlanChanged.connect(self._plan_changed)
        self.selected_index: int | None = None
        self.skipped_chain = False
        self._stale = False  # the graph was not drawn: the page was behind the live bytes
        self._press_at = None
        if session.graph is not None:
            self.rebuild()

    # --- queries for tests and other code --------------------------------------------------

    def highlighted_ancestors(self) -> set[str]:
        """Names of the nodes (or groups) drawn as ancestors of the hovered node."""
        return {self.shown_graph().nodes[i].name for i in self._ancestors}

    def highlighted_descendants(self) -> set[str]:
        """Names of the nodes (or groups) drawn as descendants of the hovered node."""
        return {self.shown_graph().nodes[i].name for i in self._descendants}

    def highlighted_uses(self) -> set[str]:
        """Names of the nodes (or groups) drawn as uses of the hovered or selected buffer."""
        return {self.shown_graph().nodes[i].name for i in self._uses}

    def shown_graph(self):
        """The graph drawn: the session's, or its folded form."""
        return self._folding.graph if self._folding is not None else self.session.graph

    @property
    def folding(self) -> Folding | None:
        """The groups drawn folded and opened, or None when every node is drawn."""
        return self._folding

    def _drawn_index(self, name: str | None) -> int | None:
        """The drawn node showing node (or group) `name`: a folded node's group."""
        shown, graph = self.shown_graph(), self.session.graph
        if name is None or shown is None:
            return None
        if name in shown.node_index:
            return shown.node_index[name]
        if self._folding is not None and name in graph.node_index:
            return self._folding.drawn_of[graph.node_index[name]]
        return None

    @property
    def building(self) -> bool:
        """Whether node items are still being added (a large graph's arrive in slices), or an
        opened or closed group is being laid out."""
        return self._build_timer.isActive() or self._fold_layouts.pending

    def simulate_hover(self, name: str | None) -> None:
        """Do what moving the pointer onto node `name` (None: off every node) does."""
        self.session.hover_node(name)

    def labels_in_view(self) -> list[tuple[tuple[str, ...], QRectF]]:
        """Per node whose box lies wholly in the viewport, clear of the overview: the lines of
        text drawn in it (none when the zoom leaves boxes too small for text) and its box in
        viewport pixels."""
        shown = QRectF(self.viewport().rect())
        overview = self._overview_rect()
        scale = self.transform().m11()
        found = []
        for item in self._items:
            box = self.mapFromScene(item.mapToScene(item.box)).boundingRect().toRectF()
            if shown.contains(box) and not overview.intersects(box):
                found.append((item.drawn_lines(scale), box))
        return found

    def _overview_rect(self) -> QRectF:
        """The overview's box in viewport pixels (empty while it is hidden)."""
        if not self.minimap.isVisible():
            return QRectF()
        return QRectF(self.minimap.geometry().translated(-self.viewport().pos()))

    def _overview_in_scene(self) -> QRectF:
        """The overview's box in scene units, as the view shows it now (empty while hidden)."""
        overview = self._overview_rect()
        return overview if overview.isEmpty() else \
            self.mapToScene(overview.toRect()).boundingRect()

    def node_position(self, name: str) -> QPointF:
        """The scene position of node `name`'s centre (of its group's, when that is folded)."""
        i = self._drawn_index(name)
        if i is None:
            raise KeyError(name)
        return QPointF(self._drawn.x[i], self._drawn.y[i])

    # --- building ------------------------------------------------------------------------

    def rebuild(self) -> None:
        """Lay out the session's graph from scratch and fit it in view.

        Edges, bounds and the overview arrive drawn by the loading worker; node items are added
        at once for a small graph, and for a large one the rest in slices from a timer, so that
        the window never stops answering for long.
        """
        self._build_timer.stop()
        scene = self.scene()
        for item in self._items + self._bands + [self._edge_labels, self._peak_tag]:
            if item is not None:
                scene.removeItem(item)
        self._edge_labels = self._peak_tag = None
        self._items, self._bands, self._edge_paths, self._drawn, self._pending = [], [], (), None, 0
        self._ancestors, self._descendants, self._uses, self._hovered = set(), set(), set(), None
        self._hovered_group = None
        if self.session.graph is not self._graph_seen:
            # A new graph opens folded past FOLD_ABOVE nodes, as the loading worker laid it out.
            self._graph_seen = self.session.graph
            self._fold_layouts.cancel()
            new = self.session.graph
            self._folding = opening_folding(new) if new is not None and \
                not self._behind_live_bytes() and prepared_dag(new) is not None else None
        graph = self.shown_graph()
        self.selected_index = self._drawn_index(self.session.selection_model.node)
        self.skipped_chain = False
        if graph is None:
            scene.setSceneRect(QRectF())
            self._base_edges.show_bands({})
            self.minimap.rebuild(None)
            return
        self._stale = self._behind_live_bytes()
        if self._stale:
            # The central panel shows a chain of time steps as live bytes: the nodes are added
            # when this page comes forward, not on the GUI thread's turn that shows the graph.
            scene.setSceneRect(QRectF())
            self._base_edges.show_bands({})
            self.minimap.rebuild(None)
            return
        prepared = self._prepared()
        self.skipped_chain = prepared is None
        if self.skipped_chain:
            # Tens of thousands of time steps in a line say nothing (the central panel shows
            # live bytes instead) and would take seconds to lay out.
            scene.setSceneRect(QRectF())
            self.minimap.rebuild(None)
            self._base_edges.show_bands({})
            self.viewport().update()
            return
        drawn = prepared.drawing()
        self._drawn, self._widths = drawn, prepared.widths
        real = prepared_dag(self.session.graph) if self._folding is not None else prepared
        self._node_buffers = real.uses
        self.memory = real.memory
        self._colour_nodes()
        if prepared.edge_labels:
            self._edge_labels = EdgeLabels(self, _label_anchors(prepared.layout),
                                           prepared.edge_labels, drawn.bounds)
            scene.addItem(self._edge_labels)
        self._edge_paths = drawn.edges
        self._base_edges.show_bands(drawn.bands)
        self._ancestor_edges.show([])
        self._descendant_edges.show([])
        self._base_edges.set_alpha(255)
        for key, (indices, boxes) in drawn.boxes.items():
            band = NodeBand(self, indices, boxes, drawn.box_bounds[key])
            scene.addItem(band)
            self._bands.append(band)
        scene.setSceneRect(drawn.bounds)
        self.minimap.rebuild(drawn.thumbnail)
        if self.peak_index is not None:
            self._peak_tag = self._tag_peak()
        self.open_view()
        self._add_nodes(FIRST_NODES)
        if self._pending < len(graph.nodes):
            self._build_timer.start()
        self._refresh_highlight()

    def _behind_live_bytes(self) -> bool:
        """Whether the central panel (a `GraphPanel`, which hears of a new graph after this
        view) shows live bytes instead: it does for a chain of time steps."""
        graph = self.session.graph
        return isinstance(self.parentWidget(), QStackedWidget) and graph is not None \
            and graph_is_time_chain(graph)

    def showEvent(self, event) -> None:
        if self._stale and not self._behind_live_bytes():
            self.rebuild()
        super().showEvent(event)

    def _prepared(self):
        """The drawn graph's widths and layout: the loading worker's for the session's graph
        (computed here only for a graph set without loading); made here for a folded one."""
        if self._folding is None:
            return prepared_dag(self.session.graph)
        if self._folded_prepared is None or self._folded_prepared[0] is not self._folding:
            # The opening folding: laid out by the loading worker (else here, once).
            self._folded_prepared = (self._folding, prepared_dag(self._folding.graph))
        return self._folded_prepared[1]

    # --- memory ---------------------------------------------------------------------------

    def _colour_nodes(self) -> None:
        """Each drawn node's figure and fill under the current colouring; the live-peak node."""
        memory, folding = self.memory, self._folding
        count = len(self._drawn.x)
        self.peak_index = None
        if memory is None:
            self.colouring = BY_KIND
            self._values = []
        else:
            values = memory.values(self.colouring)
            if folding is None:
                self._values = list(values)
            else:  # a group holds what its nodes write, and the most that is live at any of them
                pick = max if self.colouring == BY_LIVE else sum
                self._values = [pick(values[v] for v in members) if members else 0
                                for members in folding.members]
            if memory.peak_node is not None:
                self.peak_index = (memory.peak_node if folding is None
                                   else folding.drawn_of[memory.peak_node])
        if self.colouring == BY_KIND:
            self._colour_by_kind(count)
        else:
            top = max(self._values, default=0) or 1
            self._fills = [ramp_colour(k / (MEMORY_BINS - 1)) for k in range(MEMORY_BINS)]
            self._fill_key = [round(v / top * (MEMORY_BINS - 1)) for v in self._values]
        self._plain = None
        self.legend.refresh()

    def _colour_by_kind(self, count: int) -> None:
        """Fills by the kind of the largest buffer each node writes (plain when it writes none)."""
        kinds = self.memory.kind if self.memory is not None else \
            (None,) * len(self.session.graph.nodes)
        if self._folding is not None:  # a group takes its first writing member's kind
            kinds = [next((kinds[v] for v in members if kinds[v]), None)
                     for members in self._folding.members]
        order: dict[str | None, int] = {None: 0}
        self._fill_key = [order.setdefault(kind, len(order)) for kind in kinds[:count]]
        self._kinds = [(kind, palette.KIND_COLORS.get(kind, palette.KIND_COLORS["other"]))
                       for kind in order if kind is not None]
        self._fills = [NODE_FILL] + [_tint(colour) for _, colour in self._kinds]

    def set_colouring(self, colouring: str) -> None:
        """Colour the boxes by `colouring` (one of `dag_memory.COLOURINGS`) and repaint."""
        if colouring == self.colouring or (colouring != BY_KIND and self.memory is None):
            self.legend.refresh()
            return
        self.colouring = colouring
        if self._drawn is not None:
            self._colour_nodes()
            for item in self._items:
                item.update()
            self.scene().update()

    def next_colouring(self) -> None:
        """Switch to the next colouring the graph has figures for."""
        offered = [c for c in COLOURINGS if c == BY_KIND or self.memory is not None]
        self.set_colouring(offered[(offered.index(self.colouring) + 1) % len(offered)])

    def scale_top(self) -> int:
        """The bytes at the dark end of the colour scale: the largest drawn figure."""
        return max(self._values, default=0)

    def kind_key(self) -> list[tuple[str, QColor]]:
        """The kinds the boxes are coloured by, with their colours."""
        return self._kinds

    def bar_fraction(self, index: int) -> float:
        """How much of drawn node `index`'s box its memory bar spans (0: no bar)."""
        if self.colouring == BY_KIND or not self._values:
            return 0.0
        top = self.scale_top()
        return self._values[index] / top if top else 0.0

    def value_of(self, index: int) -> int:
        """The bytes drawn node `index` is coloured by (0 when colouring by kind)."""
        return self._values[index] if self._values and self.colouring != BY_KIND else 0

    def _tag_peak(self) -> QGraphicsItem:
        """A tag on the top edge of the live-peak node's box, saying what it is, over a white
        patch so that an edge passing by does not cross its text."""
        text = QGraphicsSimpleTextItem("live peak")
        text.setFont(self.edge_font)
        text.setBrush(PEAK_COLOUR)
        area = text.boundingRect().adjusted(-3, 0, 3, 0)
        tag = QGraphicsRectItem(area)
        tag.setBrush(BACKGROUND)
        tag.setPen(NO_PEN)  # a frame this close to the box's text hides it from OCR
        text.setParentItem(tag)
        width = self._widths[self.peak_index]
        tag.setPos(self._drawn.x[self.peak_index] - width / 2 + 6,
                   self._drawn.y[self.peak_index] - NODE_HEIGHT / 2 - area.height() + 2)
        tag.setZValue(2)
        self.scene().addItem(tag)
        return tag

    def _group_text(self, drawn: int) -> str:
        """What folded group `drawn` holds, for the key while it is hovered."""
        members, memory = self._folding.members[drawn], self.memory
        written = sum(memory.written[v] for v in members)
        return (f"{len(members):,} nodes write {format_bytes(written)}; at most"
                f" {format_bytes(max(memory.live[v] for v in members))} live at their steps")

    def _live_text(self, index: int) -> str:
        """What is live at real node `index`'s step, for the key while it is hovered."""
        graph, memory = self.session.graph, self.memory
        live = live_at_node(graph, memory, index)
        largest = ", ".join(f"{graph.buffers[b].name} {format_bytes(graph.reserved[b])}"
                            for b in live[:3])
        more = ", …" if len(live) > 3 else ""
        return (f"step {memory.step[index]}: {format_bytes(memory.live[index])} live in "
                f"{len(live):,} buffers ({largest}{more}); "
                f"writes {format_bytes(memory.written[index])}")

    def _add_nodes(self, count: int) -> None:
        """Add the next `count` node items (fewer at the end)."""
        graph, drawn, scene = self.shown_graph(), self._drawn, self.scene()
        stop = min(self._pending + count, len(graph.nodes))
        for i in range(self._pending, stop):
            node = graph.nodes[i]
            item = NodeItem(self, i, node.name, node.op, self._widths[i])
            item.setPos(drawn.x[i], drawn.y[i])
            scene.addItem(item)
            self._items.append(item)
        self._pending = stop

    def _add_slice(self) -> None:
        """One timer tick's share of a large graph's node items."""
        start = time.perf_counter()
        total = len(self.shown_graph().nodes) if self.shown_graph() is not None else 0
        while self._pending < total and time.perf_counter() - start < SLICE_SECONDS:
            self._add_nodes(SLICE_NODES)
        if self._pending >= total:
            self._build_timer.stop()
            freeze_large(self.session.graph)  # the collector need not walk these items again

    def finish_building(self) -> None:
        """Add every node item not added yet, now (a picture must show the whole graph)."""
        if self.building:
            self._build_timer.stop()
            self._add_nodes(len(self.shown_graph().nodes))

    def tooltip(self, index: int) -> str:
        """Drawn node `index`'s name, op and the buffers it uses (a group's size and ops)."""
        folding = self._folding
        if folding is not None and folding.is_group(index):
            ops = Counter(self.session.graph.nodes[v].op or "?" for v in folding.members[index])
            shown = ", ".join(f"{op} ×{n}" for op, n in ops.most_common(6))
            return (f"{folding.graph.nodes[index].name}: a group of {len(folding.members[index]):,} "
                    f"nodes ({shown}{', …' if len(ops) > 6 else ''})\ndouble-click to open it")
        if folding is not None:
            index = folding.members[index][0]
        node = self.session.graph.nodes[index]
        buffers = self._node_buffers[index]
        shown = ", ".join(buffers[:12]) + (f" and {len(buffers) - 12} more" if len(buffers) > 12 else "")
        op = f" ({node.op})" if node.op else ""
        memory = ""
        if self.memory is not None:
            memory = (f"\nwrites {format_bytes(self.memory.written[index])}; "
                      f"{format_bytes(self.memory.live[index])} live at its step "
                      f"{self.memory.step[index]}")
        return f"{node.name}{op}\nuses: {shown or 'no buffers'}{memory}"

    # --- highlight -----------------------------------------------------------------------

    def plain_colours(self) -> tuple[list[QColor], dict[int, int]]:
        """The colours of boxes too small for a border, and for each node not in the first
        colour, the index of its colour (worked out once per highlight, a set at a time:
        the ancestors of a late node are nearly the whole graph)."""
        if self._plain is None:
            dim = self._hovered is not None or bool(self._uses)
            plain = [NODE_BORDER if fill == NODE_FILL else _plain_of(fill) for fill in self._fills]
            colours = [_dim(colour) if dim else colour for colour in plain]
            keys = {v: k for v, k in enumerate(self._fill_key) if k}
            hovered = {self._hovered} if self._hovered is not None else set()
            selected = {self.selected_index} if self.selected_index is not None else set()
            # Lowest precedence first, as `node_colours` and `plain_colour` rank them.
            for nodes, colour in ((self._uses, palette.HOVERED), (self._descendants, DESCENDANT_FILL),
                                  (self._ancestors, ANCESTOR_FILL), (hovered, palette.HOVERED),
                                  (selected, SELECTED_BORDER)):
                if nodes:
                    keys.update(dict.fromkeys(nodes, len(colours)))
                    colours.append(colour)
            self._plain = (colours, keys)
        return self._plain

    def plain_colour(self, index: int) -> QColor:
        """Node `index`'s colour as a box too small for a border: its border's colour, or its
        highlight's fill."""
        if index == self.selected_index:
            return SELECTED_BORDER
        fill, border, _ = self.node_colours(index)
        base = self._base_fill(index)
        if fill in (base, _dim(base)):  # not highlighted: the box's own colour, seen small
            return border if base == NODE_FILL else _plain_of(fill)
        return fill

    def _base_fill(self, index: int) -> QColor:
        """Drawn node `index`'s fill under the colouring, before any highlight."""
        return self._fills[self._fill_key[index]] if 0 <= index < len(self._fill_key) else NODE_FILL

    def node_colours(self, index: int) -> tuple[QColor, QColor, QColor]:
        """Fill, border and text colour of node `index` under the current highlight."""
        if index == self._hovered:
            return palette.HOVERED, NODE_BORDER, TEXT_COLOR
        if index in self._ancestors:
            return ANCESTOR_FILL, palette.ANCESTOR, TEXT_COLOR
        if index in self._descendants:
            return DESCENDANT_FILL, palette.DESCENDANT, TEXT_COLOR
        if index in self._uses:
            return palette.HOVERED, NODE_BORDER, TEXT_COLOR
        fill = self._base_fill(index)
        if self._hovered is not None or self._uses:
            return _dim(fill), _dim(NODE_BORDER), _dim(TEXT_COLOR)
        return fill, NODE_BORDER, TEXT_COLOR

    def _predecessors(self, graph) -> list[list[int]]:
        """Per node index, its direct predecessors (built once per graph)."""
        cached = getattr(self, "_predecessors_of", None)
        if cached is None or cached[0] is not graph:
            preds: list[list[int]] = [[] for _ in graph.nodes]
            for i, after in enumerate(graph.successors):
                for j in after:
                    preds[j].append(i)
            self._predecessors_of = cached = (graph, preds)
        return cached[1]

    def _refresh_highlight(self, *_):
        """Recompute what is highlighted from the session: a hovered node wins over buffers."""
        graph, shown = self.session.graph, self.shown_graph()
        self._ancestors, self._descendants, self._uses, self._hovered = set(), set(), set(), None
        self._plain = None
        hover_text, highlighting = self.legend.hover_text, self.highlighting
        self.legend.hover_text = ""
        if graph is None or self._drawn is None:
            if hover_text or highlighting:
                self.legend.update()
            return
        i = self._hovered_group if self._hovered_group is not None else \
            self._drawn_index(self.session.hovered_node)
        if self._hovered_group is not None and self.memory is not None:
            self.legend.hover_text = self._group_text(self._hovered_group)
        if i is not None:
            self._hovered = i
            # A walk from the node, not the graph's closure: that is quadratic in memory, and
            # a 200k-node graph cannot hold it.
            self._ancestors = _reached(self._predecessors(shown), i)
            self._descendants = _reached(shown.successors, i)
            hovered = self.session.hovered_node
            if self.memory is not None and hovered in graph.node_index:
                self.legend.hover_text = self._live_text(graph.node_index[hovered])
        else:
            names = ([self.session.hovered_buffer] if self.session.hovered_buffer
                     else list(self.session.selection))
            for name in names:
                if name in graph.buffer_index:
                    self._uses.update(graph.use_indices[graph.buffer_index[name]])
            if self._folding is not None:
                self._uses = {self._folding.drawn_of[u] for u in self._uses}
        self._draw_highlight_edges()
        self.scene().update()
        if self.legend.hover_text != hover_text or self.highlighting != highlighting:
            self.legend.update()

    def _draw_highlight_edges(self) -> None:
        if self._hovered is None:
            self._ancestor_edges.show([])
            self._descendant_edges.show([])
            self._base_edges.set_alpha(255 if not self._uses else palette.DIMMED_ALPHA * 2)
            return
        self._ancestor_edges.show_bands(self._edges_within(self._ancestors | {self._hovered}))
        self._descendant_edges.show_bands(self._edges_within(self._descendants | {self._hovered}))
        self._base_edges.set_alpha(palette.DIMMED_ALPHA * 2)

    def _edges_within(self, nodes: set[int]) -> dict[int, QPainterPath]:
        """The drawn edges between `nodes`, merged per band. A band whose edges all qualify
        reuses its merged path: the ancestors of a late node of a 10,000-node graph are nearly
        all of it, and merging its edges anew cost most of a hover. Which edges qualify is found
        with arrays, not a pass over 10,000 edges in Python."""
        drawn = self._drawn
        src, dst, band = drawn.edge_ends
        inside = np.zeros(len(drawn.x), dtype=bool)
        inside[np.fromiter(nodes, dtype=np.int64, count=len(nodes))] = True
        lit = inside[src] & inside[dst]
        counts = np.bincount(band[lit], minlength=1)
        merged: dict[int, QPainterPath] = {}
        for b in np.flatnonzero(counts).tolist():
            if counts[b] == drawn.band_edges[b]:
                merged[b] = drawn.bands[b]
                continue
            merged[b] = QPainterPath()
            for k in np.flatnonzero(lit & (band == b)).tolist():
                merged[b].addPath(drawn.edges[k][3])
        return merged

    def drawForeground(self, painter: QPainter, rect: QRectF) -> None:
        """In place of a chain of time steps, a line saying why it is not drawn."""
        if not self.skipped_chain:
            return
        painter.save()
        painter.resetTransform()
        painter.setPen(TEXT_COLOR)
        painter.drawText(self.viewport().rect(), Qt.AlignmentFlag.AlignCenter,
                         f"{len(self.session.graph.nodes):,} time steps in a chain: "
                         "not drawn (see live bytes over time)")
        painter.restore()

    @property
    def highlighting(self) -> bool:
        """Whether a hovered node or a hovered or selected buffer colours nodes now."""
        return self._hovered is not None or bool(self._uses)

    @property
    def exporting(self) -> bool:
        """Whether the view is drawn for a picture (no hover, no overview)."""
        return self._exporting

    def _place_legend(self) -> None:
        """The key strip across the top, the drawing's viewport below it."""
        height = self.legend.wanted_height()
        self.setViewportMargins(0, height, 0, 0)
        self.legend.setGeometry(0, 0, self.width(), height)
        self.legend.refresh()

    # --- navigation ----------------------------------------------------------------------

    def readable_scale(self) -> float:
        """The zoom at which the smaller of a box's two fonts is `READABLE_PIXELS` tall."""
        pixels = min(QFontInfo(self.label_font).pixelSize(), QFontInfo(self.op_font).pixelSize())
        return READABLE_PIXELS / max(1, pixels)

    def fit(self) -> None:
        """Show the whole graph (small graphs enlarged at most `MAX_FIT_SCALE`)."""
        rect = self.sceneRect()
        if rect.isEmpty():
            return
        self.resetTransform()
        view = self.viewport().rect()
        scale = min(view.width() / rect.width(), view.height() / rect.height(), MAX_FIT_SCALE)
        self.scale(scale, scale)
        self.centerOn(rect.center())
        self._user_zoomed, self._fitted = False, True
        self._zoom_changed()

    def open_view(self) -> None:
        """The view a graph opens at: the whole graph when its labels are readable that way,
        else labels at the smallest readable size on the live-peak node when a plan exists,
        or on the graph's start."""
        rect = self.sceneRect()
        if rect.isEmpty():
            return
        self.resetTransform()
        view = self.viewport().rect()
        whole = min(view.width() / rect.width(), view.height() / rect.height(), MAX_FIT_SCALE)
        readable = self.readable_scale()
        self._opened_on_peak = False
        if whole >= readable:
            self.scale(whole, whole)
            self.centerOn(rect.center())
        else:
            scale = readable
            self.scale(scale, scale)
            half_width, half_height = view.width() / 2 / scale, view.height() / 2 / scale
            if self.session.plan is not None and self.peak_index is not None:
                self._opened_on_peak = True
                self._open_around(self.peak_index)
            else:
                # The first layer at the top; its first node in the middle unless it all fits.
                start = min(range(len(self._drawn.y)), key=lambda i: (self._drawn.y[i], i))
                x = rect.center().x() if rect.width() <= 2 * half_width else min(
                    max(self._drawn.x[start], rect.left() + half_width), rect.right() - half_width)
                self.centerOn(x, rect.top() + half_height)
                self._top_on_a_row()
                if rect.width() > 2 * half_width:
                    self._shift_to_whole_boxes(start)
        self._user_zoomed = self._fitted = False
        self._zoom_changed()

    def _open_around(self, anchor: int) -> None:
        """Show node `anchor` whole, on the row of the view where the most boxes are whole with
        it: centred on its own row first, then on each row above or below it that keeps it in
        view (a training step's live peak sits where its neighbours are few and far apart), the
        nearest of the best (each placed as `_shift_to_whole_rows` and `_shift_to_whole_boxes`
        place it)."""
        x, y = self._drawn.x[anchor], self._drawn.y[anchor]
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        reach = shown.height() / 2 - NODE_HEIGHT
        rows = np.unique(np.asarray(self._drawn.y))
        offsets = sorted((float(r - y) for r in rows if abs(r - y) <= reach), key=abs)
        best, best_count = QPointF(x, y), -2  # the first try wins, though the node fit nowhere
        for offset in offsets or [0.0]:
            self.centerOn(x, y + offset)
            self._shift_to_whole_rows()
            self._shift_to_whole_boxes(anchor)
            count = self._whole_boxes(anchor)
            if count > best_count:
                best, best_count = self.mapToScene(self.viewport().rect()).boundingRect().center(), count
        self.centerOn(best)

    def _whole_boxes(self, anchor: int) -> int:
        """The boxes wholly in view, clear of the overview; -1 when node `anchor` is not one."""
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        x, y = np.asarray(self._drawn.x), np.asarray(self._drawn.y)
        half = np.asarray(self._widths) / 2
        whole = ((x - half >= shown.left()) & (x + half <= shown.right())
                 & (y - NODE_HEIGHT / 2 >= shown.top()) & (y + NODE_HEIGHT / 2 <= shown.bottom()))
        overview = self._overview_in_scene()
        if not overview.isEmpty():
            whole &= ~((x + half > overview.left()) & (x - half < overview.right())
                       & (y + NODE_HEIGHT / 2 > overview.top())
                       & (y - NODE_HEIGHT / 2 < overview.bottom()))
        return int(whole.sum()) if whole[anchor] else -1

    def _top_on_a_row(self) -> None:
        """Move the view down, less than a row, until its top edge sits just above a row of
        boxes: a row the edge cuts shows no label, and the room goes to a row at the bottom."""
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        tops = np.asarray(self._drawn.y) - NODE_HEIGHT / 2 - TOP_ROOM
        below = tops[tops >= shown.top()]
        if below.size:
            self.centerOn(shown.center().x(), shown.center().y() + float(below.min()) - shown.top())

    def _shift_to_whole_rows(self) -> None:
        """Move the view up or down by at most half a row, to where it shows the most rows of
        boxes whole (the fewest cut by its edges), the least far from where it is; a view that
        shows the margin above the first row (or below the last) moves to that row instead."""
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        tops = np.unique(np.asarray(self._drawn.y)) - NODE_HEIGHT / 2
        bottoms = tops + NODE_HEIGHT
        if shown.top() < tops[0] - TOP_ROOM:  # near the start: its first row at the top
            self._top_on_a_row()
            return
        if shown.bottom() > bottoms[-1] + TOP_ROOM:  # near the end: its last row at the bottom
            self.centerOn(shown.center().x(),
                          shown.center().y() - (shown.bottom() - bottoms[-1] - TOP_ROOM))
            return
        limit = (NODE_HEIGHT + MIN_ROOM) / 2
        shifts = np.concatenate(([0.0], tops - TOP_ROOM - shown.top(),
                                 bottoms + TOP_ROOM - shown.bottom()))
        shifts = shifts[np.abs(shifts) <= limit]
        d = shifts[:, None]
        whole = (tops >= shown.top() + d) & (bottoms <= shown.bottom() + d)
        self.centerOn(shown.center().x(), shown.center().y() + _best_shift(shifts, whole))

    def _shift_to_whole_boxes(self, anchor: int) -> None:
        """Move the view sideways, keeping node `anchor` whole in it and the view inside the
        drawing, to where it shows the most boxes of its rows whole and clear of the overview,
        the least far from where it is: a box the edge or the overview cuts shows no label."""
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        scene = self.sceneRect()
        x, y = np.asarray(self._drawn.x), np.asarray(self._drawn.y)
        half = np.asarray(self._widths) / 2 + BRACKET_GAP + BRACKET_WIDTH  # room for brackets
        near = ((y - NODE_HEIGHT / 2 >= shown.top()) & (y + NODE_HEIGHT / 2 <= shown.bottom())
                & (x + half >= shown.left() - shown.width())
                & (x - half <= shown.right() + shown.width()))
        lefts, rights = x[near] - half[near], x[near] + half[near]
        shifts = [[0.0], lefts - shown.left(), rights - shown.right()]
        self.minimap.refresh()  # shown or not at this zoom; it stays in its corner as we move
        overview, beside = self._overview_in_scene(), np.zeros(len(lefts), dtype=bool)
        if not overview.isEmpty():
            ys = y[near]
            beside = (ys + NODE_HEIGHT / 2 > overview.top()) & (ys - NODE_HEIGHT / 2 < overview.bottom())
            shifts += [rights[beside] - overview.left(), lefts[beside] - overview.right()]
        shifts = np.concatenate(shifts)
        low = max(x[anchor] + half[anchor] - shown.right(), scene.left() - shown.left())
        high = min(x[anchor] - half[anchor] - shown.left(), scene.right() - shown.right())
        shifts = shifts[(shifts >= low) & (shifts <= high)]
        if not shifts.size:
            return
        d = shifts[:, None]
        whole = (lefts >= shown.left() + d) & (rights <= shown.right() + d)
        if not overview.isEmpty():
            whole &= ~(beside & (lefts < overview.right() + d) & (rights > overview.left() + d))
        self.centerOn(shown.center().x() + _best_shift(shifts, whole), shown.center().y())

    def _plan_changed(self, *_) -> None:
        """A plan arrived: a view the user has not moved goes to the live peak."""
        moved = self._user_zoomed or self._fitted or self._opened_on_peak
        if not moved and self._drawn is not None:
            self.open_view()
        self.legend.refresh()

    def enter_export(self) -> None:
        """Drop the colour key and the overview from a picture, which shows every node."""
        self._fold_layouts.wait()  # a folding on its way is what the window would show
        self.finish_building()
        self._exporting = True
        self._give_labels_room()
        self.minimap.hide()
        self._place_legend()
        self.viewport().update()

    def _give_labels_room(self) -> None:
        """Let each exported label widen past its box (it is drawn larger than the box was
        sized for) up to half way to the next box of its row, or the scene's width alone."""
        rows: dict[float, list[NodeItem]] = {}
        for item in self._items:
            rows.setdefault(round(item.pos().y(), 1), []).append(item)
        width = self.sceneRect().width()
        for row in rows.values():
            row.sort(key=lambda item: item.pos().x())
            xs = [item.pos().x() for item in row]
            for i, item in enumerate(row):
                left = xs[i] - xs[i - 1] if i else width
                right = xs[i + 1] - xs[i] if i + 1 < len(row) else width
                item.label_room = max(0.0, min(left, right, width) - 8)

    def leave_export(self) -> None:
        """Bring back what `enter_export` hid."""
        self._exporting = False
        self._place_legend()
        self.minimap.refresh()  # shown again only if the view is zoomed in
        self.viewport().update()

    def zoom(self, factor: float) -> None:
        """Zoom by `factor` around the view's centre (or the pointer, for the wheel)."""
        self.scale(factor, factor)
        self._user_zoomed = True  # a resize keeps the user's zoom from now on
        self._zoom_changed()

    def centre_on_node(self, name: str) -> None:
        """Bring node `name` to the middle of the view, zooming in until its label is legible,
        unless it is in view already."""
        if self._drawn is None or self._drawn_index(name) is None:
            return
        shown = self.mapToScene(self.viewport().rect()).boundingRect()
        if shown.contains(self.node_position(name)):
            return  # in view already: moving the view would only lose the user's place
        if self.transform().m11() < self.readable_scale():
            factor = max(1.0, self.readable_scale()) / self.transform().m11()
            self.scale(factor, factor)
            self._zoom_changed()
        self._user_zoomed = True  # the user went to this node: a resize must not move away
        self.centerOn(self.node_position(name))

    def _zoom_changed(self) -> None:
        """Level of detail that depends on the zoom: boxes drawn by band once they are too small
        for labels, and faint, thin edges on big zoomed-out graphs."""
        banded = self.transform().m11() * NODE_HEIGHT < SHAPE_MIN_PIXELS
        if banded != self.boxes_banded:
            self.boxes_banded = banded
            for item in self._items:
                item.setFlag(QGraphicsItem.GraphicsItemFlag.ItemHasNoContents, banded)
        crowded = len(self._edge_paths) > THIN_EDGES and self.transform().m11() < THIN_SCALE
        self._base_edges.set_thin(crowded)
        for layer in (self._ancestor_edges, self._descendant_edges):
            # A one-pixel cosmetic line takes Qt's fast path; wider ones are stroked as shapes.
            layer.set_width(1.0 if crowded else HIGHLIGHT_WIDTH)
        # Hundreds of antialiased curves cost most of a hover's repaint; at this zoom the
        # difference hardly shows.
        self.setRenderHint(QPainter.RenderHint.Antialiasing, not crowded)
        self.minimap.refresh()

    def wheelEvent(self, event) -> None:
        steps = event.angleDelta().y() / 120
        if steps:
            self.zoom(ZOOM_STEP ** steps)

    def keyPressEvent(self, event) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(ZOOM_STEP)
        elif key == Qt.Key.Key_Minus:
            self.zoom(1 / ZOOM_STEP)
        elif key == Qt.Key.Key_0:  # Ctrl+0 as the menus say, or 0 alone as before
            self.fit()
        elif key == Qt.Key.Key_M:
            self.next_colouring()
        elif key == Qt.Key.Key_G:
            self.set_folded(self._folding is None and not self._fold_layouts.pending)
        elif key == Qt.Key.Key_O:
            self.set_overview(not self.minimap.wanted)
        else:
            super().keyPressEvent(event)  # arrows and page keys scroll

    def set_overview(self, shown: bool) -> None:
        """Show the overview in the corner where part of the graph is hidden, or never."""
        if shown != self.minimap.wanted:
            self.minimap.set_wanted(shown)
            self.sigOverviewChanged.emit(shown)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)  # a moved view keeps its zoom and centre (the resize anchor)
        self.legend.setGeometry(0, 0, self.width(), self.legend.height())
        # A view the user has not moved opens again for the new size; a fitted one fits again.
        if self._fitted and not self._user_zoomed:
            self.fit()
        elif not self.isVisible() or event.oldSize().width() <= 0 or not self._user_zoomed:
            self.open_view()
        self.minimap.refresh()

    def _node_selected(self, name) -> None:
        self.selected_index = self._drawn_index(name)
        self._refresh_highlight()

    # --- folding -------------------------------------------------------------------------

    def set_folded(self, folded: bool) -> None:
        """Draw the graph folded into groups (by namespace, else by chain), every group closed,
        or draw every node again."""
        graph = self.session.graph
        if graph is None or (prepared_dag(graph) is None and folded):
            return  # a chain of time steps is not drawn at all
        if not folded:
            self._fold_layouts.cancel()  # a folding on its way is not wanted any more
            if self._folding is not None:
                self._folding = None
                self.rebuild()
            return
        if self._folding is None and not self._fold_layouts.pending:
            # Grouped and laid out in the background, shown when ready.
            written = self.memory.written if self.memory is not None else ()
            self._fold_layouts.lay_out(lambda: fold(graph, written=written))

    def toggle_group(self, drawn: int) -> None:
        """Open the folded group drawn as node `drawn`, or close the group node `drawn` is in;
        the new drawing is laid out in the background and shown when ready."""
        if self._folding is None:
            return
        folding = self._folding
        # The group's first node keeps its place on screen when the new layout arrives.
        real = folding.members[drawn][0]
        # In fractions of a pixel: rounding at each toggle would walk the node away.
        self._keep_in_place = (real, self.viewportTransform().map(
            QPointF(self._drawn.x[drawn], self._drawn.y[drawn])))
        self._fold_layouts.lay_out(lambda: toggled(folding, drawn))

    def _fold_laid_out(self, folding: Folding, prepared) -> None:
        if folding.source is not self.session.graph:
            return  # another graph opened meanwhile
        self._folding = folding
        self._folded_prepared = (folding, prepared)
        keep, self._keep_in_place = self._keep_in_place, None
        transform = self.transform()
        self.rebuild()
        if keep is not None and self._drawn is not None:
            real, point = keep
            drawn = folding.drawn_of[real]
            self.setTransform(transform)
            to_scene = self.viewportTransform().inverted()[0]
            offset = to_scene.map(QRectF(self.viewport().rect()).center()) - to_scene.map(point)
            centre = QPointF(self._drawn.x[drawn], self._drawn.y[drawn]) + offset
            # Room to scroll there even where the new drawing is narrower than the old.
            shown = self.mapToScene(self.viewport().rect()).boundingRect()
            shown.moveCenter(centre)
            self.scene().setSceneRect(self.sceneRect().united(shown))
            self.centerOn(centre)
            self._user_zoomed = True
            self._zoom_changed()

    def hover_item(self, item: NodeItem, entered: bool) -> None:
        """The pointer entered or left `item`: a node is hovered in the session, a folded group
        here only (the session's hover names real nodes)."""
        if self._folding is not None and self._folding.is_group(item.index):
            self._hovered_group = item.index if entered else None
            if self.session.hovered_node is not None:
                self.session.hover_node(None)
            self._refresh_highlight()
        elif entered:
            self.session.hover_node(item.name)
        elif self.session.hovered_node == item.name:
            self.session.hover_node(None)

    def mouseDoubleClickEvent(self, event) -> None:
        item = self.itemAt(event.position().toPoint())
        if isinstance(item, NodeItem) and self._folding is not None:
            self.toggle_group(item.index)
            return
        super().mouseDoubleClickEvent(event)

    def contextMenuEvent(self, event) -> None:
        if self.session.graph is None or self.skipped_chain:
            return
        menu = QMenu(self)
        menu.addAction("Fit the whole graph  (Ctrl+0)", self.fit)
        colourings = menu.addMenu("Colour boxes by")
        for key in COLOURINGS:
            if key == BY_KIND or self.memory is not None:
                action = colourings.addAction(COLOURING_NAMES[key],
                                              lambda k=key: self.set_colouring(k))
                action.setCheckable(True)
                action.setChecked(key == self.colouring)
        if self._folding is None:
            menu.addAction("Fold into groups  (G)", lambda: self.set_folded(True))
        else:
            menu.addAction("Draw every node  (G)", lambda: self.set_folded(False))
            item = self.itemAt(event.pos())
            if isinstance(item, NodeItem):
                toggle = lambda i=item.index: self.toggle_group(i)  # noqa: E731
                if self._folding.is_group(item.index):
                    menu.addAction("Open this group  (double-click)", toggle)
                elif self._folding.group_of_drawn[item.index] in self._folding.opened:
                    menu.addAction("Close its group  (double-click)", toggle)
        menu.exec(event.globalPos())

    def reveal(self, kind: str, name: str) -> None:
        """Bring node `name`, or buffer `name`'s first user, into the middle of the view."""
        graph = self.session.graph
        if graph is None:
            return
        if kind == "node":
            self.centre_on_node(name)
        elif name in graph.buffer_index:
            user = buffer_users(graph)[graph.buffer_index[name]]
            self.centre_on_node(graph.nodes[int(user)].name)

    def mousePressEvent(self, event) -> None:
        self._press_at = event.position()
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:
        super().mouseReleaseEvent(event)
        start, self._press_at = self._press_at, None
        if start is None or (event.position() - start).manhattanLength() > CLICK_SLOP:
            return  # a drag that panned, not a click
        item = self.itemAt(event.position().toPoint())
        name = item.name if isinstance(item, NodeItem) else None
        if name is not None and self._folding is not None and self._folding.is_group(item.index):
            return  # a group is no node to select: double-click opens it
        if name is not None:
            self.session.selection_model.reveal("node", name)
        else:
            self.session.selection_model.select_node(None)

    def leaveEvent(self, event) -> None:
        if self.session.hovered_node is not None:
            self.session.hover_node(None)
        super().leaveEvent(event)


def _reached(adjacency, start: int) -> set[int]:
    """The nodes `start` strictly reaches along `adjacency` (per node, its neighbours)."""
    seen: set[int] = set()
    frontier = list(adjacency[start])
    while frontier:
        node = frontier.pop()
        if node not in seen:
            seen.add(node)
            frontier.extend(adjacency[node])
    return seen


def _tint(colour: QColor) -> QColor:
    """A light fill of `colour` that keeps black text readable."""
    return QColor.fromRgbF(*(0.72 + 0.28 * c for c in colour.getRgbF()[:3]))


ANCESTOR_FILL = _tint(palette.ANCESTOR)
BAR_COLOUR = QColor("#F0B88A")  # an orange lighter than any text, so the eye (and OCR) part them
DESCENDANT_FILL = _tint(palette.DESCENDANT)


def _plain_of(fill: QColor) -> QColor:
    """A fill's colour for a box too small for its border: darker, so the box still shows."""
    return fill.darker(125)


def _label_anchors(layout) -> np.ndarray:
    """Per edge, where its label goes: half way down its first stretch below the source box."""
    anchors = np.zeros((2, len(layout.edge_points)))
    for k, points in enumerate(layout.edge_points):
        (x0, y0), (x1, y1) = points[0], points[1]
        anchors[0, k] = (x0 + x1) / 2
        anchors[1, k] = (y0 + NODE_HEIGHT / 2 + y1 - NODE_HEIGHT / 2) / 2
    return anchors


def _dim(colour: QColor) -> QColor:
    faded = QColor(colour)
    faded.setAlpha(palette.DIMMED_ALPHA)
    return faded
