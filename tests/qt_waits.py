"""Waiting for the window's background work in GUI tests."""


def settled(qtbot, window, timeout: int = 10000) -> None:
    """Wait until the window's background work is done (the plan, or its error, has arrived,
    and the DAG has all its node items)."""
    qtbot.waitUntil(lambda: window.session.busy is None and not window.planning.running
                    and not window.dag_view.building, timeout=timeout)

