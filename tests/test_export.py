"""PNG export: the requested scale, a picture that is not blank, and `slabscope export` headless."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QSize  # noqa: E402
from PySide6.QtGui import QImage  # noqa: E402

from slabscope import planner  # noqa: E402
from slabscope.app.cli import main  # noqa: E402
from slabscope.app.render import export_view
from slabscope.app.state.session import Session  # noqa: E402
from slabscope.app.views.export.png_export import render_png  # noqa: E402
from slabscope.app.views.slab.slab_view import SlabView  # noqa: E402
from tests.examples import RELU_UNFUSED  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def distinct_colors(image: QImage, step: int = 3) -> int:
    """How many different pixel colours a sparse grid over the image finds."""
    seen = set()
    for y in range(0, image.height(), step):
        for x in range(0, image.width(), step):
            seen.add(image.pixel(x, y))
    return len(seen)


def saturated_pixels(image: QImage, step: int = 2) -> int:
    """How many pixels of a sparse grid are strongly coloured (not grey, white or black)."""
    count = 0
    for y in range(0, image.height(), step):
        for x in range(0, image.width(), step):
            c = image.pixelColor(x, y)
            count += max(c.red(), c.green(), c.blue()) - min(c.red(), c.green(), c.blue()) > 100
    return count


def relu_session() -> Session:
    session = Session()
    session.set_graph(planner.load(RELU_UNFUSED), RELU_UNFUSED)
    return session


def test_render_png_writes_the_widget_at_the_requested_scale(qtbot, tmp_path):
    view = SlabView(relu_session())
    qtbot.addWidget(view)
    view.resize(640, 300)
    view.show()
    qtbot.waitExposed(view)
    out = render_png(view, tmp_path / "slab.png", scale=2)
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1280, 600)
    assert distinct_colors(image) >= 8


@pytest.mark.parametrize("view", ["slab", "map"])
def test_export_view_builds_the_view_headless(qapp, tmp_path, view):
    out = export_view(relu_session(), view, tmp_path / f"{view}.png", 1.5, QSize(600, 400))
    image = QImage(str(out))
    assert (image.width(), image.height()) == (900, 600)
    assert distinct_colors(image) >= 8


def test_cli_export_writes_a_png_of_twice_the_size(qapp, tmp_path, capsys):
    out = tmp_path / "out.png"
    code = main(["export", str(RELU_UNFUSED), "--png", str(out), "--view", "slab", "--scale", "2",
                 "--width", "500", "--height", "250"])
    assert code == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1000, 500)
    assert distinct_colors(image) >= 8
    assert "1000 x 500" in capsys.readouterr().out


def test_cli_export_honours_order_and_map_view(qapp, tmp_path):
    out = tmp_path / "map.png"
    assert main(["export", str(RELU_UNFUSED), "--png", str(out), "--view", "map",
                 "--order", "t1,y"]) == 0
    assert not QImage(str(out)).isNull()


@pytest.mark.parametrize("extra, message", [
    (["--scale", "0"], "--scale must be positive"),
    (["--order", "nope"], "unknown buffer 'nope'"),
    (["--width", "-3"], "--width must be positive"),
])
def test_cli_export_reports_bad_arguments_in_one_line(qapp, tmp_path, capsys, extra, message):
    assert main(["export", str(RELU_UNFUSED), "--png", str(tmp_path / "x.png"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_cli_export_offers_the_planners_algorithms(qapp, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["export", str(RELU_UNFUSED), "--png", str(tmp_path / "x.png"), "--algorithm", "magic"])
    assert stopped.value.code == 2
    assert "invalid choice: 'magic'" in capsys.readouterr().err


def test_cli_export_says_when_it_cannot_write(qapp, tmp_path, capsys):
    target = tmp_path / "missing" / "x.png"
    assert main(["export", str(RELU_UNFUSED), "--png", str(target)]) == 2
    assert "cannot write PNG" in capsys.readouterr().err


def test_export_runs_with_no_display_at_all(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY")}
    out = tmp_path / "out.png"
    result = subprocess.run(
        [sys.executable, "-m", "slabscope.app.cli", "export", "assets/example_graphs/relu_unfused.json",
         "--png", str(out), "--view", "slab", "--scale", "2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    image = QImage(str(out))
    assert (image.width(), image.height()) == (2400, 840)
    assert distinct_colors(image, step=5) >= 8
    assert result.stderr == ""


def test_cli_export_run_fills_the_timeline(qapp, tmp_path, capsys):
    out = tmp_path / "timeline.png"
    assert main(["export", str(RELU_UNFUSED), "--png", str(out), "--view", "timeline",
                 "--run", "--repeats", "2"]) == 0
    image = QImage(str(out))
    assert image.width() >= 1200 and image.height() >= 500  # long measured lines may widen it
    # Phase and kernel bars are saturated colours; the empty state is grey text only.
    assert saturated_pixels(image) > 100  # the empty state has none


def test_cli_export_run_needs_an_executable_graph(qapp, tmp_path, capsys):
    diamond = RELU_UNFUSED.parent / "diamond.json"
    assert main(["export", str(diamond), "--png", str(tmp_path / "t.png"), "--view", "timeline",
                 "--run"]) == 2
    assert "has no op" in capsys.readouterr().err


def test_timeline_without_a_run_is_refused(qapp, tmp_path, capsys):
    assert main(["export", str(RELU_UNFUSED), "--png", str(tmp_path / "t.png"),
                 "--view", "timeline"]) == 2
    assert "add --run" in capsys.readouterr().err
    assert not (tmp_path / "t.png").exists()


def test_svg_is_written_beside_the_png(qapp, tmp_path):
    png, svg = tmp_path / "map.png", tmp_path / "map.svg"
    assert main(["export", str(RELU_UNFUSED), "--view", "map", "--png", str(png),
                 "--svg", str(svg)]) == 0
    assert not QImage(str(png)).isNull()
    text = svg.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "</svg>" in text


def test_exports_leave_out_controls_hints_and_pointer_state(qtbot, tmp_path):
    from slabscope.app.views.export.png_export import export_mode

    session = relu_session()
    view = SlabView(session)
    qtbot.addWidget(view)
    view.resize(640, 300)
    view.show()
    session.hover_buffer("t0")
    session.select_buffers(["x"])
    assert view.layer.outlined()
    with export_mode(view):
        assert not view.controls.isVisible() and not view.details.isVisible()
        assert view.layer.outlined() == {}
    assert view.controls.isVisible() and set(view.layer.outlined()) == {"t0", "x"}
