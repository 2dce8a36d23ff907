"""Keyboard zoom and pan for the plot views: +/- zoom, arrows pan, 0 fits everything."""

from __future__ import annotations

from PySide6.QtCore import Qt

ZOOM_STEP = 1.25
PAN_FRACTION = 0.1  # of the visible span per arrow press

ZOOM_IN_KEYS = (Qt.Key.Key_Plus, Qt.Key.Key_Equal)
ZOOM_OUT_KEYS = (Qt.Key.Key_Minus, Qt.Key.Key_Underscore)
FIT_KEYS = (Qt.Key.Key_0, Qt.Key.Key_Home)


def zoom_pan_key(view_box, key, zoom_x: bool = True, zoom_y: bool = False) -> bool:
    """Apply `key` to `view_box` if it is a zoom or pan key; return whether it was one.

    Only the axes the view lets the user zoom (`zoom_x`, `zoom_y`) are zoomed, panned or refitted.
    """
    (x0, x1), (y0, y1) = view_box.viewRange()
    if key in ZOOM_IN_KEYS or key in ZOOM_OUT_KEYS:
        factor = 1 / ZOOM_STEP if key in ZOOM_IN_KEYS else ZOOM_STEP
        view_box.scaleBy(x=factor if zoom_x else 1.0, y=factor if zoom_y else 1.0)
    elif key == Qt.Key.Key_Left and zoom_x:
        view_box.translateBy(x=-(x1 - x0) * PAN_FRACTION)
    elif key == Qt.Key.Key_Right and zoom_x:
        view_box.translateBy(x=(x1 - x0) * PAN_FRACTION)
    elif key == Qt.Key.Key_Up and zoom_y:
        view_box.translateBy(y=(y1 - y0) * PAN_FRACTION)
    elif key == Qt.Key.Key_Down and zoom_y:
        view_box.translateBy(y=-(y1 - y0) * PAN_FRACTION)
    elif key in FIT_KEYS:
        view_box.enableAutoRange(x=zoom_x or None, y=zoom_y or None)
    else:
        return False
    return True


def bring_into_view(view_box, rect, along_y: bool = True) -> None:
    """Pan `view_box` (zoom kept) so that the data rectangle `rect` is centred, unless it is
    already within view; only along x unless `along_y`."""
    (x0, x1), (y0, y1) = view_box.viewRange()
    inside_x = x0 <= rect.left() and rect.right() <= x1
    inside_y = y0 <= rect.top() and rect.bottom() <= y1
    if inside_x and (inside_y or not along_y):
        return
    dx = 0.0 if inside_x else rect.center().x() - (x0 + x1) / 2
    dy = 0.0 if inside_y or not along_y else rect.center().y() - (y0 + y1) / 2
    view_box.translateBy(x=dx, y=dy)
