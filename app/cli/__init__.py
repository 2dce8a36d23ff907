"""The `slabscope` command line: plan, export and run graphs without a screen, or open the window.

Each subcommand lives in its own module of this package (`app/cli/<name>.py`, `slabscope.app.cli.<name>`) with
`add_arguments(parser)` and `run(args) -> int`; this file only dispatches. Exit codes: 0 ok,
2 bad input, 3 capacity or `--timeout`.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings

from slabscope.app.cli.numba_cache import configure_numba_cache

# The planner (and long_work, which imports it) is imported inside the functions below, after
# configure_numba_cache: numba picks a kernel's cache folder when the planner defines it.

# Subcommand name -> (module under app/cli/, one-line help).
SUBCOMMANDS = {
    "open": ("open_window", "open a graph in the window (the default)"),
    "plan": ("plan", "plan a graph file and print the placements"),
    "export": ("export", "render a view of a plan to PNG without a display"),
    "run": ("run", "execute a plan in one slab and measure its phases"),
    "generate": ("generate", "write a larger executable graph (mlp, transformer)"),
    "allocator": ("allocator", "what PyTorch's caching allocator would reserve, beside the slab"),
    "diff": ("diff", "compare two runs: live peak, slab and reserved, the difference attributed"),
    "explain": ("explain", "what is live at the live peak, and each lever's measured saving"),
}

EXIT_BAD_INPUT = 2
EXIT_CAPACITY = 3
# An argument error quotes the value given; past this many characters it is cut.
ARGUMENT_MESSAGE_LIMIT = 200


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line; the usage is what `--help` is for."""

    def error(self, message: str):
        """Print `prog: error: message` and exit 2, as argparse does, without the usage."""
        from slabscope.planner.formats.safety.input_limits import one_line

        text = one_line(message)
        if len(text) > ARGUMENT_MESSAGE_LIMIT:  # argparse quotes the value given, however long
            text = f"{text[:ARGUMENT_MESSAGE_LIMIT]}... ({len(text):,} characters)"
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {text} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only `command`'s module is imported, so `plan` never loads Qt or CuPy."""
    parser = OneLineParser(
        prog="slabscope",
        description="Plan a compute graph's buffers into one slab. "
                    "`slabscope [FILE]` opens the window.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        parser_for = sub.add_parser(name, help=help_text, description=help_text)
        if name == command:
            importlib.import_module(f"{__name__}.{module}").add_arguments(parser_for)
    return parser


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """Warnings (what an import had to guess) as one line, without the source location."""
    from slabscope.planner.formats.safety.input_limits import one_line

    print(f"slabscope: warning: {one_line(str(message))}", file=sys.stderr)


# A message naming a megabyte-long name is still one line, but nobody reads past this much.
MESSAGE_LIMIT = 1_000


def _message(exc: Exception) -> str:
    """The error as one printable line of at most about `MESSAGE_LIMIT` characters."""
    from slabscope.planner.formats.safety.input_limits import one_line

    text = one_line(str(exc))
    if len(text) <= MESSAGE_LIMIT:
        return text
    return f"{text[:MESSAGE_LIMIT]}... ({len(text) - MESSAGE_LIMIT:,} more characters)"


def _discard_stdout() -> None:
    """Point standard output at the null device, so the interpreter's last flush of what could
    not be written (a closed pipe, a full disk) neither fails nor prints a second error."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # a stream without a descriptor (tests)
        pass


def main(argv: list[str] | None = None) -> int:
    """Run `slabscope` with `argv` (default: the process's arguments); returns the exit code."""
    configure_numba_cache()
    from slabscope.app.cli.long_work import terminate_cleanly
    from slabscope.planner import CapacityError, PlanError

    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0] not in SUBCOMMANDS and not argv[0].startswith("-")):
        argv = ["open", *argv]
    args = build_parser(argv[0]).parse_args(argv)
    module = importlib.import_module(f"{__name__}.{SUBCOMMANDS[args.command][0]}")
    with warnings.catch_warnings(), terminate_cleanly():
        warnings.showwarning = _show_warning
        try:
            code = module.run(args)
            sys.stdout.flush()  # a write error surfaces here, not at interpreter exit
            return code
        except KeyboardInterrupt:  # Ctrl+C: stop without a traceback, as shells expect
            _discard_stdout()
            return 130
        except BrokenPipeError:
            # The reader stopped early (`| head`): what it wanted, it got.
            _discard_stdout()
            return 0
        except CapacityError as exc:
            print(f"slabscope: {_message(exc)}", file=sys.stderr)
            return EXIT_CAPACITY
        except PlanError as exc:
            print(f"slabscope: {_message(exc)}", file=sys.stderr)
            return getattr(exc, "exit_code", EXIT_BAD_INPUT)  # a timeout is 3
        except MemoryError:
            # The limits bound every input's cost, but not the machine's memory or a ulimit cap.
            _discard_stdout()
            what = getattr(args, "file", None) or "the command"
            print(f"slabscope: {what}: ran out of memory (the machine's memory or a ulimit cap "
                  f"is under what this input needs; see docs/input_limits.md)", file=sys.stderr)
            return EXIT_BAD_INPUT
        except OSError as exc:  # writing the output: a full disk (/dev/full), a closed stream
            _discard_stdout()
            where = f"{exc.filename}: " if exc.filename else ""
            print(f"slabscope: cannot write output: {where}{exc.strerror or exc}",
                  file=sys.stderr)
            return EXIT_BAD_INPUT
