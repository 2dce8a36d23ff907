"""Replay the output-safety and session-path attacks of issues 23 and 25 against source trees and
print what each did: exit code, whether stderr was one line without a traceback, whether the
input survived, how long it took. Then the hostile and huge inputs of issue 38
(bench/hostile_inputs.py), each under a time and memory cap, with its time and peak memory.

    python bench/safety_attacks.py                      # this checkout
    python bench/safety_attacks.py --baseline /tmp/base  # beside another tree (e.g. f5ea06f)
    python bench/safety_attacks.py --only 38 --cap-s 60 --cap-gb 4   # issue 38's cases alone

Every file is made in a fresh temporary folder; nothing outside it is written.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.hostile_inputs import CASES  # noqa: E402
from bench.trees import python_path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SECRET = "x7Hs9SecretPassw0rd"
TRACE = "id,lower,upper,size\na,0,2,64\nb,1,3,32\n"
HANG_S = 10  # a command still running after this long counts as hung


def _setup(folder: Path) -> None:
    shutil.copy(ROOT / "assets" / "example_graphs" / "relu_unfused.json", folder / "g.json")
    (folder / "t.csv").write_text(TRACE)
    (folder / "link.csv").symlink_to("t.csv")
    os.mkfifo(folder / "fifo")
    (folder / "secret.csv").write_text(f"id,lower,upper,size\na,0,2,{SECRET}\n")
    work = folder / "work"
    work.mkdir()
    (work / "g.json").write_bytes((folder / "g.json").read_bytes())
    session = {"format": "slabscope-session", "version": 1}
    (work / "escape.slabscope").write_text(json.dumps({**session, "graph": "../secret.csv"}))
    (work / "order.slabscope").write_text(json.dumps({**session, "graph": "g.json",
                                                      "order": ["zz"]}))
    (folder / "cr.json").write_text(json.dumps({
        "nodes": [{"name": "n", "outputs": ["a\rb"]}, {"name": "m", "inputs": ["a\rb"]}],
        "buffers": [{"name": "a\rb", "bytes": 64}]}))
    # One CSV row (the csv module splits rows at line breaks only) that str.splitlines cuts in two.
    (folder / "fs.csv").write_text("id,lower,upper,size\na,0,2,64\x1cb,1,3,32\n", newline="")
    (folder / "offsets.csv").write_text("id,lower,upper,size,offset\na,0,2,64,0\nb,0,2,64,0\n")


# (label, argv after `slabscope`, the input that must survive or None, what to look for)
ATTACKS = [
    ("plan --csv onto its JSON input", ["plan", "g.json", "--csv", "g.json"], "g.json"),
    ("plan --csv onto its CSV input", ["plan", "t.csv", "--csv", "t.csv"], "t.csv"),
    ("export --png onto its input", ["export", "g.json", "--png", "g.json"], "g.json"),
    ("export --svg onto its input", ["export", "g.json", "--svg", "g.json"], "g.json"),
    ("--png X --svg X", ["export", "g.json", "--png", "same.out", "--svg", "same.out"], None),
    ("--csv symlink to the input", ["plan", "t.csv", "--csv", "link.csv"], "t.csv"),
    ("--csv FIFO", ["plan", "t.csv", "--csv", "fifo"], None),
    ("generate -o FIFO", ["generate", "mlp", "-o", "fifo"], None),
    ("--seed -1", ["plan", "t.csv", "--algorithm", "search", "--seed", "-1"], None),
    ("export --width 32767", ["export", "g.json", "--png", "w.png", "--width", "32767"], None),
    ("export --scale 1e-9", ["export", "g.json", "--png", "s.png", "--scale", "1e-9"], None),
    ("session graph ../secret.csv", ["open", "work/escape.slabscope"], None),
    ("session unknown order name", ["open", "work/order.slabscope"], None),
    ("--csv of a name with \\r, read back", ["plan", "cr.json", "--csv", "cr.csv"], None),
    ("CSV row with \\x1c inside", ["plan", "fs.csv", "--json"], None),
    ("CSV with overlapping offsets", ["plan", "offsets.csv"], None),
]


def _run(tree: Path, folder: Path, argv: list[str]) -> tuple[int | str, str, str, float]:
    env = {**os.environ, "PYTHONPATH": python_path(tree), "QT_QPA_PLATFORM": "offscreen"}
    started = time.monotonic()
    try:
        result = subprocess.run([sys.executable, "-m", "slabscope.app.cli", *argv], cwd=folder, env=env,
                                capture_output=True, text=True, timeout=HANG_S)
    except subprocess.TimeoutExpired:
        return "hang", "", "", time.monotonic() - started
    return result.returncode, result.stdout, result.stderr, time.monotonic() - started


def _outcome(label: str, folder: Path, code, out: str, err: str, survived: bool | None) -> str:
    lines = err.strip().splitlines()
    shape = "traceback" if "Traceback" in err else f"{len(lines)} line(s)"
    notes = []
    if survived is False:
        notes.append("INPUT DESTROYED")
    if SECRET in err:
        notes.append("secret echoed")
    if label.startswith("--png X"):
        notes.append(f"same.out {'exists' if (folder / 'same.out').exists() else 'absent'}"
                     + (", says it wrote an SVG" if "SVG" in out else ""))
    if label.startswith("--csv of a name") and code == 0:
        again = _run(Path(os.environ["SLABSCOPE_TREE"]), folder, ["plan", "cr.csv"])
        notes.append("reads back" if again[0] == 0 else "reader rejects it")
    if label.startswith("CSV row with") and code == 0:
        notes.append(f"{len(json.loads(out)['placements'])} buffer(s)")
    if label.startswith("CSV with overlapping") and code == 0:
        notes.append("says offsets ignored" if "offset column" in err else "silent")
    if label == "session unknown order name":
        notes.append("names the session" if "order.slabscope" in err else "omits the session")
    return f"{code!s:>5}  {shape:<10}  {'; '.join(notes)}"


def replay(tree: Path) -> list[tuple[str, str, float]]:
    """Each attack's outcome against the source tree `tree`."""
    rows = []
    os.environ["SLABSCOPE_TREE"] = str(tree)
    for label, argv, keep in ATTACKS:
        with tempfile.TemporaryDirectory(prefix="slabscope_attack_") as name:
            folder = Path(name)
            _setup(folder)
            before = (folder / keep).read_bytes() if keep else None
            code, out, err, seconds = _run(tree, folder, argv)
            survived = None if keep is None else (folder / keep).read_bytes() == before
            rows.append((label, _outcome(label, folder, code, out, err, survived), seconds))
    return rows


def measure(tree: Path, folder: Path, argv: list[str], cap_s: float,
            cap_bytes: int) -> tuple[str, float, float]:
    """(outcome, seconds, peak resident GB) of `slabscope argv` from `tree` in `folder`, its
    address space capped at `cap_bytes` and its time at `cap_s`."""
    env = {**os.environ, "PYTHONPATH": python_path(tree), "QT_QPA_PLATFORM": "offscreen"}

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (cap_bytes, cap_bytes))

    started = time.monotonic()
    timed_out = False
    with open(folder / "stderr", "w+b") as err:
        child = subprocess.Popen([sys.executable, "-m", "slabscope.app.cli", *argv], cwd=folder,
                                 env=env, stdout=subprocess.DEVNULL, stderr=err,
                                 preexec_fn=cap)
        while True:  # wait4, not wait: it gives the child's peak resident memory
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - started > cap_s:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                timed_out = True
                break
            time.sleep(0.02)
        child.returncode = code = os.waitstatus_to_exitcode(status)
        seconds = time.monotonic() - started
        err.seek(0)
        text = err.read().decode(errors="replace").replace(f"{folder}/", "")
    peak = usage.ru_maxrss * 1024  # kilobytes on Linux
    lines = text.strip().splitlines()
    if timed_out:
        shown = f"over {cap_s:g} s"
    else:
        shown = f"{code!s:>4}  " + ("traceback: " + (lines[-1][:50] if lines else "")
                                    if "Traceback" in text else
                                    f"{len(lines)} line: {lines[0][11:81] if lines else ''}")
    return shown, seconds, peak / 1e9


def replay_hostile(tree: Path, cap_s: float, cap_gb: float) -> list[tuple[str, str, float, float]]:
    """Each of issue 38's cases against `tree`."""
    rows = []
    for label, maker in CASES:
        with tempfile.TemporaryDirectory(prefix="slabscope_hostile_") as name:
            argv = maker(Path(name))
            rows.append((label, *measure(tree, Path(name), argv, cap_s, int(cap_gb * (1 << 30)))))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="source tree to attack")
    parser.add_argument("--baseline", type=Path, help="another tree, shown beside it")
    parser.add_argument("--only", choices=["23", "38"], help="only one round's attacks")
    parser.add_argument("--cap-s", type=float, default=60.0, help="time cap per case (issue 38)")
    parser.add_argument("--cap-gb", type=float, default=4.0,
                        help="address-space cap per case in GiB (issue 38)")
    args = parser.parse_args()
    if args.only != "38":
        _print_outputs(args)
    if args.only != "23":
        _print_hostile(args)


def _print_outputs(args) -> None:
    mine = replay(args.tree)
    base = replay(args.baseline) if args.baseline else None
    width = max(len(label) for label, _, _ in mine)
    print(f"{'attack':<{width}}  {'exit  stderr      notes (this tree)':<48}  seconds"
          + ("   | baseline: exit  stderr  notes  seconds" if base else ""))
    for k, (label, outcome, seconds) in enumerate(mine):
        line = f"{label:<{width}}  {outcome:<48}  {seconds:6.1f}"
        if base:
            line += f"   | {base[k][1]}  {base[k][2]:.1f}"
        print(line)


def _print_hostile(args) -> None:
    mine = replay_hostile(args.tree, args.cap_s, args.cap_gb)
    base = replay_hostile(args.baseline, args.cap_s, args.cap_gb) if args.baseline else None
    width = max(len(label) for label, *_ in mine)
    print(f"\nissue 38 cases, each capped at {args.cap_s:g} s and {args.cap_gb:g} GiB")
    print(f"{'case':<{width}}  {'exit  stderr (this tree)':<82}  {'s':>6}  {'peak GB':>7}"
          + ("   | baseline: exit  stderr  s  peak GB" if base else ""))
    for k, (label, outcome, seconds, peak) in enumerate(mine):
        line = f"{label:<{width}}  {outcome:<82}  {seconds:6.1f}  {peak:7.2f}"
        if base:
            line += f"   | {base[k][1]}  {base[k][2]:.1f}  {base[k][3]:.2f}"
        print(line)


if __name__ == "__main__":
    main()
