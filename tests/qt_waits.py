"""Waiting for the window's background work in GUI tests, and showing a panel on its own."""


def settled(qtbot, window, timeout: int = 10000) -> None:
    """Wait until the window's background work is done (the plan, or its error, has arrived,
    the DAG has all its node items, and the status bar no longer shows the work: it hears of
    the end on a later turn of the event loop)."""
    qtbot.waitUntil(lambda: window.session.busy is None and not window.planning.running
                    and not window.dag_view.building and not window.task_progress.isVisible(),
                    timeout=timeout)



def show_tab(qtbot, window, name: str) -> None:
    """Bring dock tab `name` ("lifetime", ...) forward and wait until it has drawn what arrived
    while it was behind another tab."""
    window.docks[name].raise_()
    panel = window.docks[name].widget()
    qtbot.waitUntil(lambda: not panel.visibleRegion().isEmpty()
                    and not getattr(panel, "pending", False))


def planned_window(qtbot, monkeypatch, settings_folder, path):
    """A shown `MainWindow` with blank settings (kept in `settings_folder`) that opened `path`
    and drew its first-fit plan."""
    from PySide6.QtCore import QSettings

    from slabscope.app.state.session import Session
    from slabscope.app.window import MainWindow

    settings = QSettings(str(settings_folder / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(Session(), settings)
    qtbot.addWidget(win)
    monkeypatch.setattr(win, "confirm_discard", lambda: True)
    win.show()
    qtbot.waitExposed(win)
    win.open_path(path)
    qtbot.waitUntil(lambda: win.session.plan is not None, timeout=20000)
    settled(qtbot, win)
    return win


def shown_view(qtbot, graph, size):
    """A `DagView` of `graph` in a session of its own, shown at `size` and exposed."""
    from slabscope.app.state.session import Session
    from slabscope.app.views.dag.dag_view import DagView

    session = Session()
    session.set_graph(graph)
    view = DagView(session)
    qtbot.addWidget(view)
    view.resize(size)
    view.show()
    qtbot.waitExposed(view)
    return view
