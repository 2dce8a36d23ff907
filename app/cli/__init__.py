"""The `slabscope` command line: plan, export and run graphs without a screen, or open the window.

Each subcommand lives in its own module of this package (`app/cli/<name>.py`) with
`add_arguments(parser)` and `run(args) -> int`; this file only dispatches. Exit codes: 0 ok, 2 bad input, 3 capacity.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import warnings

from planner import CapacityError, PlanError

# Subcommand name -> (module under app/cli/, one-line help).
SUBCOMMANDS = {
    "open": ("open_window", "open a graph in the window (the default)"),
    "plan": ("plan", "plan a graph file and print the placements"),
    "export": ("export", "render a view of a plan to PNG without a display"),
    "run": ("run", "execute a plan in one slab and measure its phases"),
    "generate": ("generate", "write a larger executable graph (mlp, transformer)"),
}

EXIT_BAD_INPUT = 2
EXIT_CAPACITY = 3


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only `command`'s module is imported, so `plan` never loads Qt or CuPy."""
    parser = argparse.ArgumentParser(
        prog="slabscope",
        description="Plan a compute graph's buffers into one slab. "
                    "`slabscope [FILE]` opens the window.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        parser_for = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            importlib.import_module(f"app.cli.{module}").add_arguments(parser_for)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings (what an import had to guess) as one line, without the source location."""
    print(f"slabscope: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run `slabscope` with `argv` (default: the process's arguments); returns the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0] not in SUBCOMMANDS and not argv[0].startswith("-")):
        argv = ["open", *argv]
    args = build_parser(argv[0]).parse_args(argv)
    module = importlib.import_module(f"app.cli.{SUBCOMMANDS[args.command][0]}")
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return module.run(args)
        except CapacityError as exc:
            print(f"slabscope: {exc}", file=sys.stderr)
            return EXIT_CAPACITY
        except PlanError as exc:
            print(f"slabscope: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
