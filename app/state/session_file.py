"""Session files (`.slabscope`): JSON naming a graph file and the settings to plan it with.

Reading one checks everything before it is used, so a damaged or hand-edited session is one
line naming what is wrong: the file goes through the planner's input limits (a regular file,
bounded size, nesting and integer digits), then every field is checked for its type and range.

A session names its graph relative to its own folder. A graph path that is absolute, or that
leads out of that folder (`..`, or a symlink pointing elsewhere), is refused before anything is
read (`GraphOutsideSession`); the window asks the user instead, naming the path. The graph file
is one the user did not open themselves, so an error reading it never quotes what is inside.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from slabscope import planner
from slabscope.app.state.view_settings import ViewSettings, view_settings_from
from slabscope.planner.formats.safety.input_limits import check_u64, quoted, read_json
from slabscope.planner.support.cancel import NEVER, Cancelled, CancelToken

SESSION_FORMAT = "slabscope-session"
SESSION_VERSION = 1
# "view" (how the views show the plan) is optional: files written before it open as before.
# "compare" (the file the Compare view sets against the graph, relative like "graph") is optional.
# "in_place" (the Plan menu's In place switch) is optional: files without it open with it off.
SESSION_KEYS = ("format", "version", "graph", "order", "algorithm", "conflicts", "capacity", "view",
                "compare", "in_place")


def _shown(value) -> str:
    """`repr` of a field's value, cut short: a message stays one readable line."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}..."


class GraphOutsideSession(planner.PlanError):
    """The session names a graph outside its own folder; `graph_path` is where it leads,
    `stored` the path as the session names it."""

    def __init__(self, message: str, graph_path: Path, stored: str):
        super().__init__(message)
        self.graph_path = graph_path
        self.stored = stored  # the path as the session names it


def graph_location(path: Path, stored: str) -> tuple[Path, str | None]:
    """Where the graph path `stored` of the session file `path` leads, and why it lies outside
    the session's folder (None when it lies inside)."""
    folder = path.resolve().parent
    if Path(stored).is_absolute():
        return Path(stored).resolve(), "is absolute"
    target = (folder / stored).resolve()
    if target.is_relative_to(folder):
        return target, None
    if ".." in Path(stored).parts:
        return target, "leads out of the session's folder"
    return target, "leads out of the session's folder through a symlink"


def _fail(path: Path, message: str):
    raise planner.PlanError(f"session {path}: {message}")


def _choice(path: Path, data: dict, key: str, default: str | None, known) -> str | None:
    if key not in data:
        return default
    value = data[key]
    if not isinstance(value, str) or value not in known:
        _fail(path, f"{key!r} must be one of {', '.join(known)}, got {_shown(value)}")
    return value


def read_session(path, *, allow_outside: bool = False, cancel: CancelToken = NEVER
                 ) -> tuple[planner.Graph, Path, dict]:
    """Parse and check a session file: the graph it names, that graph's path, and the settings
    (`order`, `algorithm`, `conflicts`, `capacity`, `view`) ready for `Session.set_graph`, with
    `compare`, the file the Compare view sets against it (a path, or None), and `in_place`,
    whether the In place switch was on.

    A graph outside the session's folder is a `GraphOutsideSession` unless `allow_outside`
    (the user said yes to that path). `cancel` stops loading the graph.
    """
    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        raise planner.PlanError(f"{path.name} is not a Slabscope session file")
    for key in data:
        if key not in SESSION_KEYS:
            close = difflib.get_close_matches(key, SESSION_KEYS, n=1)
            _fail(path, f"unknown key {quoted(key)}"
                        + (f"; did you mean {close[0]!r}?" if close else ""))
    version = data.get("version")
    if type(version) is not int or not 1 <= version <= SESSION_VERSION:
        _fail(path, f"version {_shown(version)} is not one this Slabscope reads "
                    f"(1 to {SESSION_VERSION})")
    stored = data.get("graph")
    if not isinstance(stored, str) or not stored or "\0" in stored or not stored.isprintable():
        _fail(path, f"'graph' must be a file path, got {_shown(stored)}")
    algorithm = _choice(path, data, "algorithm", "first-fit", planner.ALGORITHMS)
    # None: the graph's own model (`Session.set_graph` asks `planner.default_conflicts`).
    conflicts = _choice(path, data, "conflicts", None, planner.CONFLICT_MODELS)
    capacity = data.get("capacity")
    if capacity is not None:
        try:
            check_u64(capacity, "capacity")
        except planner.PlanError as exc:
            _fail(path, str(exc))
    order = data.get("order")
    if order is not None and not (isinstance(order, list) and all(isinstance(n, str) for n in order)):
        _fail(path, "'order' must be a list of buffer names")
    try:
        view = view_settings_from(data["view"]) if "view" in data else ViewSettings()
    except ValueError as exc:
        _fail(path, str(exc))
    in_place = data.get("in_place", False)
    if type(in_place) is not bool:
        _fail(path, f"'in_place' must be true or false, got {_shown(in_place)}")
    compare = _compare_path(path, data.get("compare"), allow_outside)
    graph_path, outside = graph_location(path, stored)
    if outside and not allow_outside:
        raise GraphOutsideSession(
            f"session {path}: its graph path {quoted(stored)} {outside}; a session names its "
            f"graph relative to its own folder", graph_path, stored)
    graph = _load_named_graph(path, graph_path, cancel)
    try:
        graph.request_order(order)  # an unknown or repeated name from the session's own order
    except planner.PlanError as exc:
        _fail(path, f"'order': {exc}")
    return graph, graph_path, {"order": order, "algorithm": algorithm, "conflicts": conflicts,
                               "capacity": capacity, "view": view, "compare": compare,
                               "in_place": in_place}


def _compare_path(path: Path, stored, allow_outside: bool) -> Path | None:
    """The file the session compares its graph with: None when it names none. Like the graph, it
    must lie in the session's folder unless the user agreed to outside paths."""
    if stored is None:
        return None
    if not isinstance(stored, str) or not stored or "\0" in stored or not stored.isprintable():
        _fail(path, f"'compare' must be a file path, got {_shown(stored)}")
    target, outside = graph_location(path, stored)
    if outside and not allow_outside:
        _fail(path, f"its compare path {quoted(stored)} {outside}; a session names files "
                    f"relative to its own folder")
    return target


def _load_named_graph(path: Path, graph_path: Path, cancel: CancelToken) -> planner.Graph:
    """The graph at `graph_path`; an error says only that it cannot be read, never what the
    file holds (a session can name any file, and the user did not open that one)."""
    if not graph_path.exists():
        _fail(path, f"the graph file {graph_path} it names does not exist")
    try:
        return planner.load(graph_path, cancel=cancel)
    except Cancelled:
        raise
    except planner.PlanError:
        raise planner.PlanError(f"session {path}: the graph file {graph_path} it names cannot be "
                                f"read as a graph; open that file itself to see why") from None
