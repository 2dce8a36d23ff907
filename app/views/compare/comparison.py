"""What the Compare view shows, computed off the GUI thread: `planner.diff` of the open graph
and a second file, with each side's buffer lifetimes for highlighting a row's buffers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from slabscope import planner
from slabscope.planner.analysis.diff import Diff, Side
from slabscope.planner.conflicts.conflict_model import conflict_model
from slabscope.planner.support.cancel import CancelToken


@dataclass(frozen=True)
class Lifetimes:
    """Each buffer's first and last schedule step (serial model), as the live peak counts them."""

    first: np.ndarray
    last: np.ndarray
    steps: int

    def live_bytes(self, graph: planner.Graph, buffers) -> np.ndarray:
        """The reserved bytes of `buffers` (indices) live at each step."""
        index = np.asarray(buffers, dtype=np.int64)
        sizes = np.asarray([graph.reserved[b] for b in index], dtype=np.float64)
        change = np.zeros(self.steps + 1)
        np.add.at(change, self.first[index], sizes)
        np.add.at(change, self.last[index] + 1, -sizes)
        return np.cumsum(change[:-1])


def lifetimes(graph: planner.Graph) -> Lifetimes:
    """`graph`'s buffer lifetimes in its schedule."""
    model = conflict_model(graph, "serial")
    first, last = (np.asarray(a, dtype=np.int64) for a in model.use_steps())
    return Lifetimes(first, last, len(model.schedule))


@dataclass(frozen=True)
class Comparison:
    """The open graph (a) against a second file (b): their diff, and each side's lifetimes."""

    diff: Diff
    b_path: Path
    a_lifetimes: Lifetimes
    b_lifetimes: Lifetimes

    @property
    def length(self) -> int:
        """The common length of the step axis: the longer side's number of steps."""
        return max(self.a_lifetimes.steps, self.b_lifetimes.steps, 1)

    def steps(self, side: str) -> np.ndarray:
        """Side `side` ("a" or "b")'s steps placed on the common axis (stretched to its length)."""
        count = self._lifetimes(side).steps
        scale = (self.length - 1) / (count - 1) if count > 1 else 0.0
        return np.arange(count) * scale

    def side(self, side: str) -> Side:
        """The figures of side "a" or "b"."""
        return self.diff.a if side == "a" else self.diff.b

    def live_bytes(self, side: str, buffers) -> np.ndarray:
        """The live bytes of `buffers` (indices into that side's graph) at each of its steps."""
        return self._lifetimes(side).live_bytes(self.side(side).graph, buffers)

    def _lifetimes(self, side: str) -> Lifetimes:
        return self.a_lifetimes if side == "a" else self.b_lifetimes


def compare_with(a: planner.Graph, a_name: str, b_path: Path, cancel: CancelToken) -> Comparison:
    """Load `b_path` and compare the open graph `a` with it (each under its own conflict model,
    as `slabscope diff` does by default)."""
    cancel.report("loading the file to compare with")
    b = planner.load(b_path, cancel=cancel)
    cancel.report("comparing")
    result = planner.diff(a, b, a_file=a_name, b_file=str(b_path), cancel=cancel)
    return Comparison(result, Path(b_path), lifetimes(a), lifetimes(b))
