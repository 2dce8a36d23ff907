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


def lpmf(problem: ScheduleProblem, rank: np.ndarray, noise: np.ndarray | None = None
         ) -> np.ndarray:
    """Least peak memory first. `noise`, when given, scales each node's byte counts (a seeded
    restart's perturbation of the greedy choice)."""
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
    new_bytes: dict[int, int] = {}
    freed_bytes: dict[int, int] = {}

    def stats(v: int) -> None:
        new = freed = 0
        for b in node_bufs[v]:
            if not started[b]:
                new += sizes[b]
            if remaining[b] == 1:
                freed += sizes[b]
        new_bytes[v], freed_bytes[v] = new, freed

    ready = [v for v in range(n) if indegree[v] == 0]
    for v in ready:
        stats(v)
    resident = peak = 0
    order = []
    while ready:
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
        touched = set()
        for b in node_bufs[v]:
            started[b] = True
            remaining[b] -= 1
            touched.update(buf_uses[b])
        for s in succs[v]:
            indegree[s] -= 1
            if indegree[s] == 0:
                ready.append(s)
                touched.add(s)
        done[v] = True
        for u in touched:
            if indegree[u] == 0 and not done[u]:
                stats(u)
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
