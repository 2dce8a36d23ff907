"""The byte axes beside the lifetime map and the live-bytes curve never draw a tick label that
the plot's edge cuts (a "500 GiB" half shown at the top of a short map)."""

from __future__ import annotations

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.lifetimes.lifetime_view import LifetimeView
from tests.examples import write_slow_search_trace


def drawn_labels(axis) -> list[QRectF]:
    """Where `axis` draws its tick labels, in its plot widget's view coordinates."""
    image = QImage(10, 10, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis, _ticks, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    view = axis.scene().views()[0]
    return [view.mapFromScene(axis.mapRectToScene(rect)).boundingRect() for rect, _, _ in texts]


def test_no_tick_label_of_a_short_map_is_cut_by_its_edge(qtbot, tmp_path):
    trace = write_slow_search_trace(tmp_path / "trace.csv")
    session = Session()
    session.set_graph(planner.load(trace), trace)
    view = LifetimeView(session)
    qtbot.addWidget(view)
    view.show()
    qtbot.waitExposed(view)
    axis = view.plot_widget.getPlotItem().getAxis("left")
    shown = 0
    for height in range(150, 330, 6):  # the top tick lands at every distance from the top
        view.resize(1000, height)
        qtbot.wait(1)
        edge = view.plot_widget.viewport().rect()
        labels = drawn_labels(axis)
        assert all(edge.contains(rect) for rect in labels), height
        shown += len(labels)
    assert shown  # the axis is labelled at all
