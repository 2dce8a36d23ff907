"""The `slabscope` command line: plan, export and run graphs without a screen, or open the window.

Each subcommand lives in its own module (`app/command_<name>.py`) with `add_arguments(parser)`
and `run(args) -> int`; this file only dispatches. Exit codes: 0 ok, 2 bad input, 3 capacity.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from planner import CapacityError, PlanError

# Subcommand name -> (module under app/, one-line help).
SUBCOMMANDS = {
    "plan": ("command_plan", "plan a graph file and print the placements"),
}

EXIT_BAD_INPUT = 2
EXIT_CAPACITY = 3


def build_parser() -> argparse.ArgumentParser:
    """The parser for every subcommand (each module adds its own arguments)."""
    parser = argparse.ArgumentParser(
        prog="slabscope",
        description="Plan a compute graph's buffers into one slab. "
                    "`slabscope [FILE]` opens the window.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        command = importlib.import_module(f"app.{module}")
        command.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run `slabscope` with `argv` (default: the process's arguments); returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0] not in SUBCOMMANDS and not argv[0].startswith("-")):
        argv = ["open", *argv] if "open" in SUBCOMMANDS else ["plan", *(argv or [_example()])]
    args = build_parser().parse_args(argv)
    module = importlib.import_module(f"app.{SUBCOMMANDS[args.command][0]}")
    try:
        return module.run(args)
    except CapacityError as exc:
        print(f"slabscope: {exc}", file=sys.stderr)
        return EXIT_CAPACITY
    except PlanError as exc:
        print(f"slabscope: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


def _example() -> str:
    from app.examples import default_example

    return str(default_example())


if __name__ == "__main__":
    sys.exit(main())
