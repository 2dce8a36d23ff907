"""Each malformed graph gives one PlanError whose message names the offending item."""

import json

import pytest

from slabscope import planner


def base():
    return {"alignment": 256, "nodes": ["a", "b"], "edges": [["a", "b"]],
            "buffers": [{"name": "x", "bytes": 16, "uses": ["a", "b"]}]}


def with_(**changes):
    data = base()
    data.update(changes)
    return data


CASES = [
    (with_(alignment=0), "alignment must be positive, got 0"),
    (with_(alignment=-4), "alignment must be positive, got -4"),
    (with_(alignment="256"), "alignment must be an integer, got str"),
    (with_(edges=[["a", "b"], ["b", "a"]]), "graph has a cycle: a -> b -> a"),
    (with_(edges=[["a", "a"]]), "graph has a cycle: a -> a"),
    (with_(buffers=[{"name": "x", "bytes": 1, "uses": ["a"]},
                    {"name": "x", "bytes": 2, "uses": ["b"]}]), "duplicate buffer name 'x'"),
    (with_(buffers=[{"name": "x", "bytes": 1, "uses": []}]), "buffer 'x' has no uses"),
    (with_(buffers=[{"name": "x", "bytes": 1}]), "buffer 'x' has no uses"),
    (with_(buffers=[{"name": "x", "bytes": 1, "uses": ["ghost"]}]),
     "buffer 'x' uses unknown node 'ghost'"),
    (with_(buffers=[{"name": "x", "bytes": 2**64 - 1, "uses": ["a"]}]),
     "buffer 'x': size 18446744073709551615 overflows when aligned to 256"),
    (with_(buffers=[{"name": "x", "bytes": -5, "uses": ["a"]}]),
     "buffer 'x': size must be non-negative, got -5"),
    (with_(buffers=[{"name": "x", "bytes": "16", "uses": ["a"]}]),
     "buffer 'x': bytes must be an integer, got str"),
    (with_(buffers=[{"name": "x", "bytes": True, "uses": ["a"]}]),
     "buffer 'x': bytes must be an integer, got bool"),
    (with_(buffers="x"), "buffers must be a list, got str"),
    (with_(buffers=[{"name": "x", "shape": [2, -1], "dtype": "float32", "uses": ["a"]}]),
     "buffer 'x': shape [2, -1] has a negative dimension"),
    (with_(buffers=[{"name": "x", "shape": [2], "dtype": "complex7", "uses": ["a"]}]),
     "buffer 'x': unknown dtype 'complex7'"),
    (with_(order=["x", "nope"]), "order names unknown buffer 'nope'"),
    (with_(order=["x", "x"]), "order lists buffer 'x' twice"),
    (with_(edges=[["a", "zz"]]), "edge 'a' -> 'zz' names unknown node 'zz'"),
    (with_(nodes=["a", "a"]), "duplicate node name 'a'"),
    (with_(conflicts="interval"), "conflicts must be one of dag, serial, got 'interval'"),
    (with_(conflicts=1), "conflicts must be a string, got int"),
    ([1, 2], "the graph file's top level must be an object, got list"),
]


@pytest.mark.parametrize("data, message", CASES, ids=[m for _, m in CASES])
def test_each_failure_has_its_message(data, message):
    with pytest.raises(planner.PlanError) as caught:
        planner.graph_from_dict(data)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_malformed_json_names_file_and_position(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"nodes": ["a",]}')
    with pytest.raises(planner.PlanError, match=r"broken.json: malformed JSON at line 1 column"):
        planner.load(path)


def test_missing_file_is_a_plan_error(tmp_path):
    with pytest.raises(planner.PlanError, match="cannot read"):
        planner.load(tmp_path / "absent.json")


def test_plan_with_unknown_order_name():
    graph = planner.graph_from_dict(base())
    with pytest.raises(planner.PlanError, match="order names unknown buffer 'q'"):
        planner.plan(graph, order=["q"])


def test_valid_file_round_trips(tmp_path):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(base()))
    assert planner.plan(planner.load(path)).slab_bytes == 256
