"""Folding the DAG and opening a folded group are laid out on a background thread: the GUI
thread only asks, and the drawing appears when it is ready; a result that comes too late is
dropped."""

from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.dag import dag_fold_layout  # noqa: E402
from slabscope.app.views.dag.dag_view import DagView  # noqa: E402
from slabscope.gpu.generators import transformer  # noqa: E402


def _folded_view(qtbot) -> DagView:
    session = Session()
    session.graph = planner.graph_from_dict(transformer(4, 8, 2, layers=30))  # drawn only
    view = DagView(session)
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: not view.building)
    view.set_folded(True)
    assert view.folding is None  # grouped in the background too
    qtbot.waitUntil(lambda: not view.building)
    assert view.folding is not None
    return view


def _largest_group(view: DagView) -> int:
    folding = view.folding
    return max((i for i in range(len(folding.graph.nodes)) if folding.is_group(i)),
               key=lambda i: len(folding.members[i]))


def test_an_opened_group_is_laid_out_off_the_gui_thread(qtbot, monkeypatch):
    view = _folded_view(qtbot)
    threads = []
    real = dag_fold_layout.prepare_dag
    monkeypatch.setattr(dag_fold_layout, "prepare_dag",
                        lambda graph: threads.append(threading.current_thread()) or real(graph))
    closed = view.folding
    group = _largest_group(view)
    size = len(closed.members[group])
    view.toggle_group(group)
    assert view.folding is closed and view.building  # still the old drawing, while it lays out
    qtbot.waitUntil(lambda: not view.building)
    assert threads and threading.main_thread() not in threads
    assert len(view.folding.graph.nodes) == len(closed.graph.nodes) + size - 1
    assert len(view._items) == len(view.folding.graph.nodes)


def test_a_layout_that_arrives_after_unfolding_is_dropped(qtbot):
    view = _folded_view(qtbot)
    view.toggle_group(_largest_group(view))
    view.set_folded(False)  # before the opened group's drawing comes back
    assert not view._fold_layouts.pending
    qtbot.wait(600)  # long enough for the worker to finish and its result to be delivered
    qtbot.waitUntil(lambda: not view.building)
    assert view.folding is None
    assert len(view._items) == len(view.session.graph.nodes)

