"""A MiniMalloc trace held as columns: the same graph, plans and bound as one built of objects,
without building a Buffer, Node or Placement per row on the way to a plan."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.planner.conflicts.conflict_model import default_conflicts
from slabscope.planner.conflicts.serial_model import serial_schedule
from slabscope.planner.formats import minimalloc_csv
from slabscope.planner.model.graph import Graph
from slabscope.planner.model.lazy_sequence import Lazy
from slabscope.planner.model.timeline_graph import TimelineGraph, timeline_graph


@st.composite
def traces(draw, max_rows=30):
    """(ids, lower, upper, size, alignment) of a small trace with repeated and sparse times."""
    n = draw(st.integers(0, max_rows))
    lower = draw(st.lists(st.integers(0, 40), min_size=n, max_size=n))
    spans = draw(st.lists(st.integers(1, 12), min_size=n, max_size=n))
    size = draw(st.lists(st.integers(0, 5000), min_size=n, max_size=n))
    ids = [f"b{i}" for i in draw(st.permutations(range(n)))]
    return (ids, np.array(lower, np.int64).reshape(-1),
            (np.array(lower, np.int64) + np.array(spans, np.int64)).reshape(-1),
            np.array(size, np.int64).reshape(-1), draw(st.sampled_from([1, 8, 256])))


def objects_graph(graph: TimelineGraph) -> Graph:
    """The same graph as a plain `Graph` of objects."""
    return Graph(nodes=tuple(graph.nodes), edges=tuple(graph.edges), buffers=tuple(graph.buffers),
                 alignment=graph.alignment, order=tuple(graph.order),
                 schedule=tuple(graph.schedule), name=graph.name)


@settings(max_examples=60, deadline=None)
@given(traces())
def test_the_columns_read_like_the_objects(trace):
    ids, lower, upper, size, alignment = trace
    columns = timeline_graph(ids, lower, upper, size, alignment, "t")
    objects = objects_graph(columns)
    assert columns == objects and objects == columns
    assert objects != dataclasses.replace(columns, alignment=alignment + 1)
    for view in ("reserved", "use_indices", "node_index", "buffer_index", "buffer_names",
                 "buffer_bytes"):
        assert getattr(columns, view) == getattr(objects, view), view
    for got, want in zip(columns.use_arrays, objects.use_arrays):
        assert np.array_equal(got, want)
    assert np.array_equal(columns.edge_array, objects.edge_array)
    assert columns.request_order() == objects.request_order()
    assert serial_schedule(columns) == serial_schedule(objects)
    assert default_conflicts(columns) == default_conflicts(objects) == "serial"
    # Each buffer lives from its lower time to upper - 1, and each node keeps its time.
    for name, lo, hi in zip(ids, lower.tolist(), upper.tolist()):
        uses = [columns.nodes[columns.node_index[u]].attrs["time"]
                for u in columns.buffer(name).uses]
        assert (min(uses), max(uses)) == (lo, hi - 1)


@settings(max_examples=40, deadline=None)
@given(traces(), st.sampled_from(["first-fit", "best-fit", "largest-first"]))
def test_plans_and_bounds_match_the_objects_graph(trace, algorithm):
    columns = timeline_graph(*trace, "t")
    objects = objects_graph(columns)
    got = planner.plan(columns, algorithm=algorithm, conflicts="serial")
    want = planner.plan(objects, algorithm=algorithm, conflicts="serial")
    assert got.placements == want.placements and got.slab_bytes == want.slab_bytes
    assert planner.lower_bound(columns, "serial") == planner.lower_bound(objects, "serial")


def test_a_replaced_field_is_read_from_the_field_not_the_columns():
    columns = timeline_graph(["a", "b", "c"], np.array([0, 1, 5]), np.array([2, 6, 7]),
                             np.array([10, 20, 30]), 1, "t")
    order = ("c", "a", "b")
    reordered = dataclasses.replace(columns, order=order)
    assert reordered.request_order() == (2, 0, 1)
    backwards = dataclasses.replace(columns, schedule=tuple(reversed(columns.schedule)),
                                    edges=tuple((b, a) for a, b in columns.edges))
    assert not backwards.known_chain() and columns.known_chain()
    assert serial_schedule(backwards) == tuple(reversed(range(len(columns.nodes))))
    trimmed = dataclasses.replace(columns, buffers=columns.buffers[:2])
    assert trimmed.reserved == (10, 20) and trimmed.buffer_names == ("a", "b")


def test_equal_and_pickled_as_plain_tuples():
    make = lambda: timeline_graph(["a", "b"], np.array([0, 3]), np.array([4, 5]),  # noqa: E731
                                  np.array([1, 2]), 4, "t")
    one, two = make(), make()
    assert one == two and one.buffers == tuple(two.buffers) and hash(one.buffers) == hash(two.buffers)
    again = pickle.loads(pickle.dumps(one))
    assert isinstance(again.buffers, tuple) and again == one
    assert again.reserved == one.reserved and again.request_order() == (0, 1)


def test_planning_a_loaded_trace_builds_no_buffer_node_or_placement(tmp_path: Path):
    path = tmp_path / "trace.csv"
    rows = [f"r{i},{i % 97},{i % 97 + 1 + i % 13},{64 * (1 + i % 7)}" for i in range(3000)]
    path.write_text("id,lower,upper,size\n" + "\n".join(rows) + "\n")
    graph = planner.load(path)
    assert isinstance(graph, TimelineGraph)
    result = planner.plan(graph, conflicts=planner.default_conflicts(graph))
    planner.lower_bound(graph, "serial")
    rows = result.to_dict()["placements"]
    sequences = [graph.nodes, graph.edges, graph.buffers, graph.schedule, result.placements]
    assert all(isinstance(s, Lazy) and not s.built for s in sequences)
    assert len(result.placements) == len(graph.buffers) == 3000
    assert rows == [{"name": p.name, "offset": p.offset, "bytes": p.bytes, "reserved": p.reserved}
                    for p in result.placements]  # the columns' rows are the objects' fields
    graph.build_objects()  # what the window does on its worker thread
    assert all(s.built for s in sequences)


@st.composite
def csv_texts(draw):
    """MiniMalloc CSV text with the variations the whole-array reader must read like the
    csv module, or hand to it: column orders, an alignment column, spaces, signs, empty lines,
    no final newline, odd ids, wrong field counts, long and non-ASCII numbers."""
    columns = draw(st.permutations(["id", "lower", "upper", "size"]))
    if draw(st.booleans()):
        columns = [*columns, "alignment"]
    def mostly(common, rare):  # one field in twenty is rare
        return st.integers(0, 19).flatmap(lambda k: rare if k == 0 else common)

    odd = st.sampled_from([" 7", "8  ", "+3", "-2", "1_0", "\u0661", "", "x",
                           "12345678901234567890", "0" * 18])
    name = mostly(st.from_regex(r"[a-z]{1,3}[0-9]?", fullmatch=True),
                  st.sampled_from([" n", "m ", "é", "", "a b", "\u3000x"]))
    lines = [",".join(c.upper() if draw(st.booleans()) else c for c in columns)]
    for _ in range(draw(st.integers(0, 6))):
        lower = draw(st.integers(0, 1000))
        fair = {"id": draw(name), "lower": str(lower), "size": str(draw(st.integers(0, 10**6))),
                "upper": str(lower + draw(st.integers(1, 50))), "alignment": "8"}
        fields = [fair[c] if c == "id" else draw(mostly(st.just(fair[c]), odd)) for c in columns]
        if draw(st.integers(0, 9)) == 0:
            fields = fields[:-1]
        lines.append(",".join(fields) if draw(st.integers(0, 9)) else "")
    return "\n".join(lines) + ("\n" if draw(st.booleans()) else "")


@settings(max_examples=300, deadline=None)
@given(csv_texts())
def test_the_whole_array_reader_reads_what_the_row_reader_reads(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_text(text, encoding="utf-8")
    fast = minimalloc_csv._parse_plain(path)
    if fast is None:
        return  # the row reader takes it, and names any problem
    ids, lower, upper, size, alignment, offsets = minimalloc_csv._parse_rows(path)
    assert fast[0] == ids and fast[4] == alignment and fast[5] == offsets == {}
    for got, want in zip(fast[1:4], (lower, upper, size)):
        assert got.tolist() == list(want)
