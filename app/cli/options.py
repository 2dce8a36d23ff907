"""The planning options `plan`, `run` and `export` share, defined once so they agree.

`--algorithm` (one of the planner's placers, default first-fit), `--conflicts` (default: the
graph's own model, `planner.default_conflicts`: serial for MiniMalloc chains, dag otherwise) and
`--budget` (the seconds search may spend, default 2).
"""

from __future__ import annotations

import argparse

import planner

DEFAULT_ALGORITHM = "first-fit"
DEFAULT_BUDGET = 2.0


def seconds(text: str) -> float:
    """A finite, non-negative number of seconds (argparse type): `nan` or `inf` would never stop."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds >= 0, got {text!r}")
    return value


def add_planning_options(parser: argparse.ArgumentParser) -> None:
    """Add `--algorithm`, `--conflicts` and `--budget` to `parser`."""
    parser.add_argument("--algorithm", choices=list(planner.ALGORITHMS), default=DEFAULT_ALGORITHM,
                        help=f"placer (default: {DEFAULT_ALGORITHM}, Luminal's)")
    parser.add_argument("--conflicts", choices=list(planner.CONFLICT_MODELS),
                        help="conflict model: dag (may run concurrently) or serial (one "
                             "schedule); default: serial for MiniMalloc chains, dag otherwise")
    parser.add_argument("--budget", type=seconds, default=DEFAULT_BUDGET,
                        help=f"seconds the search algorithm may spend (default {DEFAULT_BUDGET:g})")


def conflicts_for(args: argparse.Namespace, graph: planner.Graph) -> str:
    """The conflict model the user chose, or the graph's own when they chose none."""
    return args.conflicts or planner.default_conflicts(graph)
