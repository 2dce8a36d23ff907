"""The request list: one row per buffer in request order; drag a row to change the order.

The model is a thin Qt adapter over `session.order` (as napari's list models are over their
evented lists): a move, through `moveRows` or a drop, becomes one undoable `session.set_order`,
and the model follows the session's new order with `beginMoveRows`/`endMoveRows` (so selection
and scroll position ride along), or one layout change when the order was shuffled wholesale.
"""

from __future__ import annotations

import json

from PySide6.QtCore import QMimeData, QModelIndex, QPoint, QRect, QSize, QStringListModel, Qt
from PySide6.QtGui import QAction, QKeySequence, QPainter, QPen
from PySide6.QtWidgets import (QAbstractItemView, QListView, QStyle, QStyledItemDelegate,
                               QToolBar, QVBoxLayout, QWidget)

from slabscope.app.views.common import palette
from slabscope.app.views.common.buffer_names import readable_name, shortened, use_buffer_ops
from slabscope.app.views.common.buffer_details import stack_files
from slabscope.app.views.common.buffer_emphasis import PointerOutlines
from slabscope.app.views.common.byte_axis import format_bytes

MIME_TYPE = "application/x-slabscope-request-names"
SIZE_ROLE = Qt.ItemDataRole.UserRole + 1
DISPLAY_ROLE, DECORATION_ROLE, TOOLTIP_ROLE = (int(role) for role in (
    Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.DecorationRole, Qt.ItemDataRole.ToolTipRole))
ANSWERED_ROLES = frozenset((DISPLAY_ROLE, DECORATION_ROLE, TOOLTIP_ROLE, SIZE_ROLE))
# Made once: each Qt flag combined in Python costs a few microseconds, per row painted.
ROW_FLAGS = (Qt.ItemFlag.ItemIsDropEnabled | Qt.ItemFlag.ItemIsEnabled
             | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsDragEnabled
             | Qt.ItemFlag.ItemNeverHasChildren)
NAME_ALIGN = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft
SIZE_ALIGN = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight
TOOLTIP_FILES = 4   # of a snapshot block's files, the innermost, named in full in its tooltip
MAX_ROW_MOVES = 64  # beyond this many block moves, one layout change is cheaper for the view


class RequestListModel(QStringListModel):
    """`session.order` as a list model: display the name, decoration the buffer's colour,
    `SIZE_ROLE` its size in bytes (as text). Moving rows re-plans through the session (undoable).

    The rows' names live in `_names`; the C++ base holds one empty string per row only so that
    Qt counts the rows without calling Python. A batched QListView asks for the row count twice
    per row it lays out (4,000 calls a batch, each taking the GIL from a planning worker).
    """

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self._names: tuple[str, ...] = ()
        session.sigGraphChanged.connect(self._reset)
        session.sigSettingsChanged.connect(self._sync)
        self._reset()

    def _reset(self) -> None:
        """Another graph: all rows are new (one model reset)."""
        self.beginResetModel()
        old, self._names = len(self._names), self.session.order
        # Only the count of the base's empty strings changes, in C++ (62,185 strings made in
        # Python took 4 ms); inside the reset, the views hear of nothing but the reset. At the
        # front, where Qt's list grows and shrinks in constant time (in the middle, row by
        # row, going from 454 rows to 62,185 took 0.6 s).
        blocked = self.blockSignals(True)
        try:
            if len(self._names) > old:
                QStringListModel.insertRows(self, 0, len(self._names) - old)
            elif len(self._names) < old:
                QStringListModel.removeRows(self, 0, old - len(self._names))
        finally:
            self.blockSignals(blocked)
        self.endResetModel()

    def _sync(self) -> None:
        """The same graph's requests in a new order: move the rows that moved."""
        new = self.session.order
        if new == self._names:
            return
        moves = block_moves(self._names, new, MAX_ROW_MOVES)
        if moves is None:
            self._relayout(new)
            return
        names, root = list(self._names), QModelIndex()
        for first, count, destination in moves:
            before_row = destination + count if destination > first else destination
            self.beginMoveRows(root, first, first + count - 1, root, before_row)
            block = names[first:first + count]
            del names[first:first + count]
            names[destination:destination] = block
            self._names = tuple(names)
            self.endMoveRows()

    def _relayout(self, new: tuple[str, ...]) -> None:
        """Show the reordered `new` in one layout change, keeping persistent indexes (selection)."""
        self.layoutAboutToBeChanged.emit()
        row = {name: i for i, name in enumerate(new)}
        before = self.persistentIndexList()
        after = [self.index(row[self._names[i.row()]]) for i in before]
        self._names = new
        self.changePersistentIndexList(before, after)
        self.layoutChanged.emit()

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        # A row being painted is asked for a dozen roles: those it has no answer for return at
        # once, before any lookup.
        if role not in ANSWERED_ROLES or not index.isValid():
            return None
        row = index.row()
        if not 0 <= row < len(self._names):
            return None
        name = self._names[row]
        if role == DISPLAY_ROLE:
            return name
        graph = self.session.graph
        i = graph.buffer_index[name]
        buf = graph.buffers[i]
        if role == DECORATION_ROLE:
            return palette.buffer_color(buf.kind, i)
        if role == SIZE_ROLE:
            return str(buf.bytes)  # a QVariant holds at most int64; sizes run to 2^64 - 1
        if role == TOOLTIP_ROLE:
            # The whole name (the row may elide it), and a snapshot block's files in full.
            files = "".join(f"\n  {path}" for path in stack_files(graph, name)[:TOOLTIP_FILES])
            return (f"{name} ({buf.kind})\n{buf.bytes:,} bytes, {graph.reserved[i]:,} reserved\n"
                    f"request {index.row()} of {len(self._names)}; drag to reorder"
                    + (f"\nallocated in:{files}" if files else ""))
        return None

    def flags(self, index: QModelIndex):
        # Dropping between rows (on the root) is allowed; a row is also dragged and selected.
        return ROW_FLAGS if index.isValid() else Qt.ItemFlag.ItemIsDropEnabled

    def supportedDropActions(self):
        return Qt.DropAction.MoveAction

    def supportedDragActions(self):
        return Qt.DropAction.MoveAction

    def mimeTypes(self) -> list[str]:
        return [MIME_TYPE]

    def mimeData(self, indexes) -> QMimeData:
        """The dragged rows' buffer names, in list order."""
        rows = sorted({i.row() for i in indexes if i.isValid()})
        data = QMimeData()
        data.setData(MIME_TYPE, json.dumps([self._names[r] for r in rows]).encode())
        return data

    def canDropMimeData(self, data, action, row, column, parent) -> bool:
        return action == Qt.DropAction.MoveAction and data is not None and data.hasFormat(MIME_TYPE)

    def dropMimeData(self, data, action, row, column, parent) -> bool:
        """Move the named rows so they start before `row` (or onto `parent`'s row; the end if -1)."""
        if not self.canDropMimeData(data, action, row, column, parent):
            return False
        try:
            names = json.loads(bytes(data.data(MIME_TYPE)).decode())
        except ValueError:
            return False
        if row < 0:
            row = parent.row() if parent.isValid() else len(self._names)
        return self.move_names(names, row)

    def moveRows(self, source_parent, source_row, count, destination_parent, destination_row) -> bool:
        """Move `count` rows from `source_row` to before `destination_row` (Qt's convention)."""
        if source_parent.isValid() or destination_parent.isValid() or count <= 0:
            return False
        return self.move_names(self._names[source_row:source_row + count], destination_row)

    def removeRows(self, row, count, parent=QModelIndex()) -> bool:
        # A drag-move ends with the view asking to remove the source rows; the move already
        # happened in the session, so there is nothing to remove.
        return False

    def move_names(self, names, row: int) -> bool:
        """Put buffers `names` (in the given order) before list position `row`; re-plans."""
        names = [n for n in names if n in self._names]
        if not names:
            return False
        moving = set(names)
        row = max(0, min(row, len(self._names)))
        before = [n for n in self._names[:row] if n not in moving]
        after = [n for n in self._names[row:] if n not in moving]
        order = before + names + after
        if tuple(order) == self._names:
            return False
        self.session.set_order(order)
        return True

    def names(self) -> tuple[str, ...]:
        """The buffer names shown, top to bottom."""
        return self._names


def block_moves(old, new, limit: int) -> list[tuple[int, int, int]] | None:
    """Moves of contiguous blocks that turn the sequence `old` into `new` (a permutation of it),
    each `(first, count, destination)` applied in turn; None if it takes more than `limit`.

    `destination` is where the block starts once moved. A drag of one run of rows, or its
    undo, is one move.
    """
    single = _single_move(tuple(old), tuple(new))
    if single is not None:
        return [single] if limit >= 1 else None
    return searched_moves(old, new, limit)


def searched_moves(old, new, limit: int) -> list[tuple[int, int, int]] | None:
    """`block_moves` by an item-by-item search, for any permutation."""
    current, moves = list(old), []
    for i, wanted in enumerate(new):
        if current[i] == wanted:
            continue
        if len(moves) == limit:
            return None
        j = current.index(wanted, i + 1)
        count = 1
        while j + count < len(current) and i + count < len(new) and current[j + count] == new[i + count]:
            count += 1
        # Moving the block up to i is the same as moving current[i:j] down past it: take the
        # shorter of the two.
        if j - i < count:
            moves.append((i, j - i, i + count))
            block = current[i:j]
            del current[i:j]
            current[i + count:i + count] = block
        else:
            moves.append((j, count, i))
            block = current[j:j + count]
            del current[j:j + count]
            current[i:i] = block
    return moves


def _single_move(old: tuple, new: tuple) -> tuple[int, int, int] | None:
    """The one block move `block_moves` finds when `new` is `old` with one run of items moved
    (the middle between their common ends rotated), found by comparing slices rather than item
    by item: 62,185 rows in a few milliseconds. None for any other permutation (or none)."""
    n = len(old)
    if n != len(new) or old == new:
        return None
    head = _common_run(old, new, n)
    tail = _common_run(old[head:][::-1], new[head:][::-1], n - head)
    middle, wanted = old[head:n - tail], new[head:n - tail]
    try:
        k = middle.index(wanted[0])
    except ValueError:
        return None
    if wanted != middle[k:] + middle[:k]:
        return None
    # The shorter of the two equal moves, as the item-by-item loop takes it.
    size = len(middle)
    return (head, k, head + size - k) if k < size - k else (head + k, size - k, head)


def _common_run(a: tuple, b: tuple, limit: int) -> int:
    """How many leading items `a` and `b` share (at most `limit`), by bisecting slice equality."""
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def shown_name(metrics, name: str, width: int) -> str:
    """`name` as a row `width` pixels wide shows it: cut at its end, never in the middle (the
    tooltip has it whole)."""
    return shortened(metrics, name, width)


class RequestDelegate(QStyledItemDelegate):
    """A row: colour swatch, name, and the size right-aligned; outlined like the buffer's box in
    the slab bar when the session points at it (`outlines`, a `PointerOutlines`)."""

    outlines = None
    session = None  # whose graph the rows are of: each name shows the op that makes it

    def paint(self, painter, option, index) -> None:
        self.initStyleOption(option, index)
        style = option.widget.style() if option.widget else None
        colour = index.data(Qt.ItemDataRole.DecorationRole)
        size = int(index.data(SIZE_ROLE))
        option.icon = option.icon.__class__()  # the swatch is drawn below, not as an icon
        option.features &= ~option.ViewItemFeature.HasDecoration
        text = option.text
        option.text = ""
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, option, painter, option.widget)
        rect = option.rect.adjusted(6, 3, -8, -3)
        swatch = QRect(rect.left(), rect.top() + (rect.height() - 12) // 2, 12, 12)
        painter.save()
        painter.setPen(colour.darker(140))
        painter.setBrush(colour)
        painter.drawRect(swatch)
        selected = option.state & QStyle.StateFlag.State_Selected
        role = option.palette.ColorRole.HighlightedText if selected else option.palette.ColorRole.Text
        painter.setPen(option.palette.color(role))
        size_text = format_bytes(size)
        size_width = option.fontMetrics.horizontalAdvance(size_text)
        text_rect = rect.adjusted(20, 0, -size_width - 10, 0)
        graph = self.session.graph if self.session is not None else None
        shown = readable_name(graph, text) if graph is not None else text
        painter.drawText(text_rect, NAME_ALIGN,
                         shown_name(option.fontMetrics, shown, text_rect.width()))
        painter.drawText(rect, SIZE_ALIGN, size_text)
        outline = self.outlines.outline_of(text) if self.outlines is not None else None
        if outline is not None:
            painter.setPen(QPen(outline, 2))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(option.rect.adjusted(1, 1, -2, -2))
        painter.restore()

    def sizeHint(self, option, index) -> QSize:
        return QSize(160, option.fontMetrics.height() + 8)


class RequestListView(QListView):
    """The list of requests; with no row on show it says why (no graph, the file loading, the
    rows still being laid out), rather than staying blank."""

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session

    def placeholder(self) -> str | None:
        """What the empty viewport says, or None when rows are on show."""
        rows = self.model().rowCount() if self.model() is not None else 0
        if rows and self.indexAt(QPoint(1, 1)).isValid():
            return None
        session = self.session
        if session.graph is None:
            if session.busy is not None and session.loading:
                return f"{session.busy}…\nIts buffers are listed here in request order once it is read."
            return "No graph open.\nFile ▸ Open lists its buffers here, in request order."
        if rows:
            # A long list is laid out a batch per event-loop turn; Qt draws it when all are done.
            return f"Listing {rows:,} requests…"
        return f"{session.graph.name} has no buffers to request."

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        text = self.placeholder()
        if text is None:
            return
        painter = QPainter(self.viewport())
        painter.setPen(self.palette().color(self.palette().ColorRole.PlaceholderText))
        painter.drawText(self.viewport().rect().adjusted(10, 10, -10, -10),
                         Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop
                         | Qt.TextFlag.TextWordWrap, text)


class RequestList(QWidget):
    """The request list panel: toolbar (sort by size, restore file order) over the draggable list.

    Hovering a row announces the buffer to the session; selecting rows selects buffers.
    """

    def __init__(self, session, parent=None):
        super().__init__(parent)
        self.session = session
        self.model = RequestListModel(session, self)
        self.view = RequestListView(session, self)
        self.view.setModel(self.model)
        self.view.setItemDelegate(RequestDelegate(self.view))
        self.view.itemDelegate().outlines = PointerOutlines(session, self.view.viewport().update)
        self.view.itemDelegate().session = session
        use_buffer_ops(session)
        session.selection_model.sigReveal.connect(self.reveal)
        self.view.setUniformItemSizes(True)
        # Lay out long lists a batch per event-loop turn, so 60,000 rows never freeze the window.
        self.view.setLayoutMode(QListView.LayoutMode.Batched)
        self.view.setBatchSize(2000)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setDragDropMode(QAbstractItemView.DragDropMode.InternalMove)
        self.view.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.view.setDragEnabled(True)
        self.view.setAcceptDrops(True)
        self.view.setDropIndicatorShown(True)
        self.view.setMouseTracking(True)
        self.view.entered.connect(lambda index: session.hover_buffer(index.data()))
        self.view.viewport().installEventFilter(self)
        self.view.selectionModel().selectionChanged.connect(self._selection_to_session)
        self.model.modelReset.connect(self._selection_from_session)
        session.sigSelectionChanged.connect(self._selection_from_session)
        session.sigBusyChanged.connect(self._busy_changed)

        self.sort_action = QAction("Sort by size", self)
        self.sort_action.setToolTip("Request the largest buffers first (undoable)")
        self.sort_action.setShortcut(QKeySequence("Ctrl+Alt+S"))
        self.sort_action.triggered.connect(session.sort_by_size)
        self.restore_action = QAction("Restore file order", self)
        self.restore_action.setToolTip("Put the requests back in the graph file's order (undoable)")
        self.restore_action.setShortcut(QKeySequence("Ctrl+Alt+R"))
        self.restore_action.triggered.connect(session.restore_file_order)
        toolbar = QToolBar(self)
        toolbar.addAction(self.sort_action)
        toolbar.addAction(self.restore_action)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(toolbar)
        layout.addWidget(self.view)
        self._syncing = False

    def _busy_changed(self, _label) -> None:
        self.view.viewport().update()  # the placeholder names the load, or its end

    def eventFilter(self, watched, event) -> bool:
        if event.type() == event.Type.Leave:
            self.session.hover_buffer(None)
        return False

    def reveal(self, kind: str, name: str) -> None:
        """Scroll to buffer `name` (or to the first request node `name` uses)."""
        names = self.model.names()
        if kind == "node" and self.session.graph is not None:
            used = {b.name for b in self.session.graph.buffers if name in b.uses}
            name = next((n for n in names if n in used), None)
        if name in names:
            self.view.scrollTo(self.model.index(names.index(name)),
                               QAbstractItemView.ScrollHint.PositionAtCenter)

    def _selection_to_session(self, *_):
        if not self._syncing:
            rows = sorted(i.row() for i in self.view.selectionModel().selectedRows())
            names = [self.model.names()[r] for r in rows]
            if len(names) == 1:  # one buffer chosen: every panel scrolls to it
                self.session.selection_model.reveal("buffer", names[0])
            else:
                self.session.select_buffers(names)

    def _selection_from_session(self, *_):
        """Show the session's selection (after a reorder resets the model, or from elsewhere)."""
        wanted = set(self.session.selection)
        selection = self.view.selectionModel()
        self._syncing = True
        try:
            selection.clearSelection()
            # Nothing selected (as after every new graph) needs no pass over 62,185 rows.
            rows = [r for r, name in enumerate(self.model.names()) if name in wanted] if wanted \
                else []
            for row in rows:
                selection.select(self.model.index(row),
                                 selection.SelectionFlag.Select | selection.SelectionFlag.Rows)
        finally:
            self._syncing = False
