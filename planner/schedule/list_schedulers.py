"""The list schedulers compilers use to pick a memory-friendly execution order, written from their
published descriptions (PyTorch Inductor's `reorder_for_peak_memory`, which tries all three and
keeps the best):

- LPMF, "least peak memory first": among the nodes ready to run, one whose step stays within the
  peak so far and that leaves the fewest bytes live after it; when none stays within the peak,
  the one whose step needs the fewest bytes.
- BFS: the ready node whose predecessors ran earliest (first in, first out), so buffers die soon.
- DFS: a depth-first post-order that visits nodes, and each node's predecessors, by the bytes
  they touch, smallest first.

Ties go to the node that comes first in the given order (`rank`). Each takes node indices in
`rank` order and returns a topological order as an int64 array.
"""

from __future__ import annotations

import heapq

import numpy as np

from .schedule_problem import ScheduleProblem

# Ready nodes LPMF weighs at each step: every one on most graphs, a bounded few on graphs with
# thousands ready at once (scanning them all made 40,000 independent nodes take 66 s).
LPMF_CANDIDATES = 64


def lpmf(problem: ScheduleProblem, rank: np.ndarray, noise: np.ndarray | None = None
         ) -> np.ndarray:
    """Least peak memory first. `noise`, when given, scales each node's byte counts (a seeded
    restart's perturbation of the greedy choice).

    Each step weighs at most `LPMF_CANDIDATES` ready nodes, those that became ready first (by
    `rank` among those ready at once), so a graph with thousands of nodes ready at once costs
    linear, not quadratic, time; each node's new and freed bytes are kept up to date as buffers
    start and end, in time linear in the uses."""
    n = problem.n
    sizes = problem.sizes.tolist()
    node_bufs = [problem.buffers_of(v).tolist() for v in range(n)]
    buf_uses = [problem.buf_use[problem.buf_start[b]:problem.buf_start[b + 1]].tolist()
                for b in range(len(sizes))]
    succs = [problem.succs(v).tolist() for v in range(n)]
    indegree = np.diff(problem.pred_start).tolist()
    remaining = [len(uses) for uses in buf_uses]
    started = [False] * len(sizes)
    scale = [1.0] * n if noise is None else noise.tolist()
    rank_of = rank.tolist()
    done = [False] * n
    # Per node: bytes its step would start (buffers not started yet) and free (its last use).
    new_bytes = [sum(sizes[b] for b in node_bufs[v]) for v in range(n)]
    freed_bytes = [sum(sizes[b] for b in node_bufs[v] if remaining[b] == 1) for v in range(n)]

    waiting = [(rank_of[v], v) for v in range(n) if indegree[v] == 0]
    heapq.heapify(waiting)
    ready: list[int] = []  # the candidates, at most LPMF_CANDIDATES
    resident = peak = 0
    order = []
    while ready or waiting:
        while waiting and len(ready) < LPMF_CANDIDATES:
            ready.append(heapq.heappop(waiting)[1])
        within = None
        lowest = None
        for v in ready:
            step = resident + new_bytes[v]
            if step <= peak:
                key = ((step - freed_bytes[v]) * scale[v], rank_of[v])
                if within is None or key < within[0]:
                    within = (key, v)
            elif within is None:
                key = (step * scale[v], rank_of[v])
                if lowest is None or key < lowest[0]:
                    lowest = (key, v)
        v = within[1] if within is not None else lowest[1]
        ready.remove(v)
        step = resident + new_bytes[v]
        peak = max(peak, step)
        resident = step - freed_bytes[v]
        order.append(v)
        done[v] = True
        for b in node_bufs[v]:
            remaining[b] -= 1
            if not started[b]:
                started[b] = True
                for u in buf_uses[b]:
                    new_bytes[u] -= sizes[b]
            if remaining[b] == 1:  # the one use left now frees it
                u = next(u for u in buf_uses[b] if not done[u])
                freed_bytes[u] += sizes[b]
        for s in succs[v]:
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(waiting, (rank_of[s], s))
    return np.asarray(order, dtype=np.int64)


def bfs(problem: ScheduleProblem, rank: np.ndarray) -> np.ndarray:
    """First in, first out: the ready node whose predecessors' steps, sorted, come first."""
    n = problem.n
    indegree = np.diff(problem.pred_start).tolist()
    preds = [problem.preds(v).tolist() for v in range(n)]
    succs = [problem.succs(v).tolist() for v in range(n)]
    rank_of = rank.tolist()
    step_of = [0] * n
    ready = [((), rank_of[v], v) for v in range(n) if indegree[v] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, _, v = heapq.heappop(ready)
        step_of[v] = len(order)
        order.append(v)
        for s in succs[v]:
            indegree[s] -= 1
            if indegree[s] == 0:
                heapq.heappush(ready, (tuple(sorted(step_of[p] for p in preds[s])), rank_of[s], s))
    return np.asarray(order, dtype=np.int64)


def dfs(problem: ScheduleProblem, rank: np.ndarray) -> np.ndarray:
    """Depth-first post-order: nodes, and each node's predecessors, smallest bytes touched first."""
    n = problem.n
    touched = problem.working_sets().tolist()
    rank_of = rank.tolist()

    def key(v: int):
        return (touched[v], rank_of[v])

    preds = [sorted(problem.preds(v).tolist(), key=key) for v in range(n)]
    seen = [False] * n
    order = []
    for root in sorted(range(n), key=key):
        if seen[root]:
            continue
        seen[root] = True
        stack = [(root, 0)]  # iterative, so a long chain does not hit the recursion limit
        while stack:
            v, i = stack[-1]
            if i < len(preds[v]):
                stack[-1] = (v, i + 1)
                p = preds[v][i]
                if not seen[p]:
                    seen[p] = True
                    stack.append((p, 0))
            else:
                stack.pop()
                order.append(v)
    return np.asarray(order, dtype=np.int64)


LIST_SCHEDULERS = {"LPMF": lpmf, "BFS": bfs, "DFS": dfs}
