"""The planner's scalable paths agree with plain definitions: the dag model on chains (intervals,
no closure), interval conflict lists, the O(edges) flow bound against the earlier networkx max
flow over the cover relation, the exact fallback past 32-bit totals, the plain-CSV fast path,
and cancelling long work from another thread."""

import itertools
import random
import threading

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slabscope import planner
from slabscope.planner.formats import minimalloc_csv
from slabscope.planner.model.bitset import members
from slabscope.planner.model.intervals import overlap_lists
from tests.oracles import brute_force_clique, plain_precedes, plain_reaches


@st.composite
def chain_graphs(draw, max_nodes=8, max_buffers=10):
    """A chain of nodes (plus shortcut edges, which keep the order unique) with random uses."""
    n = draw(st.integers(1, max_nodes))
    names = [f"n{i}" for i in range(n)]
    shortcuts = [(i, j) for i in range(n) for j in range(i + 2, n)]
    extra = draw(st.lists(st.sampled_from(shortcuts), unique=True, max_size=n)) if shortcuts else []
    edges = [(i, i + 1) for i in range(n - 1)] + extra
    buffers = [{"name": f"b{b}", "bytes": draw(st.integers(0, 3000)),
                "uses": draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))}
               for b in range(draw(st.integers(1, max_buffers)))]
    perm = draw(st.permutations(range(n)))
    return planner.graph_from_dict({"alignment": draw(st.sampled_from([1, 256])),
                                    "nodes": [names[i] for i in perm],
                                    "edges": [[names[i], names[j]] for i, j in edges],
                                    "buffers": buffers})


@settings(max_examples=80, deadline=None)
@given(graph=chain_graphs())
def test_dag_model_on_a_chain_is_intervals_and_matches_reachability(graph):
    model = planner.DagConflicts(graph)
    assert model.intervals is not None
    reach = plain_reaches(graph)
    n = len(graph.buffers)
    for a, b in itertools.product(range(n), repeat=2):
        assert model.precedes(a, b) == plain_precedes(reach, graph.buffers[a], graph.buffers[b])
    for a in range(n):
        expected = {b for b in range(n) if model.conflicts(a, b)}
        assert set(members(model.conflict_mask(a))) == expected
    assert model.lower_bound().bytes == brute_force_clique(graph, model)
    assert "reachability" not in graph.__dict__


def test_a_fork_is_not_a_chain():
    graph = planner.load("assets/example_graphs/diamond.json")
    assert planner.conflict_model(graph, "dag").intervals is None
    assert planner.conflict_model(graph, "serial").intervals is not None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 6)), min_size=1, max_size=30))
def test_overlap_lists_are_the_overlapping_pairs(spans):
    import numpy as np

    first = np.array([s for s, _ in spans], dtype=np.int64)
    last = first + np.array([d for _, d in spans], dtype=np.int64)
    starts, neighbours = overlap_lists(first, last)
    for i in range(len(spans)):
        expected = [j for j in range(len(spans))
                    if j != i and first[j] <= last[i] and first[i] <= last[j]]
        assert neighbours[starts[i]:starts[i + 1]].tolist() == expected


def reference_antichain_weight(graph, model) -> int:
    """The heaviest antichain by the earlier construction: a networkx max flow over the cover
    relation of `precedes`, successor sets from pairwise comparisons."""
    n = len(graph.buffers)
    first, _ = model.use_steps()
    everything = (1 << n) - 1
    later = []
    for i in range(n):
        comparable = everything & ~model.conflict_mask(i) & ~(1 << i)
        # Of two comparable buffers the one used first in a topological order precedes.
        later.append(sum(1 << j for j in members(comparable) if first[j] > first[i]))
    rank = sorted(range(n), key=lambda i: -later[i].bit_count())
    position = {b: r for r, b in enumerate(rank)}
    succ = [sum(1 << position[j] for j in members(later[b])) for b in rank]
    network = nx.DiGraph()
    for r, b in enumerate(rank):
        network.add_edge("source", ("out", r), capacity=graph.reserved[b])
        network.add_edge(("in", r), "sink", capacity=graph.reserved[b])
        network.add_edge(("in", r), ("out", r))
        covered = 0
        for s in members(succ[r]):
            if not covered >> s & 1:
                network.add_edge(("out", r), ("in", s))
                covered |= succ[s]
    return sum(graph.reserved) - nx.maximum_flow_value(network, "source", "sink")


def layered_data(layers: int, width: int, buffers: int, seed: int) -> dict:
    """A layered DAG whose lanes fork and merge; buffers have 1-3 uses in nearby layers, so
    some have several first or several last uses."""
    rng = random.Random(seed)
    names = [[f"v{layer}_{k}" for k in range(width)] for layer in range(layers)]
    edges = []
    for layer in range(layers - 1):
        for k in range(width):
            targets = {k} | ({(k + rng.choice((-1, 1))) % width} if rng.random() < 0.3 else set())
            edges += [[names[layer][k], names[layer + 1][t]] for t in targets]
    bufs = []
    for b in range(buffers):
        layer = rng.randrange(layers)
        uses = {rng.choice(names[min(layer + rng.randint(0, 2), layers - 1)])
                for _ in range(rng.randint(1, 3))}
        bufs.append({"name": f"t{b}", "bytes": rng.choice((256, 1024, 4096, 65536)),
                     "uses": sorted(uses)})
    return {"nodes": [n for row in names for n in row], "edges": edges, "buffers": bufs}


def test_flow_bound_matches_the_networkx_reference_at_two_thousand_buffers():
    graph = planner.graph_from_dict(layered_data(layers=250, width=4, buffers=2000, seed=3))
    model = planner.conflict_model(graph, "dag")
    bound = planner.lower_bound(graph, "dag")
    assert bound.bytes == reference_antichain_weight(graph, model)
    witness = [graph.buffer_index[name] for name in bound.witness]
    assert all(model.conflicts(a, b) for a, b in itertools.combinations(witness, 2))


@settings(max_examples=30, deadline=None)
@given(graph=st.builds(lambda seed: planner.graph_from_dict(_big_weights(seed)),
                       st.integers(0, 10**6)))
def test_totals_past_32_bits_take_the_exact_fallback(graph):
    model = planner.conflict_model(graph, "dag")
    assert sum(graph.reserved) > 2**31
    assert planner.lower_bound(graph, "dag").bytes == brute_force_clique(graph, model)


def _big_weights(seed: int) -> dict:
    rng = random.Random(seed)
    data = layered_data(layers=3, width=3, buffers=7, seed=seed)
    data["alignment"] = 1
    for buf in data["buffers"]:
        buf["bytes"] = rng.randrange(2**33, 2**34) | 1  # odd: the gcd cannot scale them down
    return data


def test_plain_csv_fast_path_reads_what_the_row_by_row_path_reads(tmp_path, monkeypatch):
    rng = random.Random(5)
    rows = ["id,lower,upper,size,alignment"]
    for b in range(300):
        lower = rng.randrange(100)
        rows.append(f"r{b},{lower},{lower + rng.randint(1, 9)},{rng.randrange(10**6)},16")
    path = tmp_path / "trace.csv"
    path.write_text("\n".join(rows) + "\n")
    assert minimalloc_csv._parse_plain(path) is not None
    fast = planner.load(path)
    monkeypatch.setattr(minimalloc_csv, "_parse_plain", lambda path: None)
    slow = planner.load(path)
    assert (fast.nodes, fast.edges, fast.buffers, fast.alignment, fast.order) == \
        (slow.nodes, slow.edges, slow.buffers, slow.alignment, slow.order)


@pytest.mark.parametrize("work", ["lower bound", "first fit"])
def test_cancelling_from_another_thread_stops_the_dag_model_quickly(work):
    graph = planner.graph_from_dict(layered_data(layers=2500, width=8, buffers=20000, seed=1))
    token = planner.CancelToken()
    timer = threading.Timer(0.3, token.cancel)
    timer.start()
    # The work takes far longer than 0.3 s; Cancelled shows the token stopped it, not its
    # end. (How soon after the cancel is bench material, not a test's.)
    with pytest.raises(planner.Cancelled):
        if work == "lower bound":
            planner.lower_bound(graph, "dag", cancel=token)
        else:
            planner.plan(graph, conflicts="dag", cancel=token)
    timer.join()


@settings(max_examples=60, deadline=None)
@given(graph=chain_graphs(), data=st.data())
def test_verify_over_interval_lists_finds_every_conflicting_overlap(graph, data):
    model = planner.conflict_model(graph, "serial")
    n = len(graph.buffers)
    offsets = data.draw(st.lists(st.integers(0, 8), min_size=n, max_size=n))
    placements = tuple(planner.Placement(b.name, o * graph.alignment, b.bytes, r)
                       for b, o, r in zip(graph.buffers, offsets, graph.reserved))
    plan = planner.Plan(placements, (), max(p.end for p in placements), sum(graph.reserved),
                        "given", "serial", graph.alignment)
    expected = [(graph.buffers[a].name, graph.buffers[b].name)
                for a, b in itertools.combinations(range(n), 2) if model.conflicts(a, b)
                and placements[a].offset < placements[b].end
                and placements[b].offset < placements[a].end]
    assert list(planner.verify(graph, plan).clobbered) == expected


def test_both_models_implement_the_conflict_model_protocol():
    graph = planner.load("assets/example_graphs/diamond.json")
    for name in planner.CONFLICT_MODELS:
        model = planner.conflict_model(graph, name)
        assert isinstance(model, planner.ConflictModel) and model.name == name
        first, last = model.use_steps()
        assert len(first) == len(last) == len(graph.buffers) and (first <= last).all()
        assert model.lower_bound().conflicts == name
