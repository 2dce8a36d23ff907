"""The window's front bottom tab, kept in the session's view settings: a session file saves it,
and opening one brings its tab forward."""

from __future__ import annotations

from PySide6.QtWidgets import QDockWidget

from slabscope.app.state.view_settings import TABS


class TabMemory:
    """Records in `session.view.tab` which of `docks` (by view-settings name) the user brought
    forward, and brings the session's tab forward when a file opens."""

    def __init__(self, session, docks: dict[str, QDockWidget]):
        self.session = session
        self.docks = {name: dock for name, dock in docks.items() if name in TABS}
        for name, dock in self.docks.items():
            dock.visibilityChanged.connect(lambda shown, name=name: self._shown(name, shown))
        session.sigOpened.connect(self.bring_forward)

    def _shown(self, name: str, shown: bool) -> None:
        # A tabbed dock becomes visible when its tab is chosen; a hidden window tells nothing.
        if shown and self.docks[name].window().isVisible():
            self.session.view.tab = name

    def bring_forward(self, *_) -> None:
        """Raise the dock of the session's tab."""
        self.docks[self.session.view.tab].raise_()
