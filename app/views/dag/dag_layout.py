"""Where to draw each node of a DAG: a layered (Sugiyama-style) drawing, no Qt involved.

Layers come from the longest path from a source, edges spanning several layers get one
waypoint per layer they cross, crossings are reduced by barycenter sweeps, and x positions
pull each node towards its neighbours while keeping the order and a minimum gap. Rows are as
far apart as their edges need: a straight arrow needs little room, a long sideways bend more
(a chain's first view then shows twice the nodes it did at one fixed gap).

Waypoints are capped at about twice the graph's size: on a large graph whose one source feeds
every block (a transformer's weight upload), the longest edges would otherwise cross thousands
of layers each and need millions of waypoints. They are capped per layer too: a recorded
training step's forward ops feed their backward ops hundreds of layers below, and routing
those edges made each row thousands of units wide, its few boxes far apart (a GRU step's first
view showed one box). The longest edges go first, so that no layer is crossed by more than
`LAYER_CROSSINGS`. Edges past either cap have no waypoints, take no part in ordering or
placement, and are drawn as stubs at their two ends; so are the edges that skip layers out of
a node feeding more than `FAN_STUBS` nodes, which would fan across the drawing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

NODE_HEIGHT = 24.0    # a box: one line of text and the memory bar under it
MIN_ROOM = 10.0       # vertical room between two rows whose edges run straight down
MAX_ROOM = 30.0       # ... and between rows with the longest sideways bends
BEND_ROOM = 0.15      # room per unit of the widest sideways step between two rows
NODE_GAP = 24.0       # horizontal gap between neighbours in a layer
WAYPOINT_WIDTH = 8.0  # the width a long edge takes up where it crosses a layer
SWEEPS = 4            # down-and-up barycenter passes (enough to settle on graphs we show)
MIN_WAYPOINT_CAP = 20_000  # graphs needing fewer waypoints than this get all of them
RECENTRE_VERTICES = 2_000  # past this many vertices each row is centred on x = 0 (see below)
FAN_STUBS = 8         # a node feeding more nodes draws its edges past the next layer as stubs
LAYER_CROSSINGS = 8   # edges routed across one layer at most: the longest past it are stubs


@dataclass(frozen=True)
class DagLayout:
    """Node centres and edge polylines in scene units (y grows downwards, one row per layer)."""

    layer: tuple[int, ...]
    x: tuple[float, ...]
    y: tuple[float, ...]
    edge_points: tuple[tuple[tuple[float, float], ...], ...]
    width: float
    height: float
    # Edges (by index into `edge_points`) that span several layers with no waypoints: stubs.
    stubs: frozenset[int] = frozenset()


def layered_layout(successors, topo, widths) -> DagLayout:
    """Lay out nodes `0..n-1` with direct `successors`, a topological order `topo` and box `widths`.

    `edge_points[k]` is the polyline of the k-th edge in `(src, dst)` order of `successors`,
    from the bottom of the source to the top of the destination; an edge in `stubs` is only
    its two ends.
    """
    n = len(successors)
    layer = [0] * n
    for v in topo:
        for s in successors[v]:
            layer[s] = max(layer[s], layer[v] + 1)
    longest = _longest_routed_span(successors, layer)
    # Virtual vertices: real nodes first, then one waypoint per crossed layer of each long edge.
    vlayer = list(layer)
    vwidth = list(widths)
    up: list[list[int]] = [[] for _ in range(n)]
    down: list[list[int]] = [[] for _ in range(n)]
    chains: list[list[int]] = []
    stubs: list[int] = []
    for v in range(n):
        # A weight upload feeding every block would fan its long edges across the whole
        # drawing and push the flow aside: its edges past the next layer are stubs.
        fan = len(successors[v]) > FAN_STUBS
        for s in successors[v]:
            if layer[s] - layer[v] > longest or (fan and layer[s] - layer[v] > 1):
                stubs.append(len(chains))
                chains.append([v, s])
                continue
            chain = [v]
            for k in range(layer[v] + 1, layer[s]):
                vlayer.append(k)
                vwidth.append(WAYPOINT_WIDTH)
                up.append([])
                down.append([])
                chain.append(len(vlayer) - 1)
            chain.append(s)
            for a, b in zip(chain, chain[1:]):
                down[a].append(b)
                up[b].append(a)
            chains.append(chain)
    rows = _initial_rows(topo, layer, chains, len(vlayer), vlayer)
    _reduce_crossings(rows, up, down)
    xs = _assign_x(rows, up, down, vwidth)
    if len(xs) > RECENTRE_VERTICES:
        _recentre_rows(rows, xs)
    centres = _row_centres(rows, down, xs)
    ys = [centres[k] for k in vlayer]
    edge_points = tuple(tuple((xs[v], ys[v]) for v in chain) for chain in chains)
    left = min((xs[v] - vwidth[v] / 2 for v in range(len(xs))), default=0.0)
    right = max((xs[v] + vwidth[v] / 2 for v in range(len(xs))), default=0.0)
    return DagLayout(tuple(layer), tuple(xs[:n]), tuple(ys[:n]), edge_points,
                     right - left, centres[-1] if centres else 0.0, frozenset(stubs))


def _row_centres(rows, down, xs) -> list[float]:
    """Each row's centre y: below the row above it by a box and the room its edges need, from
    `MIN_ROOM` for straight ones up to `MAX_ROOM` for wide bends (steep curves stay clear of
    each other and of the boxes they pass)."""
    centres = [0.0] * len(rows)
    for k in range(1, len(rows)):
        step = max((abs(xs[b] - xs[a]) for a in rows[k - 1] for b in down[a]), default=0.0)
        room = min(MAX_ROOM, MIN_ROOM + BEND_ROOM * step)
        centres[k] = centres[k - 1] + NODE_HEIGHT + room
    return centres


def _longest_routed_span(successors, layer) -> float:
    """The longest span (in layers) an edge may have and still get its waypoints (infinity when
    all may): the longest that keeps the graph's waypoints under `max(MIN_WAYPOINT_CAP,
    2 * (nodes + edges))` and no layer crossed by more than `LAYER_CROSSINGS` routed edges.
    Edges out of fans (`FAN_STUBS`) are stubs whatever their span, so they count for neither."""
    edges = sum(len(after) for after in successors)
    # (first layer, last layer) of each edge that may be routed
    routable = [(layer[v], layer[s]) for v, after in enumerate(successors)
                if len(after) <= FAN_STUBS for s in after]
    spans = sorted(b - a for a, b in routable)
    cap = max(MIN_WAYPOINT_CAP, 2 * (len(successors) + edges))
    longest = math.inf
    total = 0
    for span in spans:
        total += span - 1
        if total > cap:
            longest = span - 1  # every shorter edge fits; this span and longer ones do not
            break
    # The shortest span whose edges, with all shorter ones, cross some layer too often.
    candidates = sorted({span for span in spans if 1 < span <= longest})
    low, high = 0, len(candidates)
    while low < high:
        mid = (low + high) // 2
        if _crossings(routable, max(layer, default=0), candidates[mid]) <= LAYER_CROSSINGS:
            low = mid + 1
        else:
            high = mid
    return longest if low == len(candidates) else candidates[low] - 1


def _crossings(routable, last_layer: int, longest: int) -> int:
    """The most edges of `routable` ((first layer, last layer) pairs) of span at most `longest`
    that cross one layer."""
    changes = [0] * (last_layer + 2)
    for a, b in routable:
        if 1 < b - a <= longest:
            changes[a + 1] += 1
            changes[b] -= 1
    most = running = 0
    for change in changes:
        running += change
        most = max(most, running)
    return most


def _initial_rows(topo, layer, chains, count, vlayer) -> list[list[int]]:
    """Each layer's vertices in first-seen order along the topological order (a good start)."""
    rows: list[list[int]] = [[] for _ in range(max(vlayer, default=-1) + 1)]
    placed = [False] * count
    by_source: dict[int, list[list[int]]] = {}
    for chain in chains:
        by_source.setdefault(chain[0], []).append(chain)
    for v in topo:
        if not placed[v]:
            placed[v] = True
            rows[layer[v]].append(v)
        for chain in by_source.get(v, ()):
            for w in chain[1:-1]:
                placed[w] = True
                rows[vlayer[w]].append(w)
    return rows


def _reduce_crossings(rows, up, down) -> None:
    """Barycenter heuristic: sort each layer by the mean position of its neighbours, both ways."""
    position = [0.0] * len(up)
    for row in rows:
        for i, v in enumerate(row):
            position[v] = i
    for _ in range(SWEEPS):
        for sweep, neighbours in ((range(1, len(rows)), up), (range(len(rows) - 2, -1, -1), down)):
            for k in sweep:
                row = rows[k]
                keys = {}
                for i, v in enumerate(row):
                    ns = neighbours[v]
                    # A vertex without neighbours on that side keeps its place.
                    keys[v] = sum(position[u] for u in ns) / len(ns) if ns else i
                row.sort(key=keys.__getitem__)
                for i, v in enumerate(row):
                    position[v] = i


def _assign_x(rows, up, down, widths) -> list[float]:
    """Centres per vertex: packed rows, then a few passes pulling each towards its neighbours."""
    xs = [0.0] * len(widths)
    for row in rows:
        total = sum(widths[v] for v in row) + NODE_GAP * (len(row) - 1)
        left = -total / 2
        for v in row:
            xs[v] = left + widths[v] / 2
            left += widths[v] + NODE_GAP
    for _ in range(SWEEPS):
        for sweep, neighbours in ((range(1, len(rows)), up), (range(len(rows) - 2, -1, -1), down)):
            for k in sweep:
                row = rows[k]
                wanted = [sum(xs[u] for u in neighbours[v]) / len(neighbours[v])
                          if neighbours[v] else xs[v] for v in row]
                _place_row(row, wanted, widths, xs)
    return xs


def _recentre_rows(rows, xs) -> None:
    """Centre each row on x = 0: the pulls towards neighbours leave each row a little to one side
    of the one above it, which over thousands of layers adds up to a drawing far wider than any
    row (a transformer of 3,000 layers slid 30,000 units sideways)."""
    for row in rows:
        if row:
            middle = (xs[row[0]] + xs[row[-1]]) / 2
            for v in row:
                xs[v] -= middle


def _place_row(row, wanted, widths, xs) -> None:
    """Move a row's vertices to `wanted` x as far as order and gaps allow.

    A left-to-right pass and a right-to-left pass each give a feasible placement; their mean is
    feasible too (the gap constraints are linear) and is not biased to either side.
    """
    m = len(row)
    rightward = [0.0] * m
    leftward = [0.0] * m
    for i, v in enumerate(row):
        rightward[i] = wanted[i] if i == 0 else max(
            wanted[i], rightward[i - 1] + (widths[row[i - 1]] + widths[v]) / 2 + NODE_GAP)
    for i in range(m - 1, -1, -1):
        v = row[i]
        leftward[i] = wanted[i] if i == m - 1 else min(
            wanted[i], leftward[i + 1] - (widths[row[i + 1]] + widths[v]) / 2 - NODE_GAP)
    for i, v in enumerate(row):
        xs[v] = (rightward[i] + leftward[i]) / 2
