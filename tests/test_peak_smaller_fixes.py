"""The smaller fixes of the peak work: Find closes on Enter and counts right, the replay's
default speed follows the plan's length, tooltips fit the window, the Lifetimes plot is tall."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect

from slabscope.app.qt.placement_replay import SPEEDS, WHOLE_REPLAY_S, default_speed
from slabscope.app.views.common.window_tooltips import fitted_position
from tests.qt_waits import settled, show_tab


def test_find_says_one_match_and_closes_on_enter(window):
    find = window.find_dialog
    find.open_find()
    assert find.isVisible()
    assert find.search("workspace") == [("buffer", "workspace")]
    assert find.count.text().startswith("1 match;")
    find.choose_current()
    assert not find.isVisible() and window.session.selection == ("workspace",)
    find.search("t")
    assert " matches" in find.count.text()


def test_the_default_replay_speed_plays_a_whole_plan_in_about_twenty_seconds(qtbot, window):
    assert default_speed(7) == 2.0
    assert default_speed(18_692) == 1024.0  # pangu: 18 s instead of 2.6 hours
    for steps in (50, 1_000, 62_185):
        speed = default_speed(steps)
        assert speed in SPEEDS and steps / speed <= WHOLE_REPLAY_S
    view = window.slab_view
    assert view.animation.speed == default_speed(len(window.session.plan.steps))
    view.speed.setCurrentIndex(SPEEDS.index(64.0))  # the user's choice then stays
    window.session.sort_by_size()
    settled(qtbot, window)
    assert view.animation.speed == 64.0
    window.session.undo_stack.undo()  # clean again: closing asks nothing
    settled(qtbot, window)


def test_a_tooltip_near_the_window_edge_is_moved_inside_it():
    frame = QRect(0, 0, 1000, 800)
    assert fitted_position(QPoint(100, 100), (300, 100), frame) == QPoint(102, 116)
    moved = fitted_position(QPoint(950, 780), (300, 100), frame)
    assert moved.x() + 300 <= 1000 and moved.y() + 100 <= 800 and moved.y() < 780


def test_the_lifetimes_plot_is_at_least_250_pixels_tall_at_the_default_size(qtbot, window):
    window.resize(1440, 900)
    show_tab(qtbot, window, "lifetime")
    qtbot.waitUntil(lambda: window.lifetime_view.plot_widget.height() >= 250)
