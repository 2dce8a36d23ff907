#!/usr/bin/env bash
# Regenerate what assets/ holds that is drawn, not written by hand:
#   icons/slabscope-N.png   the PNG renderings of icons/slabscope.svg (Qt's SVG renderer)
#   ../docs/images/*.png    the README's and docs' pictures, drawn by `slabscope export` from the
#                           examples and the small files under tests/data
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

IMAGES=../docs/images
mkdir -p "$IMAGES"
shot() {  # OUT FILE ARGS...: one picture of the docs; FILE is relative to the repository root
    local out=$1 file=$2; shift 2
    "$PY" -m slabscope export "../$file" --png "$IMAGES/$out" "$@"
}
EXAMPLES=assets/example_graphs
shot window.png tests/data/pt2/attention.pt2 --view window --width 1280 --height 800
shot allocator.png tests/data/tiny_snapshot.pickle --view map --addresses pytorch --width 900 --height 320
shot snapshot-window.png tests/data/tiny_snapshot.pickle --view window --width 1280 --height 800
shot compare.png $EXAMPLES/relu_unfused.json --view compare --compare ../$EXAMPLES/relu_fused.json --width 1100 --height 420
shot slab.png $EXAMPLES/luminal_join.json --view slab --width 900 --height 260 --scale 2
shot dag.png $EXAMPLES/diamond_exec.json --view dag --width 700 --height 420 --scale 2
shot lifetimes.png $EXAMPLES/luminal_chain.json --view map --width 900 --height 320 --scale 2
ls -l icons/*.png "$IMAGES"/*.png
