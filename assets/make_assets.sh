#!/usr/bin/env bash
# Regenerate what assets/ holds that is drawn, not written by hand:
#   icons/slabscope-N.png   the PNG renderings of icons/slabscope.svg (Qt's SVG renderer)
#   screenshots/*.png       the README's pictures, drawn by `slabscope export` from the examples
# Needs an installed slabscope (`make test` or `pip install .`); no display.
#   bash assets/make_assets.sh [PYTHON]     (default: .venv/bin/python, else python3)
set -euo pipefail
cd "$(dirname "$0")"
PY=${1:-$( [ -x ../.venv/bin/python ] && echo ../.venv/bin/python || echo python3 )}
export QT_QPA_PLATFORM=offscreen

"$PY" - <<'PYTHON'
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

from slabscope.app.icon import SIZES

app = QGuiApplication([])
renderer = QSvgRenderer("icons/slabscope.svg")
for size in SIZES:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    assert image.save(f"icons/slabscope-{size}.png"), size
PYTHON

mkdir -p screenshots
shot() {  # OUT EXAMPLE ARGS...: one README picture
    local out=$1 example=$2; shift 2
    "$PY" -m slabscope export "example_graphs/$example" --png "screenshots/$out" "$@"
}
shot window.png relu_unfused.json --view window --width 1440 --height 900
shot slab.png luminal_join.json --view slab --width 900 --height 260 --scale 2
shot dag.png diamond_exec.json --view dag --width 700 --height 420 --scale 2
shot lifetimes.png luminal_chain.json --view map --width 900 --height 320 --scale 2
ls -l icons/*.png screenshots/*.png
