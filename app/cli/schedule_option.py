"""`--schedule given|best`, shared by `plan` and `run`: plan (and execute) in the given order, or
in the execution order with the least peak of live bytes (`planner.schedule`)."""

from __future__ import annotations

import argparse

from slabscope import planner
from slabscope.planner.support.cancel import NEVER, CancelToken

SCHEDULES = ("given", "best")


def add_schedule_option(parser: argparse.ArgumentParser) -> None:
    """Add `--schedule` to `parser`."""
    parser.add_argument("--schedule", choices=SCHEDULES, default="given",
                        help="execution order: given (the file's schedule, or a topological "
                             "order) or best (the order with the least peak of live bytes; "
                             "implies --conflicts serial; uses --seed, --iterations, --budget)")


def apply_schedule(args: argparse.Namespace, graph: planner.Graph, conflicts: str,
                   cancel: CancelToken = NEVER
                   ) -> tuple[planner.Graph, str, planner.Schedule | None]:
    """(graph, conflicts, schedule): with `--schedule best`, the graph scheduled in the best
    order found, under the serial model; otherwise all three as they were (schedule None).
    `cancel` reaches the search (`--timeout` stops it)."""
    if getattr(args, "schedule", "given") != "best":
        return graph, conflicts, None
    if args.conflicts == "dag":
        raise planner.PlanError("--schedule best plans one serial order; it cannot be "
                                "combined with --conflicts dag")
    chosen = planner.schedule(graph, seed=args.seed, iterations=args.iterations,
                              budget=args.budget, cancel=cancel)
    if chosen.fixed is None:
        graph = planner.with_schedule(graph, chosen.order)
    return graph, "serial", chosen


def format_schedule(chosen: planner.Schedule) -> list[str]:
    """The schedule's summary lines for the text report."""
    if chosen.fixed is not None:
        return [f"schedule       given order kept: {chosen.fixed}"]
    starts = ", ".join(f"{label} {peak:,}" for label, peak in chosen.starts.items())
    return [f"schedule       best order, peak {chosen.peak_bytes:,} live bytes ({chosen.source}; "
            f"{chosen.proof})",
            f"               given order {chosen.given_peak_bytes:,}; starts: {starts}; "
            f"lower bound {chosen.lower_bound_bytes:,}",
            f"               {chosen.iterations:,} steps, seed {chosen.seed}"]
