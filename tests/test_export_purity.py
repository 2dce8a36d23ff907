"""Exports are pure functions of their arguments: no saved settings, no controls or passing status
in the picture, and a title line that says what the picture shows."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSize  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.render import export_view  # noqa: E402
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.export.export_title import export_title  # noqa: E402
from slabscope.app.views.export.png_export import export_mode, title_height  # noqa: E402
from slabscope.app.window import LAYOUT_KEY, MainWindow  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402


def relu_session() -> Session:
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    return session


def test_the_title_names_file_algorithm_conflicts_live_peak_slab_bound_and_gap():
    assert export_title(relu_session()) == ("relu_unfused.json · first-fit · dag conflicts · "
                                            "live peak 1.14 MiB at step 1 · "
                                            "slab 1.14 MiB · bound 1.14 MiB · gap 0 B (0.0%)")


def test_a_window_export_never_reads_saved_settings(qtbot, tmp_path):
    size = QSize(1300, 800)
    clean = export_view(relu_session(), "window", tmp_path / "clean.png", 1.0, size)
    # The user brings the Lifetimes tab forward and closes the window: its layout is saved.
    window = MainWindow(relu_session())
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.docks["lifetime"].raise_()
    window.close()
    assert window.settings.value(LAYOUT_KEY) is not None
    used = export_view(relu_session(), "window", tmp_path / "used.png", 1.0, size)
    assert QImage(str(clean)) == QImage(str(used))


def test_an_export_has_the_requested_size_with_its_title_line_drawn(qapp, tmp_path):
    out = export_view(relu_session(), "map", tmp_path / "map.png", 1.0, QSize(700, 400))
    image = QImage(str(out))
    assert (image.width(), image.height()) == (700, 400)
    # Dark text pixels in the title strip.
    strip = [image.pixelColor(x, y).lightness() for y in range(0, 20) for x in range(0, 400, 2)]
    assert min(strip) < 100


def test_the_window_in_export_mode_shows_no_controls_or_passing_message(qtbot):
    window = MainWindow(relu_session())
    qtbot.addWidget(window)
    window.resize(1300, 800)
    window.show()
    qtbot.waitExposed(window)
    window.statusBar().showMessage("Opened relu_unfused.json")
    with export_mode(window):
        assert window.statusBar().currentMessage() == ""
        assert not window.slab_view.controls.isVisible()
        assert not window.slab_view.fit_button.isVisible()
        assert window.lifetime_view.placement_choice.isHidden()
        assert window.timeline_view.log_scale.isHidden()
        assert window.dag_view._exporting and window.dag_view.minimap.isHidden()
    assert window.slab_view.controls.isVisible() and not window.timeline_view.log_scale.isHidden()
    assert not window.dag_view._exporting


def test_a_fitted_dag_leaves_the_colour_key_its_strip(qtbot):
    window = MainWindow(relu_session())
    qtbot.addWidget(window)
    window.resize(1300, 800)
    window.show()
    qtbot.waitExposed(window)
    view = window.dag_view
    view.fit()
    top = min(view.mapFromScene(item.pos()).y() - item.box.height() / 2 * view.transform().m22()
              for item in view._items)
    assert top >= title_height(view) - 4  # below the key's line of text
