"""The Allocator dock, driven offscreen: the model's reserved curve and the peak explainer for
an example graph and a snapshot, and the expandable-segments what-if."""

from __future__ import annotations

from slabscope.app.state.session import Session
from slabscope.app.views.allocator.allocator_panel import (AllocatorPanel, graph_allocator_expandable,
                                                           graph_allocator_replay)
from tests.snapshot_builder import TINY_SNAPSHOT


def test_panel_shows_reserved_beside_the_slab_and_explains_the_peak(window):
    panel = window.allocator_panel
    window.docks["allocator"].raise_()  # behind the Slab tab it waits to be shown
    graph = window.session.graph
    # The loading worker made both replays; the panel only shows them.
    assert graph_allocator_replay in window.session.prepare_graphs
    assert graph_allocator_expandable in window.session.prepare_graphs
    replay = panel.replay
    assert replay is graph_allocator_replay(graph)
    assert replay.peak_reserved_bytes == 2 << 20  # relu_unfused's buffers fit one small segment
    text = panel.summary.text()
    assert "reserve" in text and "2 MiB" in text and "slab" in text
    names = [panel.live_at_peak.topLevelItem(i).text(1)
             for i in range(panel.live_at_peak.topLevelItemCount())]
    assert names[0] == "workspace"  # the largest buffer live at the peak comes first
    assert panel.free_at_peak.topLevelItemCount() == 1
    assert "small pool" in panel.free_at_peak.topLevelItem(0).text(1)


def test_expandable_what_if(window):
    panel = window.allocator_panel
    window.docks["allocator"].raise_()
    panel.expandable.setChecked(True)
    assert panel.replay.settings.expandable_segments
    assert panel.replay is graph_allocator_expandable(window.session.graph)
    assert "expandable_segments:True" in panel.summary.text()
    panel.expandable.setChecked(False)
    assert not panel.replay.settings.expandable_segments


def test_snapshot_rows_carry_stacks(qtbot):
    from slabscope import planner

    session = Session()
    panel = AllocatorPanel(session)
    qtbot.addWidget(panel)
    session.set_graph(planner.load(TINY_SNAPSHOT), TINY_SNAPSHOT)
    assert "when recorded" in panel.summary.text()
    wheres = [panel.live_at_peak.topLevelItem(i).text(2)
              for i in range(panel.live_at_peak.topLevelItemCount())]
    assert any("model.py" in where for where in wheres)


def test_a_snapshot_opened_in_the_window_is_read_once(window, qtbot, monkeypatch):
    # The panel replays the loaded graph, never the file again.
    from slabscope.planner.formats import torch_snapshot
    from tests.qt_waits import settled

    reads = []
    read = torch_snapshot.load_plain_data
    monkeypatch.setattr(torch_snapshot, "load_plain_data",
                        lambda *args: reads.append(args) or read(*args))
    assert window.open_path(TINY_SNAPSHOT)
    settled(qtbot, window)
    window.docks["allocator"].raise_()
    assert window.allocator_panel.replay is graph_allocator_replay(window.session.graph)
    assert "when recorded" in window.allocator_panel.summary.text()
    assert len(reads) == 1


def test_hidden_panel_redraws_when_its_tab_is_shown(window, qtbot):
    from tests.examples import RELU_UNFUSED
    from tests.qt_waits import settled

    panel = window.allocator_panel
    window.docks["slab"].raise_()
    window.session.undo_stack.setClean()
    assert window.open_path(RELU_UNFUSED)
    settled(qtbot, window)
    assert panel.redraw_when_shown.pending  # a new graph behind the Slab tab: not drawn yet
    window.docks["allocator"].raise_()
    assert not panel.redraw_when_shown.pending
    assert panel.replay is graph_allocator_replay(window.session.graph)


def test_a_steps_weight_is_where_its_first_user_is(qtbot):
    # A recorded step stretches a weight's uses to the step's first op; where it is shown
    # starts at the op that reads it.
    from pathlib import Path

    from slabscope import planner
    from slabscope.planner.analysis.peak import live_peak

    step = Path(__file__).parent / "data" / "steps" / "mlp_adam_step.json"
    session = Session()
    panel = AllocatorPanel(session)
    qtbot.addWidget(panel)
    session.set_graph(planner.load(step), step)
    graph, live = session.graph, live_peak(session.graph)
    rows = {panel.live_at_peak.topLevelItem(i).text(1): panel.live_at_peak.topLevelItem(i).text(2)
            for i in range(panel.live_at_peak.topLevelItemCount())}
    weights = [(b, n) for b, n in zip(live.buffers, live.producers)
               if graph.buffers[b].kind == "weight" and graph.buffers[b].name in rows]
    assert weights
    for b, n in weights:
        buffer = graph.buffers[b]
        assert rows[buffer.name].startswith(graph.nodes[n].name)
    assert any(graph.nodes[n].name != graph.buffers[b].uses[0] for b, n in weights)
