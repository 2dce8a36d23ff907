"""`bench.app_speed` on this tree and on a baseline commit, run in turns, as one table of medians.

    QT_QPA_PLATFORM=offscreen python -m bench.stall_compare [--baseline febabe1] [--runs 3]
        [-- APP_SPEED ARGUMENTS ...]   (no graph given: app_speed's default graphs, for both)

The baseline is the commit's files from `git archive`, unpacked in a temporary folder and run
from its own files (`bench.trees.python_path`: this tree's installed package would import this
tree's parts instead). Each tree first plans every graph once untimed (numba compiles a tree's
kernels on their first use after a change). Each run is its own process; the two trees take
turns, so that both see the same minutes of a shared machine. Prints, per graph and action, the
median (and the worst) stall and GUI-thread CPU of each tree and the ratio of the median stalls.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.trees import python_path

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"\s+(\S+)\s+(.+?)\s{2,}([\d,.]+ m?s)\s+([\d,.]+ m?s)\s+([\d,.]+ m?s)")


def unpack(commit: str, scratch: Path) -> Path:
    """The baseline's files, in `scratch`."""
    tree = scratch / "tree"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def milliseconds(text: str) -> float:
    value, unit = text.split()
    return float(value.replace(",", "")) * (1000 if unit == "s" else 1)


def rows(output: str) -> dict[tuple[str, str], tuple[float, float]]:
    """(graph, action) -> (stall ms, GUI CPU ms) from one app_speed table."""
    found = {}
    for line in output.splitlines():
        match = ROW.match(line)
        if match:
            found[(match[1], match[2].strip())] = (milliseconds(match[4]), milliseconds(match[5]))
    return found


def _place(tree: Path) -> tuple[str, dict]:
    """The folder to run `tree`'s modules from, and the environment that imports them (its
    `slabscope` through the shim, its `bench` from the tree)."""
    shim = python_path(tree)
    return shim, {**os.environ, "PYTHONPATH": os.pathsep.join([shim, str(tree)])}


def run(command: list[str], tree: Path, timeout: float) -> dict:
    """`app_speed`'s table from `command` run on `tree`'s own files."""
    shim, env = _place(tree)
    result = subprocess.run(command, cwd=shim, env=env, capture_output=True, text=True,
                            timeout=timeout)
    if result.returncode:
        raise SystemExit(f"{' '.join(command[:4])}...: exit {result.returncode}: "
                         f"{result.stderr.strip().splitlines()[-1:]}")
    return rows(result.stdout)


def warm(tree: Path, graphs: list[str], timeout: float) -> None:
    """Plan each graph once on `tree`, untimed (and search each trace), so that numba compiling
    the kernels for a tree in a new folder, or after a change, is not counted as a stall."""
    shim, env = _place(tree)
    for graph in graphs:
        searched = graph.endswith(".csv")
        for options in ([], ["--algorithm", "search", "--budget", "1"])[:1 + searched]:
            subprocess.run([sys.executable, "-m", "slabscope.app.cli", "plan", graph, "--json",
                            *options], cwd=shim, env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=timeout)


def main(argv=None) -> int:
    """Run both trees in turns and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="febabe1", help="commit to compare against")
    parser.add_argument("--runs", type=int, default=3, help="runs of each tree")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run at most")
    parser.add_argument("app_speed", nargs="*", help="arguments for bench.app_speed")
    args = parser.parse_args(argv)
    # Both trees run from another folder: files named here are passed as absolute paths.
    args.app_speed = [str(Path(a).resolve()) if Path(a).is_file() else a for a in args.app_speed]
    if not any(Path(a).is_file() for a in args.app_speed):
        # The same files for both: the baseline's own defaults look for ../shared beside it.
        from bench.app_speed import default_graphs

        args.app_speed = [str(p) for p in default_graphs()] + args.app_speed
    with tempfile.TemporaryDirectory(prefix="stall_compare_") as scratch:
        tree = unpack(args.baseline, Path(scratch))
        graphs = [a for a in args.app_speed if Path(a).is_file()]
        for each in (ROOT, tree):
            warm(each, graphs, args.timeout)
        command = [sys.executable, "-m", "bench.app_speed", *args.app_speed]
        new, old = [], []
        for _ in range(args.runs):
            new.append(run(command, ROOT, args.timeout))
            old.append(run(command, tree, args.timeout))
    print(f"  {'graph':<18} {'action':<28} {'stall':>14} {args.baseline:>14} {'ratio':>6}"
          f" {'GUI CPU':>12} {args.baseline:>12}   (ms: median of {args.runs}, worst)")
    for key in new[0]:
        if not all(key in table for table in new + old):
            continue
        stall, base_stall = [t[key][0] for t in new], [t[key][0] for t in old]
        cpu, base_cpu = [t[key][1] for t in new], [t[key][1] for t in old]
        shown = lambda v: f"{statistics.median(v):,.0f} ({max(v):,.0f})"  # noqa: E731
        ratio = statistics.median(stall) / max(statistics.median(base_stall), 1e-9)
        print(f"  {key[0]:<18} {key[1]:<28} {shown(stall):>14} {shown(base_stall):>14}"
              f" {ratio:6.2f} {shown(cpu):>12} {shown(base_cpu):>12}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
