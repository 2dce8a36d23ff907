"""Training steps and the levers that make them need less, against PyTorch's own measure.

Run: .venv/bin/python bench/training.py [--budget S] [--models NAME,...]   (needs torch;
`transformers` for the BERT row)

For each model, one steady-state training step (Adam; recorded after a warm-up step, as
`python -m slabscope.planner.torch_trace MODEL --step adam` does), on the CPU:

- eager: PyTorch's MemTracker peak of the step (torch.distributed._tools.mem_tracker), bytes;
- recorded: the recorded order's live peak (planner.analysis.peak), as a ratio of eager;
- reserved / expandable: the caching-allocator model's peak reserved replaying the recorded
  order, without and with expandable segments;
- last use: each buffer freed at its last access, same order (what a static plan frees);
- best order: the order with the least live peak (planner.schedule), each optimizer update free to
  run as soon as its gradient is final (the user's change: an optimizer step in a
  post-accumulate-grad hook);
- in place: the best order once each pointwise op may write its output over an argument that
  dies there (planner.conflicts.in_place, opt-in; the user's change: `inplace=True` or an
  in-place op in the model);
- first fit / search: the slab of a static plan for that order, in place (first fit, search);
- time: seconds to record, and to find the order and the search plan.

Ratios are of the eager peak. MODeL (ICML 2023), choosing order and addresses together with an
ILP solver, reports 0.70 of PyTorch's memory on average over its training graphs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
from torch.distributed._tools.mem_tracker import MemTracker  # noqa: E402

from bench import training_models  # noqa: E402
from slabscope import planner  # noqa: E402
from slabscope.planner.torch_trace import trace_step  # noqa: E402
from slabscope.planner.allocator.allocator_replay import replay_graph  # noqa: E402
from slabscope.planner.allocator.caching_allocator import AllocatorSettings  # noqa: E402
from slabscope.planner.analysis.peak import live_peak  # noqa: E402
from slabscope.planner.conflicts.in_place import in_place  # noqa: E402
from slabscope.planner.recording.dataflow import dataflow_lifetimes  # noqa: E402
from slabscope.planner.recording.training_step import make_optimizer, training_step  # noqa: E402

MODEL_PAPER_RATIO = 0.70  # MODeL (ICML 2023): average memory as a share of PyTorch's, as reported


def _bert():
    from transformers import BertConfig, BertForMaskedLM

    config = BertConfig(vocab_size=8000, hidden_size=256, num_hidden_layers=4,
                        num_attention_heads=4, intermediate_size=1024,
                        max_position_embeddings=128)
    return BertForMaskedLM(config)


# name -> (factory, example input)
MODELS = {
    "MLP": (lambda: training_models.MLP(1024), lambda: torch.randn(64, 256)),
    "ConvNet": (lambda: training_models.ConvNet(32), lambda: torch.randn(16, 3, 64, 64)),
    "attention block": (lambda: training_models.Block(256), lambda: torch.randn(8, 128, 256)),
    "transformer": (lambda: training_models.Transformer(), lambda: torch.randint(0, 1000, (8, 64))),
    "BERT (4 layers)": (_bert, lambda: torch.randint(0, 8000, (8, 128))),
}


def print_table(header: tuple, rows: list[tuple]) -> None:
    widths = [max(len(str(r[c])) for r in [header, *rows]) for c in range(len(header))]
    for row in [header, ["-" * w for w in widths], *rows]:
        print("  ".join(str(v).rjust(w) for v, w in zip(row, widths)))


def measure(name: str, budget: float) -> tuple:
    factory, example = MODELS[name]
    torch.manual_seed(0)
    model, x = factory(), example()
    model.train()
    optimizer = make_optimizer("adam", model.parameters())
    step = training_step(model, [x], optimizer)
    step()  # warm-up: the optimizer state exists from here on
    with MemTracker() as tracker:
        tracker.track_external(model, optimizer, x)
        step()
    eager = tracker.get_tracker_snapshot("peak")[torch.device("cpu")]["Total"]
    began = time.perf_counter()
    graph = trace_step(step, module=model, optimizer=optimizer)
    record_s = time.perf_counter() - began
    recorded = live_peak(graph).bytes
    reserved = replay_graph(graph).peak_reserved_bytes
    expandable = replay_graph(graph, AllocatorSettings(expandable_segments=True)
                              ).peak_reserved_bytes
    freed = dataflow_lifetimes(graph)
    last_use = live_peak(freed).bytes
    began = time.perf_counter()
    best = planner.schedule(freed, budget=budget)
    shared = in_place(freed).graph
    best_shared = planner.schedule(shared, budget=budget)
    ordered = planner.with_schedule(shared, best_shared.order)
    first_fit = planner.plan(ordered, "first-fit", conflicts="serial")
    searched = planner.plan(ordered, "search", conflicts="serial", budget=budget)
    for plan in (first_fit, searched):
        assert planner.verify(ordered, plan).ok
    lever_s = time.perf_counter() - began

    def ratio(value: int) -> str:
        return f"{value / eager:.3f}"

    return (name, len(graph.nodes), f"{eager:,}", ratio(recorded), ratio(reserved),
            ratio(expandable), ratio(last_use), ratio(best.peak_bytes),
            ratio(best_shared.peak_bytes), ratio(first_fit.slab_bytes),
            ratio(searched.slab_bytes), f"{record_s:.1f}", f"{lever_s:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=float, default=5.0,
                        help="seconds for the order search and for the packing search each")
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"comma-separated, from: {', '.join(MODELS)}")
    args = parser.parse_args()
    # The planner's compiled kernels are built on first use; build them before timing anything.
    example = planner.load(Path(__file__).resolve().parent.parent / "assets" / "example_graphs" /
                           "diamond.json")
    planner.schedule(example, budget=0.1)
    planner.plan(example, "search", conflicts="serial", budget=0.1)
    rows = []
    for name in args.models.split(","):
        try:
            rows.append(measure(name, args.budget))
        except ImportError as exc:
            print(f"{name}: skipped ({exc})", file=sys.stderr)
    print_table(("model", "ops", "eager bytes", "recorded", "reserved", "expandable",
                 "last use", "best order", "in place", "first fit", "search", "record s",
                 "levers s"), rows)
    print(f"\nratios of the eager (MemTracker) peak; MODeL reports {MODEL_PAPER_RATIO:.2f} "
          f"(order and addresses chosen together, ILP solver)")


if __name__ == "__main__":
    main()
