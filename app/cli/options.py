"""The planning options `plan`, `run` and `export` share, defined once so they agree.

`--algorithm` (one of the planner's placers, default first-fit), `--conflicts` (default: the
graph's own model, `planner.default_conflicts`: serial for MiniMalloc chains, dag otherwise) and
`--budget` (the seconds search may spend, default 2), and search's `--seed` (default 0) and
`--iterations` (the most steps it may take; the same seed and iterations give the same plan).
"""

from __future__ import annotations

import argparse

from slabscope import planner

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
    """Add `--algorithm`, `--conflicts`, `--budget`, `--seed` and `--iterations` to `parser`."""
    parser.add_argument("--algorithm", choices=list(planner.ALGORITHMS), default=DEFAULT_ALGORITHM,
                        help=f"placer (default: {DEFAULT_ALGORITHM}, Luminal's)")
    parser.add_argument("--conflicts", choices=list(planner.CONFLICT_MODELS),
                        help="conflict model: dag (may run concurrently) or serial (one "
                             "schedule); default: serial for MiniMalloc chains, dag otherwise")
    parser.add_argument("--budget", type=seconds, default=DEFAULT_BUDGET,
                        help=f"seconds the search algorithm may spend (default {DEFAULT_BUDGET:g})")
    parser.add_argument("--seed", type=_seed, default=0,
                        help="the search algorithm's random seed (default 0)")
    parser.add_argument("--iterations", type=_steps, metavar="N",
                        help="the most steps search may take (one packing of a request order, "
                             "or one node of exact search); the same file, seed and N give the "
                             "same plan on any machine, the budget only cuts it short "
                             "(default: as many as the budget allows)")


def _seed(text: str) -> int:
    """A seed NumPy's generator takes: an integer from 0 to 2**64 - 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer seed: {text!r}") from None
    if not 0 <= value < 2**64:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 2**64 - 1, got {text!r}")
    return value


def _steps(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def search_options(args: argparse.Namespace) -> dict:
    """The `seed` and `iterations` keywords of `planner.plan` the user chose."""
    return {"seed": args.seed, "iterations": args.iterations}


def conflicts_for(args: argparse.Namespace, graph: planner.Graph) -> str:
    """The conflict model the user chose, or the graph's own when they chose none."""
    return args.conflicts or planner.default_conflicts(graph)
