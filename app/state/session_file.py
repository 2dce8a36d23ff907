"""Session files (`.slabscope`): JSON naming a graph file and the settings to plan it with.

Reading one checks everything before it is used, so a damaged or hand-edited session is one
line naming what is wrong: the file goes through the planner's input limits (a regular file,
bounded size, nesting and integer digits), then every field is checked for its type and range.
"""

from __future__ import annotations

import difflib
from pathlib import Path

from slabscope import planner
from slabscope.planner.input_limits import check_u64, quoted, read_json

SESSION_FORMAT = "slabscope-session"
SESSION_VERSION = 1
SESSION_KEYS = ("format", "version", "graph", "order", "algorithm", "conflicts", "capacity")


def _shown(value) -> str:
    """`repr` of a field's value, cut short: a message stays one readable line."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:60]}..."


def _fail(path: Path, message: str):
    raise planner.PlanError(f"session {path}: {message}")


def _choice(path: Path, data: dict, key: str, default: str, known) -> str:
    value = data.get(key, default)
    if not isinstance(value, str) or value not in known:
        _fail(path, f"{key!r} must be one of {', '.join(known)}, got {_shown(value)}")
    return value


def read_session(path) -> tuple[planner.Graph, Path, dict]:
    """Parse and check a session file: the graph it names, that graph's path, and the settings
    (`order`, `algorithm`, `conflicts`, `capacity`) ready for `Session.set_graph`."""
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
    conflicts = _choice(path, data, "conflicts", "dag", planner.CONFLICT_MODELS)
    capacity = data.get("capacity")
    if capacity is not None:
        try:
            check_u64(capacity, "capacity")
        except planner.PlanError as exc:
            _fail(path, str(exc))
    order = data.get("order")
    if order is not None and not (isinstance(order, list) and all(isinstance(n, str) for n in order)):
        _fail(path, "'order' must be a list of buffer names")
    graph_path = (path.parent / stored).resolve()
    graph = planner.load(graph_path)
    graph.request_order(order)  # raises a PlanError naming an unknown or repeated buffer
    return graph, graph_path, {"order": order, "algorithm": algorithm, "conflicts": conflicts,
                               "capacity": capacity}
