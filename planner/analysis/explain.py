"""`explain`: why a graph needs the memory it needs, and what would make it need less.

It answers with the figures of docs/peak.md, each measured on the graph's own schedule:

- the **live peak** (`analysis.peak`): the most bytes live at once and the first step where it
  is reached, with every buffer live there, largest first, and grouped by op, kind, module or
  frame (each grouping adds up to the live peak);
- the **slab** of a static plan, the **lower bound** (no plan is smaller) and their gap;
- **reserved**: what PyTorch's caching allocator would hold on the same order (the model), and
  for a snapshot also what it held when recorded;
- the **levers**: each one run, never estimated. `order` schedules the graph for the least live
  peak (where its DAG allows another order), `packing` plans with search instead of the chosen
  placer, `allocator` replays with `expandable_segments:True`, `in place` re-plans the graph
  rewritten by the opt-in in-place rule (`conflicts.in_place`) and gives its live peak, lower
  bound and slab before and after, and `serial` (for a plan under the dag model, whose DAG
  allows other orders) plans the same placer under the serial model: the slab when the ops run
  one at a time in the order shown, where the dag model keeps apart every two buffers some
  order could hold live together. A lever that cannot apply to the input is absent. Each says
  in one line what the user would change to get it.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..allocator.allocator_replay import replay_graph
from ..allocator.caching_allocator import AllocatorSettings
from ..conflicts.conflict_model import conflict_model, default_conflicts
from ..conflicts.in_place import in_place
from ..model.graph import Graph
from ..model.plan import Plan
from ..placement.greedy import GREEDY, first_fit
from ..placement.search import default_iterations, search
from ..schedule.scheduling import fixed_reason, schedule
from ..support.cancel import NEVER, CancelToken
from ..support.gc_pause import paused_collection
from .peak import GROUPINGS, Group, LivePeak, group, key_of, live_peak, supported_groupings

# Seconds each measured lever that searches (order, packing) may spend by default: together with
# the rest, a 62k-buffer trace is explained in under 10 s on 2 cores.
DEFAULT_LEVER_BUDGET = 2.0


@dataclass(frozen=True)
class Lever:
    """One way to need less memory, with what it gave when it was run."""

    lever: str          # "order", "packing", "allocator" or "in place"
    bytes_after: int    # the figure the lever changes, after it was applied
    saving_bytes: int   # that figure before, minus after (negative: the lever made it worse)
    how: str            # what was run, and against what
    change: str = ""    # what the user would change to get it, in one line
    # Further figures as (before, after) pairs, by name (in place: live peak, lower bound, slab).
    figures: tuple[tuple[str, int, int], ...] = ()

    def to_dict(self) -> dict:
        """The lever as JSON-ready keys."""
        data = {"lever": self.lever, "bytes_after": self.bytes_after,
                "saving_bytes": self.saving_bytes, "how": self.how, "change": self.change}
        if self.figures:
            data["figures"] = {name: {"before": before, "after": after}
                               for name, before, after in self.figures}
        return data


@dataclass(frozen=True)
class Explanation:
    """The live peak of a graph, who is live there, the slab, bound and reserved figures, and the
    measured levers (largest saving first)."""

    graph: Graph
    peak: LivePeak
    groups: dict[str, tuple[Group, ...]]  # grouping -> groups, for the groupings the input has
    conflicts: str
    algorithm: str
    slab_bytes: int
    lower_bound_bytes: int
    reserved_bytes: int                   # the caching-allocator model on the schedule
    recorded_reserved_bytes: int | None   # a snapshot's recorded reserved peak
    levers: tuple[Lever, ...]

    @property
    def gap(self) -> float:
        """How far the slab lies above the lower bound: slab / bound - 1 (0 when both are 0)."""
        return self.slab_bytes / self.lower_bound_bytes - 1 if self.lower_bound_bytes else 0.0

    def rows(self) -> list[dict]:
        """Every buffer live at the peak, largest first, as JSON-ready keys: name, reserved bytes,
        kind, op, module or frame where the input knows them, first and last schedule step."""
        graph = self.graph
        first, last = conflict_model(graph, "serial").use_steps()
        keys = {name: key_of(graph, name) for name in ("module", "frame") if name in self.groups}
        rows = []
        for b, n in zip(self.peak.buffers, self.peak.producers):
            row = {"name": graph.buffers[b].name, "bytes": graph.reserved[b],
                   "kind": graph.buffers[b].kind, "op": graph.nodes[n].op or None}
            row.update((name, key(b, n)) for name, key in keys.items())
            row["first_step"], row["last_step"] = int(first[b]), int(last[b])
            rows.append(row)
        return rows

    def to_dict(self) -> dict:
        """Everything as JSON-ready keys (docs/peak.md lists them)."""
        return {
            "file": self.graph.name,
            "conflicts": self.conflicts,
            "peak_live_bytes": self.peak.bytes,
            "peak_step": self.peak.step,
            "peak_node": self.peak.node,
            "live_at_peak": self.rows(),
            "groups": {name: [{"key": g.key, "bytes": g.bytes, "count": g.count} for g in groups]
                       for name, groups in self.groups.items()},
            "slab_bytes": self.slab_bytes,
            "algorithm": self.algorithm,
            "lower_bound_bytes": self.lower_bound_bytes,
            "gap": self.gap,
            "reserved_bytes": self.reserved_bytes,
            "recorded_reserved_bytes": self.recorded_reserved_bytes,
            "levers": [lever.to_dict() for lever in self.levers],
        }


def explain(graph: Graph, plan: Plan | None = None, *, conflicts: str | None = None,
            levers: bool = True, budget: float = DEFAULT_LEVER_BUDGET, seed: int = 0,
            cancel: CancelToken = NEVER) -> Explanation:
    """Explain `graph`'s memory: its live peak and who is live there, the slab of `plan` (default:
    first fit in the file's request order under `conflicts`, else the graph's own model), the
    lower bound, the caching allocator's reserved bytes, and (unless `levers` is False) each
    lever's measured saving. `budget` is the seconds each searching lever may spend; `seed`
    makes them reproducible."""
    conflicts = plan.conflict_model if plan is not None else conflicts or default_conflicts(graph)
    peak = live_peak(graph)
    groups = {name: group(graph, peak, name) for name in GROUPINGS
              if name in supported_groupings(graph)}
    cancel.check()
    with paused_collection():
        model = conflict_model(graph, conflicts)
        chosen = plan if plan is not None else first_fit(graph, model, graph.request_order(None),
                                                         None, 0.0, cancel=cancel)
        bound = model.lower_bound(cancel)
    cancel.check()
    replay = replay_graph(graph)
    recorded = graph.allocator.peak_reserved_bytes if graph.allocator is not None else None
    found: list[Lever] = []
    if levers and graph.buffers:
        found += _order_lever(graph, peak, budget, seed, cancel)
        if not chosen.algorithm.startswith("search"):  # a searched plan names how it began
            found += _packing_lever(graph, model, chosen, budget, seed, cancel)
        found += _allocator_lever(graph, replay.peak_reserved_bytes, cancel)
        found += _in_place_lever(graph, peak, conflicts, chosen.slab_bytes, bound.bytes, cancel)
        found += _serial_lever(graph, conflicts, chosen, cancel)
    found.sort(key=lambda lever: (-lever.saving_bytes, lever.lever))
    return Explanation(graph, peak, groups, conflicts, chosen.algorithm, chosen.slab_bytes, bound.bytes,
                       replay.peak_reserved_bytes, recorded, tuple(found))


def _order_lever(graph: Graph, peak: LivePeak, budget: float, seed: int,
                 cancel: CancelToken) -> list[Lever]:
    """The best execution order's live peak against the given order's (absent on a chain)."""
    if fixed_reason(graph) is not None:
        return []
    cancel.check()
    best = schedule(graph, seed=seed, budget=budget, cancel=cancel)
    saving = peak.bytes - best.peak_bytes
    return [Lever("order", best.peak_bytes, saving,
                  f"the best execution order found ({best.source}, {best.proof or 'no bound'}) "
                  f"against the given order's live peak", _order_change(graph, best.order, saving))]


_ORDER_CHANGE = "run the ops in this order (slabscope plan --schedule best)"
_ORDER_CHANGE_STEP = ("run each optimizer update right after its gradient is final (the "
                      "optimizer step in a post-accumulate-grad hook)")
_ORDER_KEPT = "none: no order found needs less than the one given"


def _order_change(graph: Graph, order: tuple[str, ...], saving: int) -> str:
    """What the user changes to run `order`: the optimizer step into backward where that is what
    the order does (an update runs before the backward pass ends), else the order itself."""
    if saving <= 0:
        return _ORDER_KEPT
    position = {name: k for k, name in enumerate(order)}
    phases = [(position[node.name], node.attrs.get("phase")) for node in graph.nodes]
    last_backward = max((k for k, phase in phases if phase == "backward"), default=-1)
    into_backward = any(k < last_backward for k, phase in phases if phase == "optimizer")
    return _ORDER_CHANGE_STEP if _is_training_step(graph) and into_backward else _ORDER_CHANGE


def _is_training_step(graph: Graph) -> bool:
    """Whether `graph` is a recorded training step: it holds optimizer state."""
    return any(buffer.kind == "optimizer_state" for buffer in graph.buffers)


def _serial_lever(graph: Graph, conflicts: str, chosen: Plan,
                  cancel: CancelToken) -> list[Lever]:
    """Under the dag model, the chosen placer's slab under the serial model (the order shown),
    in request order, against the chosen plan's; search's plan is set against first fit's
    (absent under the serial model, and on a chain, where the models agree)."""
    if conflicts != "dag" or fixed_reason(graph) is not None:
        return []
    cancel.check()
    placer = chosen.algorithm if chosen.algorithm in GREEDY else "first-fit"
    with paused_collection():
        serial = GREEDY[placer](graph, conflict_model(graph, "serial"),
                                 graph.request_order(None), None, 0.0, cancel=cancel)
    return [Lever("serial", serial.slab_bytes, chosen.slab_bytes - serial.slab_bytes,
                  f"{placer} under the serial model (the ops one at a time in the order shown) "
                  f"against {chosen.algorithm}'s slab under the dag model (any order the DAG "
                  f"allows)",
                  "run the ops one at a time in the order shown (one stream) and plan under "
                  "serial conflicts (slabscope plan --conflicts serial)")]


def _packing_lever(graph: Graph, model, chosen, budget: float, seed: int,
                   cancel: CancelToken) -> list[Lever]:
    """Search's slab against the chosen placer's, under the same conflict model."""
    cancel.check()
    with paused_collection():
        steps = default_iterations(graph, model)
        found = search(graph, model, graph.request_order(None), None, budget, cancel=cancel,
                       seed=seed, iterations=steps)
    done = f"{found.iterations:,} steps" if found.iterations is not None else "its budget"
    return [Lever("packing", found.slab_bytes, chosen.slab_bytes - found.slab_bytes,
                  f"search (seed {seed}, {done}) against {chosen.algorithm}'s slab",
                  "place the buffers at search's offsets (slabscope plan --algorithm search)")]


def _allocator_lever(graph: Graph, reserved: int, cancel: CancelToken) -> list[Lever]:
    """The caching allocator's reserved peak with expandable segments against the default."""
    cancel.check()
    expandable = replay_graph(graph, AllocatorSettings(expandable_segments=True))
    return [Lever("allocator", expandable.peak_reserved_bytes,
                  reserved - expandable.peak_reserved_bytes,
                  "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, against the default "
                  "settings' reserved peak (the allocator model, same order)",
                  "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")]


def _in_place_lever(graph: Graph, peak: LivePeak, conflicts: str, slab: int, bound: int,
                    cancel: CancelToken) -> list[Lever]:
    """The in-place rule's rewrite re-planned (first fit in request order, same conflict model):
    its live peak, lower bound and slab against the graph's (absent where the rule merges
    nothing)."""
    cancel.check()
    shared = in_place(graph)
    if not shared.merged:
        return []
    rewritten = shared.graph
    after_peak = live_peak(rewritten)
    with paused_collection():
        model = conflict_model(rewritten, conflicts)
        after_slab = first_fit(rewritten, model, rewritten.request_order(None), None, 0.0,
                               cancel=cancel).slab_bytes
        after_bound = model.lower_bound(cancel).bytes
    figures = (("live peak", peak.bytes, after_peak.bytes), ("lower bound", bound, after_bound),
               ("slab", slab, after_slab))
    return [Lever("in place", after_peak.bytes, peak.bytes - after_peak.bytes,
                  f"the in-place rule on {len(shared.merged)} pointwise outputs, re-planned "
                  f"(first fit, {conflicts}): " + ", ".join(
                      f"{name} {before:,} -> {after:,} B" for name, before, after in figures),
                  _in_place_change(graph, shared.merged), figures)]


def _in_place_change(graph: Graph, merged) -> str:
    """What to change for the in-place lever: `inplace=True` on the merged outputs' ops that a
    module runs; a recorded step's backward and optimizer ops run out of place in eager PyTorch,
    whatever its modules say: those are named apart, for a runtime or compiler to write in place."""
    producer = {b: n for n in graph.nodes for b in n.outputs}
    forward: set[str] = set()
    autograd: set[str] = set()  # a step's backward and optimizer ops
    for b in merged:
        node = producer.get(b)
        if node is None:
            forward.add(b)
        elif node.attrs.get("phase") in ("backward", "optimizer"):
            autograd.add(node.op or node.name)
        else:
            forward.add(node.op or node.name)
    parts = []
    if forward:
        parts.append(f"inplace=True on these ops ({_listed(forward)})")
    if autograd:
        parts.append(f"in-place kernels for these backward and optimizer ops ({_listed(autograd)})")
    return "; ".join(parts) + ", or slabscope plan --inplace"


def _listed(ops: set[str]) -> str:
    """Up to six op names, sorted, and how many more."""
    names = sorted(ops)
    return ", ".join(names[:6]) + (f" and {len(names) - 6} more" if len(names) > 6 else "")


__all__ = ["DEFAULT_LEVER_BUDGET", "Explanation", "Lever", "explain"]
