"""How many node labels OCR reads in the DAG panel's first view, per model: the window's panel
at the window's default size (1440×900) and `slabscope export --view dag` at that panel's size.

    QT_QPA_PLATFORM=offscreen python -m bench.dag_ocr [--out DIR] [MODEL ...]

Models (default): every `light_*.onnx` of onnx's backend test data, the `.pt2` files of
tests/data/pt2, and four models exported here with torch when it is installed (a small CNN, an
MLP, a transformer block and an attention layer), as stand-ins for models the drawing was not
tuned on. Needs the `tesseract` program.

A label is read when a word tesseract finds (`--psm 11`, sparse text) has its centre in a node's
box (the export may widen a box round its label) and equals, ignoring case and the punctuation
round it, a whole word of the op or name line drawn in that box (at least two characters, not
only digits). Each node counts once; only nodes whose box lies wholly in the first view count.
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parents[1]
PT2 = ROOT / "tests" / "data" / "pt2"
TARGET = 8  # labels the issue asks to be read in each first view
WAIT_S = 120.0


def light_onnx_models() -> list[Path]:
    """The `light_*.onnx` models of onnx's backend test data (weights stripped)."""
    import onnx

    return sorted((Path(onnx.__file__).parent / "backend" / "test" / "data" / "light").glob(
        "light_*.onnx"))


def torch_models(folder: Path) -> list[Path]:
    """A small CNN, an MLP, a transformer block and an attention layer exported with
    torch.export into `folder` (none when torch is absent)."""
    try:
        import torch
        from torch import nn
    except ImportError:
        print("torch is not installed: no models exported here", file=sys.stderr)
        return []

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
            self.left = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
            self.right = nn.Sequential(nn.Conv2d(8, 8, 1), nn.Sigmoid())
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.head = nn.Linear(16, 10)

        def forward(self, x):
            x = self.stem(x)
            x = torch.cat([self.left(x), self.right(x) * x], dim=1)
            return self.head(self.pool(x).flatten(1))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64),
                                        nn.Linear(64, 64), nn.ReLU(), nn.Dropout(0.0),
                                        nn.Linear(64, 10))

        def forward(self, x):
            return torch.log_softmax(self.layers(x), dim=-1)

    class Attention(nn.Module):
        def __init__(self, dim: int = 32, heads: int = 4):
            super().__init__()
            self.heads = heads
            self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
            self.out = nn.Linear(dim, dim)

        def forward(self, x):
            b, t, d = x.shape
            split = lambda y: y.view(b, t, self.heads, d // self.heads).transpose(1, 2)  # noqa: E731
            q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
            weights = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
            return self.out((weights @ v).transpose(1, 2).reshape(b, t, d))

    class Block(nn.Module):
        def __init__(self, dim: int = 32):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.attn = Attention(dim)
            self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

        def forward(self, x):
            x = x + self.attn(self.norm1(x))
            return x + self.mlp(self.norm2(x))

    made = []
    for name, model, example in (("cnn", SmallCNN(), torch.randn(2, 3, 16, 16)),
                                 ("mlp_wide", MLP(), torch.randn(8, 32)),
                                 ("block", Block(), torch.randn(2, 8, 32)),
                                 ("attention_heads", Attention(), torch.randn(2, 8, 32))):
        path = folder / f"{name}.pt2"
        torch.export.save(torch.export.export(model.eval(), (example,)), path)
        made.append(path)
    return made


def ocr_words(image: Path) -> list[tuple[str, float, float]]:
    """Each word tesseract reads in `image`: its text and its centre in pixels."""
    out = subprocess.run(["tesseract", str(image), "-", "--psm", "11", "tsv"],
                         capture_output=True, text=True, check=True).stdout
    words = []
    for row in csv.DictReader(out.splitlines(), delimiter="\t", quoting=csv.QUOTE_NONE):
        text = (row.get("text") or "").strip()
        if row.get("level") == "5" and text:
            words.append((text, int(row["left"]) + int(row["width"]) / 2,
                          int(row["top"]) + int(row["height"]) / 2))
    return words


def label_words(texts) -> set[str]:
    """The whole words of a box's drawn lines that a read word may match."""
    words = set()
    for text in texts:
        for word in text.split():
            word = _bare(word)
            if len(word) >= 2 and not word.isdigit():
                words.add(word)
    return words


def _bare(word: str) -> str:
    return re.sub(r"^\W+|\W+$", "", word.replace("…", "")).lower()


def unread(boxes, words) -> list[str]:
    """The drawn lines of each of `boxes` (`(lines, QRectF in image pixels)`) with no read
    word of theirs inside the box."""
    missed = []
    for texts, rect in boxes:
        wanted = label_words(texts)
        if not any(rect.contains(x, y) and _bare(text) in wanted for text, x, y in words):
            missed.append(" ".join(texts) or "(no text)")
    return missed


def _wait(condition, timeout: float = WAIT_S) -> None:
    from PySide6.QtWidgets import QApplication

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not settle")
        QApplication.processEvents()
        time.sleep(0.01)


def panel_picture(path: Path, out: Path):
    """The window's DAG panel at the default window size: the picture, the boxes in view with
    their drawn lines (in the picture's pixels) and the panel's size."""
    from PySide6.QtCore import QSettings

    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow

    with tempfile.TemporaryDirectory() as blank:
        settings = QSettings(os.path.join(blank, "s.ini"), QSettings.Format.IniFormat)
        window = MainWindow(Session(), settings)
        window.show()
        window.open_path(path)
        _wait(lambda: window.session.plan is not None and window.session.busy is None
              and not window.planning.running and not window.dag_view.building)
        view = window.dag_view
        view.grab().save(str(out))
        boxes = [(texts, rect.translated(view.viewport().pos()))
                 for texts, rect in view.labels_in_view()]
        size = window.graph_panel.size()
        window.close()
        window.deleteLater()
    return boxes, size


def export_picture(path: Path, out: Path, size) -> list:
    """`slabscope export FILE --view dag --width W --height H` at the panel's size, drawn the
    way `render.export_view` draws it, with the boxes in view and their drawn lines."""
    from PySide6.QtCore import Qt

    from slabscope import planner
    from slabscope.app.render import build_view, collect_qt_garbage, settle
    from slabscope.app.state.session import Session
    from slabscope.app.views.export.export_title import export_title
    from slabscope.app.views.export.png_export import export_mode, render_image, title_height

    session = Session()
    session.set_graph(planner.load(path), path)
    widget = build_view(session, "dag")
    widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
    title = export_title(session)
    top = title_height(widget)
    widget.resize(size.width(), max(1, size.height() - top))
    widget.show()
    settle(widget)
    with export_mode(widget):
        render_image(widget, 1.0, title).save(str(out))
        view = widget.dag_view
        offset = view.viewport().mapTo(widget, view.viewport().rect().topLeft())
        boxes = [(texts, rect.translated(offset.x(), offset.y() + top))
                 for texts, rect in view.labels_in_view()]
    widget.close()
    widget.deleteLater()
    collect_qt_garbage()
    return boxes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", type=Path, help="graph files (default: see above)")
    parser.add_argument("--out", type=Path, help="folder for the pictures (default: a temporary one)")
    parser.add_argument("--missed", action="store_true", help="list the labels not read")
    args = parser.parse_args()
    from slabscope.app.render import ensure_application

    ensure_application()
    with tempfile.TemporaryDirectory(prefix="dag-ocr-") as scratch:
        out = args.out or Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        models = args.models or (light_onnx_models() + sorted(PT2.glob("*.pt2"))
                                 + torch_models(Path(scratch)))
        print(f"{'model':28} {'panel':>9} {'in view':>8} {'read':>5} {'export read':>12}")
        short = []
        for model in models:
            panel_png, export_png = out / f"{model.stem}_panel.png", out / f"{model.stem}_export.png"
            boxes, size = panel_picture(model, panel_png)
            panel_missed = unread(boxes, ocr_words(panel_png))
            panel_read = len(boxes) - len(panel_missed)
            export_boxes = export_picture(model, export_png, size)
            export_missed = unread(export_boxes, ocr_words(export_png))
            export_read = len(export_boxes) - len(export_missed)
            print(f"{model.stem:28} {size.width():>4}×{size.height():<4} {len(boxes):>8} "
                  f"{panel_read:>5} {export_read:>12}", flush=True)
            if args.missed:
                print(f"    not read in the panel: {'; '.join(panel_missed) or '-'}")
                print(f"    not read in the export ({len(export_boxes)} in view): "
                      f"{'; '.join(export_missed) or '-'}")
            if min(panel_read, export_read) < min(TARGET, len(boxes)):
                short.append(model.stem)
        print(f"under {TARGET} labels read (or fewer than the nodes in view): "
              f"{', '.join(short) or 'none'}")


if __name__ == "__main__":
    main()
