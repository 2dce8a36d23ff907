"""The whole window in a picture: each panel in its export mode (no replay buttons, mode combo
boxes, hover legends or checkboxes) and no passing status message."""

from __future__ import annotations

from contextlib import contextmanager


def _panels(window) -> list:
    """The window's panels that know an export mode."""
    panels = [window.slab_view, window.lifetime_view, window.graph_panel, window.timeline_view]
    return [p for p in panels if hasattr(p, "enter_export") and hasattr(p, "leave_export")]


def enter_window_export(window) -> None:
    """Put every panel of `window` in its export mode and drop the status bar's passing message
    ("Opened …", "Exported …"), which says nothing about the plan."""
    window.statusBar().clearMessage()
    for panel in _panels(window):
        panel.enter_export()


def leave_window_export(window) -> None:
    """Undo `enter_window_export` (the passing message is not brought back)."""
    for panel in _panels(window):
        panel.leave_export()


@contextmanager
def without_veils(window):
    """The panels' busy veils ("Searching… best so far …") hidden while a picture of `window`
    or one of its panels is drawn: the picture's title line says whether its plan is
    provisional or out of date, and a veil would only dim the plan."""
    veiled = [overlay for overlay in window.busy_overlays.values() if not overlay.isHidden()]
    for overlay in veiled:
        overlay.hide()
    try:
        yield
    finally:
        for overlay in veiled:
            overlay.show()
