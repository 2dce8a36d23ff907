"""The MiniMalloc CSV writer and reader agree: whatever `--csv` writes reads back as the same
buffers, names and offsets, or the writer refuses the name in one line; and the reader's fast
and row-by-row parsers split rows alike (one row is never two buffers)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.planner.formats.minimalloc_csv import (_parse, _read_rows, load_minimalloc_csv,
                                                      read_minimalloc_offsets, write_minimalloc_csv)

ROUND_TRIP = settings(max_examples=150, deadline=None, database=None,
                      suppress_health_check=[HealthCheck.function_scoped_fixture])

# Characters str.splitlines breaks at but the csv module does not, and those it does.
LINE_BREAKS = ["\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028",
               "\u2029"]
names = st.text(alphabet=st.one_of(st.characters(codec="utf-8"), st.sampled_from(
    LINE_BREAKS + [",", '"', " ", "\t"])), min_size=0, max_size=12)


def _graph(buffer_names: list[str]) -> planner.Graph:
    """A chain t0..tk with buffer i live from t(i) to t(i + 1)."""
    k = len(buffer_names)
    nodes = tuple(planner.Node(f"t{i}") for i in range(k + 1))
    edges = tuple((f"t{i}", f"t{i + 1}") for i in range(k))
    buffers = tuple(planner.Buffer(name, 8 * (i + 1), (f"t{i}", f"t{i + 1}"))
                    for i, name in enumerate(buffer_names))
    return planner.Graph(nodes=nodes, edges=edges, buffers=buffers, name="g")


@ROUND_TRIP
@given(st.lists(names, min_size=1, max_size=6, unique=True))
@example(["a\rb"])
@example(["a\x1cb", "c\u2028d", "e\x0bf"])
@example(["x,y", 'q"r', "s\r\nt"])
def test_what_the_writer_writes_the_reader_reads_back(tmp_path_factory, buffer_names):
    folder = tmp_path_factory.mktemp("rt")
    try:
        graph = _graph(buffer_names)
    except planner.PlanError:
        return  # a name the graph itself refuses (an empty one, a lone surrogate)
    plan = planner.plan(graph, conflicts="serial")
    out = folder / "plan.csv"
    try:
        write_minimalloc_csv(graph, plan, out)
    except planner.PlanError as exc:
        assert "\n" not in str(exc) and "cannot be written as a CSV id" in str(exc)
        assert any(n != n.strip() or not n for n in buffer_names)
        assert not out.exists()
        return
    assert read_minimalloc_offsets(out) == {p.name: p.offset for p in plan.placements}
    with pytest.warns(UserWarning, match="offset column"):
        again = load_minimalloc_csv(out)
    assert [b.name for b in again.buffers] == [p.name for p in plan.placements]
    assert [b.bytes for b in again.buffers] == [p.bytes for p in plan.placements]
    assert planner.plan(again).slab_bytes == plan.slab_bytes


@pytest.mark.parametrize("separator", LINE_BREAKS[2:])
def test_the_fast_and_slow_parsers_agree_on_characters_splitlines_breaks_at(tmp_path, separator):
    path = tmp_path / "t.csv"
    path.write_text(f"id,lower,upper,size\na{separator}b,0,2,64\nc,1,3,32\n", newline="")
    ids = _parse(path)[0]
    header, rows, _ = _read_rows(path)
    assert ids == [r[0].strip() for r in rows] == [f"a{separator}b".strip(), "c"]
    assert len(load_minimalloc_csv(path).buffers) == 2


@pytest.mark.parametrize("separator", LINE_BREAKS[2:])
def test_one_row_is_never_two_buffers(tmp_path, separator):
    # str.splitlines would cut this row in two valid rows; the csv module sees seven fields.
    path = tmp_path / "t.csv"
    path.write_text(f"id,lower,upper,size\na,0,2,64{separator}b,1,3,32\n", newline="")
    with pytest.raises(planner.PlanError, match="line 2: expected 4 fields, got 7"):
        load_minimalloc_csv(path)


def test_a_carriage_return_in_a_name_round_trips(tmp_path):
    graph = _graph(["a\rb", "c\r\nd", "e,f", 'g"h'])
    plan = planner.plan(graph, conflicts="serial")
    out = tmp_path / "plan.csv"
    write_minimalloc_csv(graph, plan, out)
    with pytest.warns(UserWarning, match="offset column"):
        assert [b.name for b in load_minimalloc_csv(out).buffers] == list(plan.order)


def test_the_cli_csv_of_a_name_with_a_carriage_return_reads_back(tmp_path, capsys):
    import json

    from slabscope.app.cli import main

    graph = tmp_path / "g.json"
    graph.write_text(json.dumps({"nodes": [{"name": "n", "outputs": ["a\rb"]},
                                           {"name": "m", "inputs": ["a\rb"]}],
                                 "buffers": [{"name": "a\rb", "bytes": 64}]}))
    out = tmp_path / "plan.csv"
    assert main(["plan", str(graph), "--csv", str(out)]) == 0
    capsys.readouterr()
    assert main(["plan", str(out)]) == 0
    assert "a\\rb" in capsys.readouterr().out
