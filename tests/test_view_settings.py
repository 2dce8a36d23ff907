"""View settings (placement of a snapshot's blocks, slab bar mode, front tab) live in the session:
the views follow them and record the user's choices, and an export sets them from its options."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QImage  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.cli import main  # noqa: E402
from slabscope.app.render import build_view  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.lifetimes.lifetime_view import PLANNED, PYTORCH  # noqa: E402
from slabscope.app.views.slab.slab_view import ONE_STEP  # noqa: E402
from slabscope.app.window import MainWindow  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402
from tests.snapshot_builder import TINY_SNAPSHOT  # noqa: E402


def snapshot_session() -> Session:
    session = Session()
    session.set_graph(planner.load(TINY_SNAPSHOT), TINY_SNAPSHOT)
    return session


def test_the_map_follows_and_records_the_placement_setting(qtbot):
    session = snapshot_session()
    session.view.addresses = "pytorch"
    view = build_view(session, "map")
    qtbot.addWidget(view)
    assert view.placement_choice.currentText() == PYTORCH and "reserved" in view.drawn_lines()
    view.placement_choice.setCurrentText(PLANNED)
    assert session.view.addresses == "planned"


def test_the_slab_bar_follows_and_records_its_mode(qtbot):
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    session.view.slab = "step"
    view = build_view(session, "slab")
    qtbot.addWidget(view)
    assert view.mode_choice.currentText() == ONE_STEP and view.section is not None
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)  # a new file: by its size
    assert session.view.slab is None and view.section is None


def shown_window(qtbot, tab: str | None = None) -> MainWindow:
    """A window shown on relu_unfused, its session's front tab `tab` (default: the default)."""
    session = Session()
    if tab is not None:
        session.view.tab = tab
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    window = MainWindow(session)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


def test_the_window_brings_the_sessions_tab_forward(qtbot):
    window = shown_window(qtbot, "lifetime")
    assert not window.docks["lifetime"].visibleRegion().isEmpty()
    assert window.docks["slab"].visibleRegion().isEmpty()


def test_export_options_set_the_view(qapp, tmp_path):
    planned, pytorch = tmp_path / "planned.png", tmp_path / "pytorch.png"
    assert main(["export", str(TINY_SNAPSHOT), "--view", "map", "--png", str(planned)]) == 0
    assert main(["export", str(TINY_SNAPSHOT), "--view", "map", "--addresses", "pytorch",
                 "--png", str(pytorch)]) == 0
    assert QImage(str(planned)) != QImage(str(pytorch))


def test_the_allocator_tab_is_remembered_and_brought_back(qtbot):
    window = shown_window(qtbot)
    window.docks["allocator"].raise_()
    qtbot.waitUntil(lambda: window.session.view.tab == "allocator")
    other = shown_window(qtbot, window.session.view.tab)
    assert not other.docks["allocator"].visibleRegion().isEmpty()
    assert other.docks["slab"].visibleRegion().isEmpty()
