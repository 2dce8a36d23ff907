"""The request list: reorder through the model re-plans (undoably); sort and restore actions."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QModelIndex, Qt

from slabscope.app.state.session import Session
from slabscope.app.views.panels.request_list import RequestList
from tests.examples import RELU_UNFUSED

FILE_ORDER = ("x", "w", "b", "workspace", "t0", "t1", "y")
SPEC_OFFSETS = {"x": 0, "w": 65536, "b": 131072, "workspace": 131328, "t0": 1179904,
                "t1": 0, "y": 16384}


@pytest.fixture
def request_list(qtbot):
    session = Session()
    session.open(RELU_UNFUSED)
    widget = RequestList(session)
    qtbot.addWidget(widget)
    return widget


def offsets(session) -> dict[str, int]:
    return {p.name: p.offset for p in session.plan.placements}


def test_rows_follow_request_order_with_colour_and_size(request_list):
    model = request_list.model
    assert [model.index(r).data() for r in range(model.rowCount())] == list(FILE_ORDER)
    assert model.index(3).data(Qt.ItemDataRole.DecorationRole).isValid()
    assert int(model.index(3).data(Qt.ItemDataRole.UserRole + 1)) == 1048576  # text: past int64


def test_drop_reorders_replans_and_undo_restores(request_list):
    model, session = request_list.model, request_list.session
    dragged = model.mimeData([model.index(5), model.index(6)])  # t1, y
    assert model.dropMimeData(dragged, Qt.DropAction.MoveAction, 0, 0, QModelIndex())
    assert session.order == ("t1", "y", "x", "w", "b", "workspace", "t0")
    assert [model.index(r).data() for r in range(model.rowCount())] == list(session.order)
    assert offsets(session) == {"t1": 0, "y": 16384, "x": 0, "w": 65536, "b": 131072,
                                "workspace": 131328, "t0": 1179904}
    assert session.plan.slab_bytes == 1196288
    assert not session.undo_stack.isClean()
    session.undo_stack.undo()
    assert session.order == FILE_ORDER
    assert offsets(session) == SPEC_OFFSETS


def test_drop_changes_the_plan(request_list):
    model, session = request_list.model, request_list.session
    # workspace first: x can no longer start at 0.
    assert model.dropMimeData(model.mimeData([model.index(3)]), Qt.DropAction.MoveAction, 0, 0,
                              QModelIndex())
    assert offsets(session)["workspace"] == 0
    assert offsets(session)["x"] == 1048576


def test_move_rows_and_drop_past_the_end(request_list):
    model, session = request_list.model, request_list.session
    assert model.moveRows(QModelIndex(), 6, 1, QModelIndex(), 0)
    assert session.order[0] == "y"
    assert model.dropMimeData(model.mimeData([model.index(0)]), Qt.DropAction.MoveAction, -1, -1,
                              QModelIndex())
    assert session.order == FILE_ORDER
    assert not model.removeRows(0, 1)  # the view's cleanup after a drag-move removes nothing


def test_sort_by_size_and_restore_file_order(request_list):
    session = request_list.session
    request_list.sort_action.trigger()
    assert session.order[0] == "workspace"
    assert session.order[-1] == "b"
    request_list.restore_action.trigger()
    assert session.order == FILE_ORDER
    assert session.undo_stack.count() == 2


def test_selection_and_hover_reach_the_session(request_list, qtbot):
    view, session = request_list.view, request_list.session
    view.selectionModel().select(request_list.model.index(4),
                                 view.selectionModel().SelectionFlag.ClearAndSelect)
    assert session.selection == ("t0",)
    session.select_buffers(["y", "x"])
    selected = {i.data() for i in view.selectionModel().selectedIndexes()}
    assert selected == {"x", "y"}
    view.entered.emit(request_list.model.index(2))
    assert session.hovered_buffer == "b"


def test_a_drop_moves_rows_and_the_selection_rides_along(request_list, qtbot):
    from PySide6.QtTest import QAbstractItemModelTester

    model, session, view = request_list.model, request_list.session, request_list.view
    QAbstractItemModelTester(model, QAbstractItemModelTester.FailureReportingMode.Fatal, model)
    resets, moves = [], []
    model.modelReset.connect(lambda: resets.append(True))
    model.rowsMoved.connect(lambda parent, first, last, dest, row: moves.append((first, last, row)))
    session.select_buffers(["workspace"])
    assert model.dropMimeData(model.mimeData([model.index(3)]), Qt.DropAction.MoveAction, 0, 0,
                              QModelIndex())
    assert moves == [(3, 3, 0)] and not resets
    assert [i.data() for i in view.selectionModel().selectedRows()] == ["workspace"]
    session.undo_stack.undo()  # one move back down: Qt names the row it lands before
    assert moves[-1] == (0, 0, 4) and not resets
    assert model.names() == FILE_ORDER
    session.sort_by_size()  # a shuffle: moves or one layout change, never a reset
    assert model.names() == session.order and not resets
    assert [i.data() for i in view.selectionModel().selectedRows()] == ["workspace"]


def test_block_moves_take_one_move_per_dragged_run():
    from slabscope.app.views.panels.request_list import block_moves

    assert block_moves("abcdef", "cdabef", 9) == [(2, 2, 0)]
    assert block_moves("abcdef", "abfcde", 9) == [(5, 1, 2)]
    assert block_moves("abcdef", "fedcba", 2) is None  # past the limit: a layout change instead


def test_a_wholesale_shuffle_is_one_layout_change_that_keeps_the_selection(request_list,
                                                                            monkeypatch):
    from slabscope.app.views.panels import request_list as module

    monkeypatch.setattr(module, "MAX_ROW_MOVES", 1)
    model, session, view = request_list.model, request_list.session, request_list.view
    layouts = []
    model.layoutChanged.connect(lambda *_: layouts.append(True))
    session.select_buffers(["t0"])
    session.set_order(list(reversed(FILE_ORDER)))
    assert layouts and model.names() == tuple(reversed(FILE_ORDER))
    assert [i.data() for i in view.selectionModel().selectedRows()] == ["t0"]
