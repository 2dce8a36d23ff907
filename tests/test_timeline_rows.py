"""The timeline for real runs: kernels grouped by op and unfolded on demand, rows of a least
height that scroll, an axis that ends at the wall time, and repeats as median with min-max."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from slabscope import gpu  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.timeline.timeline_view import ROW_PIXELS, TimelineView, kernel_groups, timeline_rows  # noqa: E402
from slabscope.gpu.report import spread  # noqa: E402


@pytest.fixture(scope="module")
def transformer_report(tmp_path_factory):
    from slabscope.gpu.generators import transformer, write_graph

    path = tmp_path_factory.mktemp("graphs") / "transformer.json"
    write_graph(transformer(16, 32, 2, layers=2), path)
    graph = planner.load(path)
    return graph, gpu.run(graph, backend="numpy", repeats=3, measure_memory=False, replay=False)


def test_spread_is_median_least_and_most():
    assert spread([3.0, 1.0, 2.0]) == (2.0, 1.0, 3.0)
    assert spread([4.0, 1.0, 2.0, 3.0]) == (2.5, 1.0, 4.0)
    assert spread([]) is None


def test_a_run_keeps_each_execute_and_each_kernels_samples(transformer_report):
    _graph, report = transformer_report
    assert len(report.execute_samples) == 3
    assert all(len(k.samples) == 3 for k in report.kernels)
    assert all(k.seconds == pytest.approx(sum(k.samples) / 3) for k in report.kernels)


def test_kernels_group_by_op_and_unfold(transformer_report):
    _graph, report = transformer_report
    groups = kernel_groups(report)
    rows = timeline_rows(report)
    assert len(rows) == len(report.phases) + 1 + len(groups)  # + one execute's spread
    matmul = next(row for row in rows if row.group == "matmul")
    count = sum(k.op == "matmul" for k in report.kernels)
    assert matmul.label.startswith(f"▸ matmul ×{count}  ")
    total = sum(k.seconds for k in report.kernels if k.op == "matmul")
    assert matmul.seconds == pytest.approx(total)
    share = total / sum(k.seconds for k in report.kernels)
    assert f"{share:.0%}" in matmul.label
    unfolded = timeline_rows(report, frozenset({"matmul"}))
    assert len(unfolded) == len(rows) + count
    first = unfolded.index(next(r for r in unfolded if r.group == "matmul"))
    kernel = next(k for k in report.kernels if k.op == "matmul")
    row = unfolded[first + 1]
    median, least, most = spread(kernel.samples)
    assert row.seconds == median and row.spread == (least, most)
    assert "median" in row.label


def test_rows_keep_their_height_and_scroll_and_the_axis_ends_at_the_wall(qtbot,
                                                                          transformer_report):
    graph, report = transformer_report
    session = Session()
    session.set_graph(graph)
    view = TimelineView(session)
    qtbot.addWidget(view)
    view.resize(900, 260)
    view.show()
    qtbot.waitExposed(view)
    session.set_last_run(report)
    for op, _kernels in kernel_groups(report):
        view.toggle_group(op)  # every kernel on show: more rows than the panel has room for
    assert len(view.rows) == len(report.phases) + 1 + len(kernel_groups(report)) + len(report.kernels)
    assert view.plot.height() >= len(view.rows) * ROW_PIXELS
    assert view.scroll.verticalScrollBar().maximum() > 0
    ticks = view.plot.getPlotItem().getAxis("left")._tickLevels[0]
    assert len(ticks) == len(view.rows)  # every row labelled
    (x0, x1), _ = view.plot.getPlotItem().getViewBox().viewRange()
    assert x0 == 0 and x1 == pytest.approx(report.wall_seconds)
    view.toggle_group("matmul")
    assert "matmul" not in view.expanded


def test_one_execute_shows_the_repeats_median_and_min_max(transformer_report):
    _graph, report = transformer_report
    rows = timeline_rows(report)
    one = next(r for r in rows if r.label.startswith("one execute"))
    median, least, most = spread(report.execute_samples)
    assert one.seconds == median and one.spread == (least, most)
    assert one.start == next(r for r in rows if r.label.startswith("execute")).start
