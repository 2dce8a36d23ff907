"""The planning options `plan`, `run` and `export` share, defined once so they agree.

`--algorithm` (one of the planner's placers, default first-fit), `--conflicts` (default: the
graph's own model, `planner.default_conflicts`: the one the file names, serial for a recorded
training step; else serial for chains such as MiniMalloc traces, dag otherwise) and
`--budget` (the seconds search may spend, default 2), and search's `--seed` (default 0) and
`--iterations` (the most steps it may take; the same seed and iterations give the same plan;
by default a fixed number for each second of the budget, scaled to the graph).
"""

from __future__ import annotations

import argparse

from slabscope import planner

DEFAULT_ALGORITHM = "first-fit"
DEFAULT_BUDGET = 2.0
# Without `--budget` or `--iterations`, a search takes the steps the default budget buys (a
# fixed amount of work, a couple of seconds on 2 cores) and is capped at this many seconds
# instead: a busy machine still finishes them. A given budget is the deadline itself.
SCALED_SEARCH_CEILING = 20.0


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
                             "schedule); default: the one the file names (serial for a "
                             "recorded training step), else serial for chains (MiniMalloc "
                             "traces, snapshots), dag otherwise")
    parser.add_argument("--budget", type=seconds, default=DEFAULT_BUDGET, action=_GivenBudget,
                        help=f"seconds the search algorithm may spend (default {DEFAULT_BUDGET:g}); "
                             f"without --iterations each second buys a fixed number of steps, "
                             f"so the same file, seed and budget give the same plan unless the "
                             f"deadline cuts the work short (the default budget's steps may run "
                             f"up to {SCALED_SEARCH_CEILING:g} s)")
    parser.add_argument("--seed", type=_seed, default=0,
                        help="the search algorithm's random seed (default 0)")
    parser.add_argument("--iterations", type=_steps, metavar="N",
                        help="the most steps search may take (one packing of a request order, "
                             "or one node of exact search); the same file, seed and N give the "
                             "same plan on any machine, the budget only cuts it short "
                             "(default: a fixed number for each second of --budget, scaled "
                             "to the graph)")


class _GivenBudget(argparse.Action):
    """Stores `--budget` and notes that the user gave it (`args.budget_given`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.budget = values
        namespace.budget_given = True


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


def search_options(args: argparse.Namespace, graph: planner.Graph, conflicts: str) -> dict:
    """The `budget`, `seed` and `iterations` keywords of `planner.plan` the user chose. Without
    `--iterations`, a search takes the steps its budget buys (a fixed number per second, scaled
    to `graph`), so a file gives the same plan on a quiet and on a busy machine: the budget's
    deadline only cuts them short, and the plan says so when it does. Without `--budget` either,
    they are the default budget's steps, under `SCALED_SEARCH_CEILING` instead."""
    budget, iterations = args.budget, args.iterations
    if iterations is None and args.algorithm == "search" and \
            not getattr(args, "budget_given", False):
        iterations = planner.search_iterations(graph, conflicts, budget)
        budget = SCALED_SEARCH_CEILING
    return {"budget": budget, "seed": args.seed, "iterations": iterations}


def conflicts_for(args: argparse.Namespace, graph: planner.Graph) -> str:
    """The conflict model the user chose, or the graph's own when they chose none."""
    return args.conflicts or planner.default_conflicts(graph)
