"""Every view of the plan follows search's best plan so far, marked provisional; a lifetime map
behind another tab draws a new plan only when it comes forward (and for an export); exports
say when their plan is provisional or was cut short by the search budget."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from slabscope import planner
from slabscope.app.state.session import Session
from slabscope.app.views.export.export_title import export_title, search_status
from slabscope.app.views.panels.inspector import COLUMNS, SORT_ROLE
from tests.examples import write_slow_search_trace
from tests.qt_waits import planned_window

LONG_BUDGET = 30.0  # a search that would run far longer than any test waits


@pytest.fixture
def trace(tmp_path):
    return write_slow_search_trace(tmp_path / "trace.csv")


@pytest.fixture
def window(qtbot, trace, tmp_path, monkeypatch):
    """The window (blank settings: Slab tab in front) on `trace`, planned by first fit."""
    return planned_window(qtbot, monkeypatch, tmp_path, trace)


def offsets_in_table(window) -> dict[str, str]:
    """Buffer name to the offset the inspector's table shows."""
    proxy = window.inspector.proxy
    name, offset = COLUMNS.index("name"), COLUMNS.index("offset")
    return {proxy.index(r, name).data(): proxy.index(r, offset).data()
            for r in range(proxy.rowCount())}


def shows_plan(window, plan) -> bool:
    """Whether the inspector, the lifetime map and the live-bytes panel all show `plan`."""
    table = offsets_in_table(window)
    first = plan.placements[0]
    live = window.graph_panel.live_view  # a trace is a chain of time steps: shown as live bytes
    return (window.graph_panel.shows_live_bytes() and table[first.name] == f"{first.offset:,}"
            and window.lifetime_view.drawn_lines().get("slab") == plan.slab_bytes
            and f"{plan.slab_bytes:,} B" in live.summary.text())


def test_inspector_map_and_live_bytes_follow_searchs_best_plan_so_far(qtbot, window):
    session = window.session
    first_fit = session.plan
    window.docks["lifetime"].raise_()
    qtbot.waitUntil(lambda: not window.lifetime_view.pending)
    window.inspector.table.selectRow(3)
    selected = session.selection
    window.session.budget = LONG_BUDGET
    session.set_algorithm("search")
    qtbot.waitUntil(lambda: session.plan_provisional, timeout=20000)
    provisional = session.provisional_plan
    assert provisional.slab_bytes < first_fit.slab_bytes
    assert shows_plan(window, provisional)
    # Every placement the table shows is the provisional plan's; rows and selection stay.
    table = offsets_in_table(window)
    assert all(table[p.name] == f"{p.offset:,}" for p in provisional.placements)
    assert session.selection == selected
    assert "provisional" in window.inspector.summary.text()
    assert "provisional" in window.lifetime_view.summary.text()
    for name in ("slab", "lifetime", "inspector"):
        assert window.busy_overlays[name].text.endswith("(provisional)")
    # Colouring the boxes anew redraws the plan on show, not an empty bar.
    window.slab_view.colouring.combo.setCurrentIndex(1)
    slab_end = window.slab_view.slab_end
    assert slab_end.isVisible() and slab_end.value() == provisional.slab_bytes
    assert len(window.slab_view.layer.names) == len(provisional.placements)
    QTest.keyClick(window, Qt.Key.Key_Escape)  # cancel: the first-fit plan is shown again
    qtbot.waitUntil(lambda: not window.planning.running, timeout=5000)
    assert shows_plan(window, first_fit)
    assert "provisional" not in window.inspector.summary.text()
    assert "provisional" not in window.lifetime_view.summary.text()


def test_a_table_sorted_by_offset_shows_the_provisional_offsets(qtbot, window):
    inspector, session = window.inspector, window.session
    inspector.table.sortByColumn(COLUMNS.index("offset"), Qt.SortOrder.AscendingOrder)
    session.budget = LONG_BUDGET
    session.set_algorithm("search")
    qtbot.waitUntil(lambda: session.plan_provisional, timeout=20000)
    plan = session.provisional_plan
    shown = offsets_in_table(window)
    assert all(shown[p.name] == f"{p.offset:,}" for p in plan.placements)
    # 2,000 rows are few enough to sort again per partial plan.
    column = [inspector.proxy.index(r, COLUMNS.index("offset")).data(SORT_ROLE)
              for r in range(inspector.proxy.rowCount())]
    assert column == sorted(column)
    session.cancel()


def test_the_map_behind_another_tab_is_drawn_when_shown_or_exported(qtbot, window, tmp_path):
    session, view = window.session, window.lifetime_view
    old = session.plan
    # The first plan came while the Slab tab was in front: the map drew nothing.
    assert view.pending and view.visibleRegion().isEmpty() and "slab" not in view.drawn_lines()
    window.docks["lifetime"].raise_()
    qtbot.waitUntil(lambda: not view.pending)
    assert view.drawn_lines()["slab"] == old.slab_bytes
    window.docks["slab"].raise_()
    qtbot.waitUntil(lambda: view.visibleRegion().isEmpty())
    session.sort_by_size()
    qtbot.waitUntil(lambda: session.plan is not None and session.plan is not old, timeout=20000)
    new = session.plan
    assert new.slab_bytes != old.slab_bytes
    assert view.pending and view.drawn_lines()["slab"] == old.slab_bytes  # not drawn behind
    # An export of the hidden map draws the plan first.
    assert window.export_png("map", tmp_path / "map.png", 1.0)
    assert not view.pending and view.drawn_lines()["slab"] == new.slab_bytes
    session.undo_stack.undo()  # back to the first plan, kept: at once
    assert view.pending
    window.docks["lifetime"].raise_()
    qtbot.waitUntil(lambda: not view.pending)
    assert view.drawn_lines()["slab"] == old.slab_bytes


def test_export_titles_say_provisional_while_search_runs(qtbot, window, tmp_path, monkeypatch):
    from slabscope.app import window as window_module

    session = window.session
    session.budget = LONG_BUDGET
    session.set_algorithm("search")
    qtbot.waitUntil(lambda: session.plan_provisional, timeout=20000)
    title, plan = export_title(session), session.provisional_plan
    done = f" after {plan.iterations:,} steps" if plan.iterations else ""
    assert title.endswith(f" · provisional (best so far{done}; search continues)")
    drawn = []
    render = window_module.render_png

    def watched(widget, path, scale, title):
        drawn.append((title, [o.isHidden() for o in window.busy_overlays.values()]))
        return render(widget, path, scale, title)

    monkeypatch.setattr(window_module, "render_png", watched)
    for view in ("window", "map"):
        assert window.export_png(view, tmp_path / f"{view}.png", 1.0)
    # The title says provisional; the veil saying so on screen is not in the picture.
    assert all("provisional" in t and all(hidden) for t, hidden in drawn) and len(drawn) == 2
    assert window.busy_overlays["lifetime"].text.endswith("(provisional)")
    assert not window.busy_overlays["lifetime"].isHidden()  # back on screen
    session.cancel()
    assert "provisional" not in export_title(session)


def test_export_titles_say_when_the_budget_cut_search_short(trace):
    session = Session()
    session.budget = 0.0  # the deadline passes after the first packings
    session.set_graph(planner.load(trace), trace, algorithm="search")
    plan = session.plan
    assert "budget cut the work short" in plan.proof
    steps = f"{plan.iterations:,} steps"
    assert search_status(plan, provisional=False) == f"search cut short by the 0 s budget after {steps}"
    assert export_title(session).endswith(f" · search cut short by the 0 s budget after {steps}")
    session.set_algorithm("first-fit")  # a plan whose work ran to its end says nothing more
    assert search_status(session.plan, provisional=False) is None
    assert export_title(session).endswith("%)")


def test_the_cli_export_title_says_the_budget_cut_search_short(trace, tmp_path, monkeypatch):
    from slabscope.app import render
    from slabscope.app.cli import main

    titles = []
    original = render.export_title
    monkeypatch.setattr(render, "export_title", lambda s: titles.append(original(s)) or titles[-1])
    out = tmp_path / "map.png"
    assert main(["export", str(trace), "--view", "map", "--algorithm", "search",
                 "--budget", "0", "--png", str(out)]) == 0
    assert out.exists() and "search cut short by the 0 s budget after" in titles[-1]

