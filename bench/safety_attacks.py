"""Replay the output-safety and session-path attacks of issues 23 and 25 against source trees and
print what each did: exit code, whether stderr was one line without a traceback, whether the
input survived, how long it took.

    python bench/safety_attacks.py                      # this checkout
    python bench/safety_attacks.py --baseline /tmp/base  # beside another tree (e.g. f5ea06f)

Every file is made in a fresh temporary folder; nothing outside it is written.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=ROOT, help="source tree to attack")
    parser.add_argument("--baseline", type=Path, help="another tree, shown beside it")
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
