"""Help ▸ Keyboard shortcuts: every menu shortcut of the window, read from its actions, and the
keys each panel understands."""

from __future__ import annotations

from html import escape

from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

PANEL_KEYS = (
    ("DAG", "wheel or + / − zoom · drag or arrows pan · Ctrl+0 fits the whole graph · "
            "M switches the boxes' colour (bytes live, bytes written, kind) · G folds into "
            "groups · double-click a group opens or closes it · click a node to select it · "
            "the overview in the corner moves the view · O hides or shows it"),
    ("Slab bar", "drag across a range to zoom into it · Shift+drag pans · double-click or 0 "
                 "shows all · + / − zoom · arrows pan · Space plays or pauses the replay · "
                 "[ and ] step · Esc shows the whole plan"),
    ("Lifetime map", "drag across a region to zoom into it · Shift+drag pans · double-click or 0 "
                     "shows all · + / − zoom both axes · arrows pan"),
    ("Requests", "drag rows to reorder"),
)


def menu_shortcuts(window) -> list[tuple[str, str, str]]:
    """(menu, action, keys) for every action with a shortcut in `window`'s menu bar."""
    rows = []
    for menu_action in window.menuBar().actions():
        menu = menu_action.menu()
        if menu is None:
            continue
        stack = [(menu_action.text().replace("&", ""), menu)]
        while stack:
            title, current = stack.pop()
            for action in current.actions():
                if action.menu() is not None:
                    stack.append((f"{title} ▸ {action.text().replace('&', '')}", action.menu()))
                elif not action.shortcut().isEmpty():
                    keys = ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText)
                                     for s in action.shortcuts())
                    rows.append((title, action.text().replace("&", "").rstrip("…"), keys))
    return rows


def shortcuts_html(window) -> str:
    """The dialog's text: menu shortcuts, then panel keys."""
    rows = "".join(f"<tr><td>{escape(m)}</td><td>{escape(a)}</td><td><b>{escape(k)}</b></td></tr>"
                   for m, a, k in menu_shortcuts(window))
    panels = "".join(f"<tr><td><b>{escape(p)}</b></td><td>{escape(k)}</td></tr>"
                     for p, k in PANEL_KEYS)
    return (f"<h3>Menus</h3><table cellpadding='3'>{rows}</table>"
            f"<h3>Panels</h3><table cellpadding='3'>{panels}</table>")


class ShortcutsDialog(QDialog):
    """The shortcuts of `window`, as `shortcuts_html` lists them."""

    def __init__(self, window):
        super().__init__(window)
        self.setWindowTitle("Keyboard shortcuts")
        self.text = QTextBrowser()
        self.text.setHtml(shortcuts_html(window))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
        self.resize(620, 560)
