"""`slabscope plan`: the table, JSON, and exit codes for bad files and capacity failures."""

import dataclasses
import json
import subprocess
import sys

from slabscope import planner
import slabscope.planner.formats.minimalloc_csv
import slabscope.app.cli.plan
from slabscope.app.cli import main
from slabscope.planner.model.plan import Placements
from tests.examples import LUMINAL_JOIN, RELU_UNFUSED


def test_table_shows_specs_offsets_and_summary(capsys):
    assert main(["plan", str(RELU_UNFUSED)]) == 0
    out = capsys.readouterr().out
    assert "t1            16,384          0  x" in out
    assert "t0            16,384  1,179,904  -" in out
    assert "slab bytes           1,196,288" in out
    assert "without reuse        1,229,056" in out
    assert "saved                   32,768  (2.7%)" in out


def test_json_lists_placements_in_request_order(capsys):
    assert main(["plan", str(RELU_UNFUSED), "--json", "--order", "t1,y"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["slab_bytes"] == 1_196_288 and data["no_reuse_bytes"] == 1_229_056
    assert data["algorithm"] == "first-fit"
    assert [p["name"] for p in data["placements"]] == ["t1", "y", "x", "w", "b", "workspace", "t0"]
    assert data["placements"][0] == {"name": "t1", "offset": 0, "bytes": 16384, "reserved": 16384}


def test_capacity_failure_exits_3_naming_the_request(capsys):
    assert main(["plan", str(LUMINAL_JOIN), "--capacity", "767"]) == 3
    err = capsys.readouterr().err
    assert "request 1 'b'" in err and "767" in err


def test_bad_file_exits_2_with_message_on_stderr(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": ["a"], "buffers": [{"name": "x", "bytes": 1, "uses": ["zz"]}]}')
    assert main(["plan", str(bad)]) == 2
    captured = capsys.readouterr()
    assert "buffer 'x' uses unknown node 'zz'" in captured.err and captured.out == ""


def test_installed_command_reports_without_traceback(tmp_path):
    bad = tmp_path / "cycle.json"
    bad.write_text('{"nodes": ["a", "b"], "edges": [["a", "b"], ["b", "a"]], "buffers": []}')
    result = subprocess.run([sys.executable, "-m", "slabscope.app.cli", "plan", str(bad)],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == f"slabscope: {bad}: graph has a cycle: a -> b -> a"


def test_csv_export_round_trips_offsets(tmp_path, capsys):
    out = tmp_path / "plan.csv"
    assert main(["plan", str(RELU_UNFUSED), "--csv", str(out)]) == 0
    capsys.readouterr()
    offsets = planner.formats.minimalloc_csv.read_minimalloc_offsets(out)
    assert offsets == {"x": 0, "w": 65_536, "b": 131_072, "workspace": 131_328,
                       "t0": 1_179_904, "t1": 0, "y": 16_384}
    assert main(["plan", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["conflicts"] == "serial"


def test_compact_json_is_what_json_dumps_writes(monkeypatch, capsys, tmp_path):
    # Past the indent limit, rows are written from the plan's columns, or from its placements
    # where it keeps no columns: the same text json.dumps gives, odd names included.
    csv = tmp_path / "trace.csv"
    csv.write_text("id,lower,upper,size\n" + "".join(
        f"{i},{i % 3},{i % 3 + 2},{8 * (i + 1)}\n" for i in range(5)))
    monkeypatch.setattr(slabscope.app.cli.plan, "JSON_INDENT_LIMIT", 2)
    for path in (csv, RELU_UNFUSED):
        graph = planner.load(path)
        result = planner.plan(graph, conflicts=planner.default_conflicts(graph))
        assert main(["plan", str(path), "--json"]) == 0
        text = capsys.readouterr().out.strip()
        data = json.loads(text)
        assert json.dumps(data) == text
        assert data["placements"] == result.to_dict()["placements"]
        as_tuple = dataclasses.replace(result, placements=tuple(result.placements))
        assert as_tuple.placements_json() == result.placements_json() == json.dumps(
            data["placements"])
    names = ['q"uote', "back\\slash", "tab\there", "é", "n"]
    placements = Placements(names, [0, 1, 2, 3, 4], [1] * 5, [1] * 5)
    assert placements.json_array() == json.dumps(placements.rows())
