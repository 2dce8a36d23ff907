"""Plain, slow definitions the planner's fast code is checked against."""

import itertools

import pytest

from slabscope.planner.conflicts.conflict_model import conflict_model
from slabscope.planner.support.cancel import Cancelled, CancelToken


def brute_force_clique(graph, model) -> int:
    """The heaviest set of pairwise conflicting buffers, by trying every subset."""
    n = len(graph.buffers)
    best = 0
    for k in range(1, n + 1):
        for subset in itertools.combinations(range(n), k):
            if all(model.conflicts(a, b) for a, b in itertools.combinations(subset, 2)):
                best = max(best, sum(graph.reserved[i] for i in subset))
    return best



def plain_reaches(graph):
    """Strict reachability by DFS, independent of the bitset closure."""
    succ = {n.name: set() for n in graph.nodes}
    for a, b in graph.edges:
        succ[a].add(b)
    reach = {}
    for start in succ:
        seen, stack = set(), list(succ[start])
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(succ[node])
        reach[start] = seen
    return reach



def plain_precedes(reach, a, b):
    """Whether every use of `a` strictly reaches every use of `b` (`reach`: plain_reaches)."""
    return all(v in reach[u] for u in a.uses for v in b.uses)



def stops_at_third_report(place) -> None:
    """`place(cancel=token)` with a token cancelled at its third progress report must raise
    `Cancelled` there, before the work is done (the report said less than 1)."""
    reports = []

    def progress(phase, fraction):
        reports.append(fraction)
        if len(reports) == 3:
            token.cancel()

    token = CancelToken(progress)
    with pytest.raises(Cancelled):
        place(cancel=token)
    assert len(reports) == 3 and reports[-1] < 1


def live_peak_from_scratch(graph):
    """The live peak, its step and the buffers live there, counted step by step from each
    buffer's first and last use in the schedule."""
    schedule = conflict_model(graph, "serial").schedule
    position = {graph.nodes[v].name: t for t, v in enumerate(schedule)}
    spans = [(min(position[u] for u in b.uses), max(position[u] for u in b.uses)) for b in graph.buffers]
    totals = [sum(r for r, (lo, hi) in zip(graph.reserved, spans) if lo <= t <= hi)
              for t in range(len(schedule))]
    step = totals.index(max(totals))
    return max(totals), step, {i for i, (lo, hi) in enumerate(spans) if lo <= step <= hi}
