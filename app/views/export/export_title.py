"""The title line of an exported picture: which file, how it was planned, and how good the plan
is, so that a picture read on its own says what it shows."""

from __future__ import annotations

from slabscope.app.views.common.byte_axis import format_bytes
from slabscope.app.views.common.peak_headline import graph_live_peak

# What search writes in a plan's proof when its budget in seconds stopped work its step limit
# still allowed (`planner.placement.search._stamped`).
BUDGET_CUT = "budget cut the work short"


def search_status(plan, provisional: bool) -> str | None:
    """What a picture must say about how a search plan was found: "provisional" for search's
    best so far while it still runs, or that the budget cut the search short (from what the
    plan records); None for a plan whose work ran to its end."""
    if provisional:  # the steps search had finished when it offered this plan
        done = f" after {plan.iterations:,} steps" if plan.iterations else ""
        return f"provisional (best so far{done}; search continues)"
    clauses = (plan.proof or "").split("; ")
    cut = next((c for c in clauses if BUDGET_CUT in c), None)
    if cut is None:
        return None
    # "the 2 s budget cut the work short after 1,234 steps" -> "search cut short by the 2 s
    # budget after 1,234 steps"
    return "search cut short by " + cut.replace(BUDGET_CUT, "budget", 1)


def export_title(session) -> str:
    """"file · algorithm · conflicts · live peak · slab · bound · gap" for the plan `session`
    shows (docs/peak.md's words), then whether that plan is out of date, provisional or cut
    short by the search budget."""
    graph, plan = session.graph, session.shown_plan
    name = session.path.name if session.path is not None else (graph.name if graph else "")
    if graph is None or plan is None:
        return f"{name} · no plan" if name else "no graph"
    live = graph_live_peak(graph)
    parts = [name, plan.algorithm, f"{plan.conflict_model} conflicts",
             f"live peak {format_bytes(live.bytes)} at step {live.step:,}",
             f"slab {format_bytes(plan.slab_bytes)}"]
    bound = session.lower_bound()
    if bound is not None:
        gap = plan.slab_bytes - bound.bytes
        share = gap / bound.bytes if bound.bytes else 0.0
        parts += [f"bound {format_bytes(bound.bytes)}", f"gap {format_bytes(gap)} ({share:.1%})"]
    if session.plan_stale:
        parts.append("out of date")
    status = search_status(plan, session.plan_provisional)
    if status is not None:
        parts.append(status)
    return " · ".join(parts)
