"""Every command the README and docs/ show in a shell block runs as written.

A command is a line of a ```sh, ```bash or ```console block (in a console block, a line after
`$ `) that starts with `slabscope` or `python -m slabscope`. It is run when it names a file of
the repository (so a command on a user's own file, or a synopsis with FILE in it, is skipped)
and when it needs no window (`plan`, `export`, `run`, `generate`, `allocator`, `explain`,
`diff`).

Each runs through the command line's `main(argv)`, in this process, in an empty folder of its
own: the repository files it names are made absolute, and anything it writes (`--png peak.png`)
lands in that folder, never in the checkout. Output paths are never rewritten, so a command that
would write into the repository fails here. The exit status must be 0, or the one the line states
in a trailing comment (`# exit status 1`). One command also runs through the installed `slabscope`
console script, as a separate process, as a reader would type it.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from slabscope.app.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

SHELL_BLOCK = re.compile(r"^```(sh|bash|console)[ \t]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
STATED_STATUS = re.compile(r"#\s*exit status (\d+)\s*$")
# Subcommands that need no display; `slabscope [FILE]` and `open` would open the window.
HEADLESS = {"plan", "export", "run", "generate", "allocator", "explain", "diff"}
# Options whose value is a file to write: never made absolute, so it lands in the run's folder.
OUTPUT_OPTIONS = {"--png", "--svg", "--csv", "-o", "--output"}
COMMAND_TIMEOUT = 180


@dataclass(frozen=True)
class DocCommand:
    page: str       # path of the page, relative to the repository
    line: int       # line of the page where the command starts
    text: str       # the command as written
    args: tuple     # the arguments after `slabscope`, repository files made absolute
    status: int     # the exit status it must end with

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def missing(self) -> str | None:
        """The optional part this command needs that is not installed here, if any: running
        a `.pt2` model needs torch (the suite runs without it; `make test-torch` adds it)."""
        if self.args[0] == "run" and any(a.endswith(".pt2") for a in self.args) and \
                importlib.util.find_spec("torch") is None:
            return "torch"
        return None


def _lines(body: str, console: bool, first_line: int):
    """(line number, command text) of a block: continuation lines joined, and in a console
    block only the lines after a `$ ` prompt."""
    pending, start = None, 0
    for offset, line in enumerate(body.splitlines()):
        number = first_line + offset
        if pending is not None:
            text = pending + " " + line.strip()
        elif console:
            if not line.startswith("$ "):
                continue
            text, start = line[2:].strip(), number
        else:
            text, start = line.strip(), number
        if text.endswith("\\"):
            pending = text[:-1].rstrip()
            continue
        pending = None
        if text and not text.startswith("#"):
            yield start, text


def _slabscope_args(words: list[str]) -> list[str] | None:
    """The arguments after `slabscope` or `python -m slabscope`, or None for another command."""
    if words[:1] == ["slabscope"]:
        return words[1:]
    if len(words) >= 3 and re.fullmatch(r"python3?", words[0]) and words[1:3] == ["-m", "slabscope"]:
        return words[3:]
    return None


def _repository_file(word: str) -> Path | None:
    """The repository file `word` names as a relative path, or None."""
    if not word or word.startswith(("-", "/", "~")):
        return None
    path = (ROOT / word).resolve()
    return path if path.is_file() and path.is_relative_to(ROOT) else None


def doc_commands(pages=PAGES) -> list[DocCommand]:
    """Every command of the pages' shell blocks that names a repository file and needs no
    window, in page order; a command shown twice is run once, where it first appears."""
    found, seen = [], set()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for block in SHELL_BLOCK.finditer(text):
            first_line = text.count("\n", 0, block.start(2)) + 1
            for number, command in _lines(block.group(2), block.group(1) == "console", first_line):
                stated = STATED_STATUS.search(command)
                try:
                    words = shlex.split(command, comments=True)
                except ValueError:  # a line of a multi-line script, not a command of its own
                    continue
                args = _slabscope_args(words)
                if not args or args[0] not in HEADLESS:
                    continue
                named, rewritten, writes = False, [], False
                for word in args:
                    path = None if writes else _repository_file(word)
                    writes = word in OUTPUT_OPTIONS
                    named = named or path is not None
                    rewritten.append(str(path) if path else word)
                if named and tuple(rewritten) not in seen:
                    seen.add(tuple(rewritten))
                    name = page.relative_to(ROOT) if page.is_relative_to(ROOT) else page.name
                    found.append(DocCommand(str(name), number, command,
                                            tuple(rewritten), int(stated.group(1)) if stated else 0))
    return found


COMMANDS = doc_commands()


def _console_script() -> Path:
    """The `slabscope` command pip installed beside this interpreter (or on the PATH)."""
    beside = Path(sys.executable).with_name("slabscope")
    found = beside if beside.is_file() else shutil.which("slabscope")
    assert found, "the slabscope console script is not installed (pip install -e .)"
    return Path(found)


def test_the_pages_show_commands_that_run_here():
    pages = {c.page for c in COMMANDS}
    assert "README.md" in pages and "docs/cli.md" in pages
    readme = [c for c in COMMANDS if c.page == "README.md"]
    assert {c.args[0] for c in readme} >= {"plan", "export", "allocator"}


def _exit_status(argv: list[str]) -> int:
    """`main(argv)`'s exit status, counting an argument error's `SystemExit` as the shell would."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_doc_command_runs_as_written(command, tmp_path, monkeypatch, capsys):
    if command.missing:
        pytest.skip(f"needs {command.missing}, not installed here")
    # A new process costs about 2 s importing numba and scipy; the command line needs no
    # process of its own (the console script is run once below).
    monkeypatch.chdir(tmp_path)
    status = _exit_status(list(command.args))
    assert status == command.status, (
        f"{command.id}: `{command.text}` exited {status}, not {command.status}\n"
        f"{capsys.readouterr().err[-2000:]}")
    for option in OUTPUT_OPTIONS:
        if option in command.args:
            written = command.args[command.args.index(option) + 1]
            assert (tmp_path / written).is_file(), f"{command.id}: {written} was not written"


def test_a_doc_command_runs_through_the_installed_console_script(tmp_path):
    command = next(c for c in COMMANDS if c.page == "README.md" and c.args[0] == "export"
                   and not c.missing)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([str(_console_script()), *command.args], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=COMMAND_TIMEOUT)
    assert result.returncode == command.status, result.stderr[-2000:]
    written = command.args[command.args.index("--png") + 1]
    assert (tmp_path / written).is_file()


def test_shell_blocks_are_read_as_a_reader_would(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\n"
        "make run\n"
        "slabscope plan assets/example_graphs/diamond.json \\\n"
        "    --conflicts serial  # a comment\n"
        "slabscope plan my_model.onnx\n"
        "slabscope assets/example_graphs/diamond.json\n"
        "python -m slabscope export assets/example_graphs/diamond.json --png"
        " assets/example_graphs/diamond.json\n"
        "```\n"
        "```console\n"
        "$ slabscope run assets/example_graphs/diamond_exec.json  # exit status 1\n"
        "slabscope plan assets/example_graphs/diamond.json\n"
        "```\n"
        "```text\n"
        "slabscope plan assets/example_graphs/diamond.json\n"
        "```\n", encoding="utf-8")
    found = doc_commands([page])
    diamond = str(ROOT / "assets/example_graphs/diamond.json")
    assert [(c.line, c.args, c.status) for c in found] == [
        (3, ("plan", diamond, "--conflicts", "serial"), 0),
        (7, ("export", diamond, "--png", "assets/example_graphs/diamond.json"), 0),
        (10, ("run", str(ROOT / "assets/example_graphs/diamond_exec.json")), 1),
    ]

